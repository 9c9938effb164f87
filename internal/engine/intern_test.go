package engine

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"

	"github.com/kubectl-sched/kubectl-sched/internal/snapshot"
	"github.com/kubectl-sched/kubectl-sched/schedcore/schedtest"
)

// Intern shares the equal parts of a cluster's pods and nodes in place
// (the replay's trace): every object marshals as before, the replicas'
// labels and containers are one map and one list, and a pod that differs
// keeps its own.
func TestInternSharesAClustersEqualParts(t *testing.T) {
	mk := func(name, cpu string) *v1.Pod {
		return schedtest.MakePod(name).Namespace("ns").Label("app", "a").Req("cpu", cpu).Node("n1").Obj()
	}
	cl := &snapshot.Cluster{
		Pods:  []*v1.Pod{mk("a", "1"), mk("b", "1"), mk("c", "2")},
		Nodes: []*v1.Node{schedtest.MakeNode("n1").Capacity("cpu", "4").Obj(), schedtest.MakeNode("n2").Capacity("cpu", "4").Obj()},
	}
	objects := func() [][]byte {
		var out [][]byte
		for _, p := range cl.Pods {
			out = append(out, marshalObject(t, p))
		}
		for _, n := range cl.Nodes {
			out = append(out, marshalObject(t, n))
		}
		return out
	}
	want := objects()
	Intern(cl)
	if diff := cmp.Diff(want, objects()); diff != "" {
		t.Errorf("objects changed (-want +got):\n%s", diff)
	}
	a, b, c := cl.Pods[0], cl.Pods[1], cl.Pods[2]
	if reflect.ValueOf(a.Labels).Pointer() != reflect.ValueOf(c.Labels).Pointer() || &a.Spec.Containers[0] != &b.Spec.Containers[0] {
		t.Error("the replicas' labels or containers are not shared")
	}
	if &a.Spec.Containers[0] == &c.Spec.Containers[0] {
		t.Error("a pod asking for more cpu shares the others' containers")
	}
	if reflect.ValueOf(cl.Nodes[0].Status.Capacity).Pointer() != reflect.ValueOf(cl.Nodes[1].Status.Capacity).Pointer() {
		t.Error("equal node capacities are not shared")
	}
}

func marshalObject(t *testing.T, o any) []byte {
	t.Helper()
	data, err := json.Marshal(o)
	if err != nil {
		t.Fatal(err)
	}
	return data
}
