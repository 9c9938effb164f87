package replay_test

import (
	"testing"

	"github.com/kubectl-sched/kubectl-sched/internal/gen/openb"
	"github.com/kubectl-sched/kubectl-sched/internal/replay"
)

// BenchmarkReplayOpenbDefault replays the whole openb default trace (6282
// pods, 1523 nodes, with departures): issue #16 asks for under 10 s on 2
// cores.
func BenchmarkReplayOpenbDefault(b *testing.B) {
	tr, err := replay.FromOpenb(openbNodes, openbPods, openb.Options{})
	if err != nil {
		b.Fatal(err)
	}
	o := defaults(b)
	for b.Loop() {
		res := mustRun(b, tr, o)
		if res.Summary.Placed < 6000 {
			b.Fatalf("placed %d", res.Summary.Placed)
		}
	}
}
