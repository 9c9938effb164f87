package conformance

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kubectl-sched/kubectl-sched/internal/dryrun"
	"github.com/kubectl-sched/kubectl-sched/internal/report"
	"github.com/kubectl-sched/kubectl-sched/internal/snapshot"
)

// preemptFile is what hack/kubebench -preemption writes: the real
// kube-scheduler's own loop (queue, PostFilter with DefaultPreemption,
// binding) run to quiescence on a fake clientset.
type preemptFile struct {
	Placements []struct{ Pod, Node string } `json:"placements"`
	Evictions  []report.Eviction            `json:"evictions"`
	// Nominations are the nominatedNodeName values patched, by pod.
	Nominations   []report.Nomination `json:"nominations"`
	Unschedulable []struct {
		Pod     string `json:"pod"`
		Message string `json:"message"`
	} `json:"unschedulable"`
}

// TestKubebenchPreemption compares the dry-run with preemption on to the
// real kube-scheduler's outcome recorded by hack/kubebench -preemption:
// the same pods placed on the same nodes, the same victims evicted from
// the same nodes for the same preemptors, the same nominations, and the
// same messages (the "preemption: ..." part included) for the pods left.
// kube evicts the victims of one preemption in parallel and its binding
// order follows backoff timing, so placements, evictions and nominations
// are compared as sorted lists: the outcome is exact, the interleaving
// is not compared.
func TestKubebenchPreemption(t *testing.T) {
	cases := preemptionRefs
	cfg, reg := defaultEngine(t)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cl, err := snapshot.LoadPaths([]string{c.snapshot}, nil)
			if err != nil {
				t.Fatal(err)
			}
			b, err := os.ReadFile(filepath.Join("../../testdata/kubebench", c.want))
			if err != nil {
				t.Fatal(err)
			}
			var want preemptFile
			if err := json.Unmarshal(b, &want); err != nil {
				t.Fatal(err)
			}
			rep, err := dryrun.Run(context.Background(), cl, dryrun.Options{Config: cfg, Registry: reg})
			if err != nil {
				t.Fatal(err)
			}

			var wantPlaced, gotPlaced []string
			for _, p := range want.Placements {
				wantPlaced = append(wantPlaced, p.Pod+" -> "+p.Node)
			}
			for _, p := range rep.Placements {
				gotPlaced = append(gotPlaced, p.Pod+" -> "+p.Node)
			}
			if diff := cmp.Diff(sorted(wantPlaced), sorted(gotPlaced)); diff != "" {
				t.Errorf("placements (-kube +dryrun):\n%s", diff)
			}
			var wantEv, gotEv []string
			for _, e := range want.Evictions {
				wantEv = append(wantEv, e.Pod+" from "+e.Node+" for "+e.Preemptor)
			}
			for _, e := range rep.Evictions {
				gotEv = append(gotEv, e.Pod+" from "+e.Node+" for "+e.Preemptor)
			}
			if diff := cmp.Diff(sorted(wantEv), sorted(gotEv)); diff != "" {
				t.Errorf("evictions (-kube +dryrun):\n%s", diff)
			}
			var wantNom, gotNom []string
			for _, n := range want.Nominations {
				wantNom = append(wantNom, n.Pod+" -> "+n.Node)
			}
			for _, n := range rep.Nominations {
				gotNom = append(gotNom, n.Pod+" -> "+n.Node)
			}
			if diff := cmp.Diff(sorted(wantNom), sorted(gotNom)); diff != "" {
				t.Errorf("nominations (-kube +dryrun):\n%s", diff)
			}
			wantMsg, gotMsg := map[string]string{}, map[string]string{}
			for _, u := range want.Unschedulable {
				wantMsg[u.Pod] = u.Message
			}
			for _, u := range rep.Unschedulable {
				gotMsg[u.Pod] = u.Message
			}
			if diff := cmp.Diff(wantMsg, gotMsg); diff != "" {
				t.Errorf("unschedulable messages (-kube +dryrun):\n%s", diff)
			}
		})
	}
}

func sorted(s []string) []string {
	out := append([]string{}, s...)
	sort.Strings(out)
	return out
}
