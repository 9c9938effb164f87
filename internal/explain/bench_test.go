package explain

import (
	"context"
	"fmt"
	"testing"

	v1 "k8s.io/api/core/v1"

	"github.com/kubectl-sched/kubectl-sched/internal/snapshot"
	st "github.com/kubectl-sched/kubectl-sched/schedcore/schedtest"
)

// bigCluster generates n nodes in three zones (one in ten tainted, one in
// fifty cordoned) with four running pods each, some spread by app label.
func bigCluster(n int) *snapshot.Cluster {
	cl := &snapshot.Cluster{}
	for i := 0; i < n; i++ {
		name := fmt.Sprintf("node-%05d", i)
		nw := node(name).Label(zone, fmt.Sprintf("zone-%d", i%3)).Capacity("cpu", "16", "memory", "64Gi", "pods", "110")
		if i%10 == 0 {
			nw = nw.Taint("dedicated", "batch", v1.TaintEffectNoSchedule)
		}
		if i%50 == 0 {
			nw = nw.Unschedulable()
		}
		cl.Nodes = append(cl.Nodes, nw.Obj())
		for j := 0; j < 4; j++ {
			p := st.MakePod(fmt.Sprintf("p-%05d-%d", i, j)).Namespace("bench").Label("app", fmt.Sprintf("app-%d", (i+j)%20)).
				Req("cpu", fmt.Sprintf("%dm", 500+250*((i+j)%9)), "memory", fmt.Sprintf("%dMi", 512*(1+(i*j)%7))).Node(name)
			cl.Pods = append(cl.Pods, p.Obj())
		}
	}
	return cl
}

// BenchmarkExplain5000Nodes explains one pod on a generated 5000-node,
// 20000-pod cluster already loaded into the engine (the per-pod cost, to
// compare with the dry-run's): the cycle with every node filtered and
// scored, the diagnosis of every rejected node, the gaps of the nearest.
func BenchmarkExplain5000Nodes(b *testing.B) {
	cl := bigCluster(5000)
	o := options(b)
	s, err := NewState(context.Background(), cl, o)
	if err != nil {
		b.Fatal(err)
	}
	for _, name := range []string{"fits", "unschedulable", "bound"} {
		pod := benchPods[name]
		if name == "bound" {
			pod = cl.Pods[1234]
		}
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				if _, err := s.Explain(context.Background(), pod); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkExplainRun5000Nodes is the end-to-end cost from loaded objects:
// building the cache and snapshot once, then explaining.
func BenchmarkExplainRun5000Nodes(b *testing.B) {
	cl := bigCluster(5000)
	o := options(b)
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if _, err := Run(context.Background(), cl, benchPods["fits"], o); err != nil {
			b.Fatal(err)
		}
	}
}

var benchPods = map[string]*v1.Pod{
	"fits":          st.MakePod("web").Namespace("bench").Label("app", "app-1").Req("cpu", "1", "memory", "1Gi").SpreadConstraint(1, zone, v1.ScheduleAnyway, map[string]string{"app": "app-1"}, nil).Obj(),
	"unschedulable": st.MakePod("huge").Namespace("bench").Req("cpu", "15", "memory", "60Gi").Obj(),
}
