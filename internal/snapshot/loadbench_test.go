package snapshot

import (
	"os"
	"testing"
)

// BenchmarkLoadDump loads the dump named by KUBECTL_SCHED_DUMP (a
// 5000-node one: hack/bench's Mixed/5000Nodes written by 'snapshot').
func BenchmarkLoadDump(b *testing.B) {
	path := os.Getenv("KUBECTL_SCHED_DUMP")
	if path == "" {
		b.Skip("KUBECTL_SCHED_DUMP not set")
	}
	for b.Loop() {
		if _, err := LoadPaths([]string{path}, nil); err != nil {
			b.Fatal(err)
		}
	}
}
