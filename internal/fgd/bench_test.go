package fgd

import (
	"context"
	"testing"
)

// BenchmarkRunOpenb replays one seed of the paper's workload on the whole
// openb default trace (1213 GPU nodes, about 10800 pods) with each row's
// policy: an 80-run sweep costs about the sum of the rows' times, ten times
// over, shared between the cores (docs/fgd.md, "Speed").
func BenchmarkRunOpenb(b *testing.B) {
	tr, err := LoadTrace("../../testdata/openb/openb_node_list_all_node.csv", "../../testdata/openb/openb_pod_list_default.csv")
	if err != nil {
		b.Fatal(err)
	}
	policies, err := Policies(tr.Typical)
	if err != nil {
		b.Fatal(err)
	}
	for _, p := range policies {
		b.Run(p.Name, func(b *testing.B) {
			var pods int
			for b.Loop() {
				r, err := RunOne(context.Background(), tr, p, 42, 1.3, 1)
				if err != nil {
					b.Fatal(err)
				}
				pods += r.Pods
			}
			b.ReportMetric(float64(pods)/b.Elapsed().Seconds(), "pods/s")
		})
	}
}
