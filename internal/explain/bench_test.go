package explain

import (
	"context"
	"testing"

	v1 "k8s.io/api/core/v1"

	"github.com/kubectl-sched/kubectl-sched/internal/gen/workload"
	"github.com/kubectl-sched/kubectl-sched/internal/snapshot"
)

// mixedCluster is internal/gen/workload's mixed cluster: 5000 nodes in three
// zones (general, compute, memory, spot, tainted arm64 and GPU pools,
// cordoned nodes), 10000 running pods and 100 pending ones using every
// feature the default profile filters or scores.
func mixedCluster() (*snapshot.Cluster, []*v1.Pod) {
	w := workload.Mixed(workload.MixedParams{Nodes: 5000, Pending: 100, Seed: 1})
	cl := &snapshot.Cluster{Nodes: w.Nodes, Namespaces: w.Namespaces, Services: w.Services}
	cl.Pods = append(append(cl.Pods, w.Existing...), w.Pending...)
	return cl, w.Pending
}

// BenchmarkExplain5000Nodes explains one pod on the mixed 5000-node
// cluster already loaded into the engine (the per-pod cost, to compare with
// the dry-run's): the cycle with every node filtered and scored, the
// diagnosis of every rejected node, the gaps of the nearest ones. "fits" is
// the first pending pod, "unschedulable" the first that fits nowhere,
// "bound" a running pod explained as if pending.
func BenchmarkExplain5000Nodes(b *testing.B) {
	cl, pending := mixedCluster()
	ctx := context.Background()
	s, err := NewState(ctx, cl, options(b))
	if err != nil {
		b.Fatal(err)
	}
	pods := map[string]*v1.Pod{"bound": cl.Pods[1234]}
	for _, p := range pending {
		rep, err := s.Explain(ctx, p)
		if err != nil {
			b.Fatal(err)
		}
		if rep.NumFeasible > 0 && pods["fits"] == nil {
			pods["fits"] = p
		}
		if rep.NumFeasible == 0 && pods["unschedulable"] == nil {
			pods["unschedulable"] = p
		}
	}
	for _, name := range []string{"fits", "unschedulable", "bound"} {
		pod := pods[name]
		if pod == nil {
			b.Fatalf("no %s pod in the workload", name)
		}
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				if _, err := s.Explain(ctx, pod); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkExplainRun5000Nodes is the end-to-end cost from loaded objects:
// building the cache and snapshot, then explaining one pod.
func BenchmarkExplainRun5000Nodes(b *testing.B) {
	cl, pending := mixedCluster()
	o := options(b)
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if _, err := Run(context.Background(), cl, pending[0], o); err != nil {
			b.Fatal(err)
		}
	}
}
