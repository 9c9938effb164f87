package drain

import (
	"context"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/utils/ptr"

	"github.com/kubectl-sched/kubectl-sched/internal/engine"
	"github.com/kubectl-sched/kubectl-sched/internal/report"
	"github.com/kubectl-sched/kubectl-sched/internal/snapshot"
	st "github.com/kubectl-sched/kubectl-sched/schedcore/schedtest"
)

func options(t *testing.T) Options {
	t.Helper()
	cfg, err := engine.LoadConfig("")
	if err != nil {
		t.Fatal(err)
	}
	reg, err := engine.Registry(nil)
	if err != nil {
		t.Fatal(err)
	}
	return Options{Config: cfg, Registry: reg}
}

func node(name, cpu string) *v1.Node {
	return st.MakeNode(name).Capacity("cpu", cpu, "memory", "16Gi", "pods", "20").Obj()
}

func rsPod(name, node, cpu string, created int64) *v1.Pod {
	return ready(owned(st.MakePod(name).Namespace("default").Label("app", "web").Req("cpu", cpu).Node(node).Created(created).Obj(), "apps/v1", "ReplicaSet", "web"))
}

func moves(r *report.Drain) []string {
	var out []string
	for _, m := range r.Moves {
		to := m.To
		if to == "" {
			to = "<pending>"
		}
		out = append(out, m.Pod+" -> "+to)
	}
	return out
}

// Recreated pods are placed in kube's queue order: priority, then
// creationTimestamp, then name; the one that fits nowhere stays pending
// with kube's message.
func TestMovesInQueueOrder(t *testing.T) {
	cl := &snapshot.Cluster{
		Nodes: []*v1.Node{node("old", "8"), node("new", "3")},
		Pods: []*v1.Pod{
			rsPod("late", "old", "1", 30),
			rsPod("early", "old", "1", 10),
			func() *v1.Pod { p := rsPod("urgent", "old", "1", 50); p.Spec.Priority = ptr.To[int32](1000); return p }(),
			rsPod("also-early", "old", "1", 10),
		},
	}
	r, err := Run(context.Background(), cl, []string{"old"}, options(t))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"default/urgent -> new", "default/also-early -> new", "default/early -> new", "default/late -> <pending>"}
	if d := cmp.Diff(want, moves(r)); d != "" {
		t.Errorf("moves (-want +got):\n%s", d)
	}
	if msg := r.Moves[3].Reason; msg != "0/2 nodes are available: 1 Insufficient cpu, 1 node(s) were unschedulable. preemption: 0/2 nodes are available: 1 No preemption victims found for incoming pod, 1 Preemption is not helpful for scheduling." {
		t.Errorf("pending reason = %q", msg)
	}
	if r.Complete || r.Summary.Pending != 1 || r.Summary.Placed != 3 || r.Summary.Evicted != 4 {
		t.Errorf("summary %+v complete %v", r.Summary, r.Complete)
	}
	if r.Moves[0].Controller != "ReplicaSet/web" {
		t.Errorf("controller = %q", r.Moves[0].Controller)
	}
}

// A budget at zero keeps its pod where it is; the report names it.
func TestBudgetsKeepPods(t *testing.T) {
	web := map[string]string{"app": "web"}
	cl := &snapshot.Cluster{
		Nodes: []*v1.Node{node("old", "8"), node("new", "8")},
		Pods:  []*v1.Pod{rsPod("a", "old", "1", 1), rsPod("b", "old", "1", 2), rsPod("c", "new", "1", 3)},
		PDBs:  []*policyv1.PodDisruptionBudget{pdb("web", web, policyv1.PodDisruptionBudgetStatus{DisruptionsAllowed: 1, CurrentHealthy: 3, DesiredHealthy: 2, ExpectedPods: 3})},
	}
	r, err := Run(context.Background(), cl, []string{"old"}, options(t))
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff([]string{"default/a -> new"}, moves(r)); d != "" {
		t.Errorf("moves (-want +got):\n%s", d)
	}
	want := []report.Refused{{Pod: "default/b", Node: "old", Code: 429, Budget: "default/web",
		Message: "Cannot evict pod as it would violate the pod's disruption budget.", Cause: "The disruption budget web does not allow evicting pods currently"}}
	if d := cmp.Diff(want, r.Refused); d != "" {
		t.Errorf("refused (-want +got):\n%s", d)
	}
	if r.Complete {
		t.Error("complete with a refused eviction")
	}
	var old report.NodeUsage
	for _, u := range r.Utilisation {
		if u.Node == "old" {
			old = u
		}
	}
	if old.PodsBefore != 2 || old.PodsAfter != 1 || old.Before["cpu"] != 2000 || old.After["cpu"] != 1000 {
		t.Errorf("old node utilisation = %+v", old)
	}
}

// DaemonSet and mirror pods stay; with --delete they go with the node and
// nothing else schedules onto it.
func TestDaemonSetsMirrorsAndDelete(t *testing.T) {
	ds := ready(owned(st.MakePod("agent").Namespace("kube-system").Req("cpu", "100m").Node("old").Obj(), "apps/v1", "DaemonSet", "agent"))
	mirror := ready(st.MakePod("etcd").Namespace("kube-system").Node("old").Obj())
	mirror.Annotations = map[string]string{v1.MirrorPodAnnotationKey: "x"}
	cl := &snapshot.Cluster{Nodes: []*v1.Node{node("old", "8"), node("new", "8")}, Pods: []*v1.Pod{ds, mirror, rsPod("a", "old", "1", 1)}}
	for _, del := range []bool{false, true} {
		o := options(t)
		o.Delete = del
		r, err := Run(context.Background(), cl, []string{"old"}, o)
		if err != nil {
			t.Fatal(err)
		}
		if len(r.Stay) != 2 || !r.Complete || len(r.Moves) != 1 || r.Moves[0].To != "new" {
			t.Errorf("delete=%v: stay %+v moves %+v complete %v", del, r.Stay, r.Moves, r.Complete)
		}
		for _, u := range r.Utilisation {
			if u.Node == "old" && (u.PodsAfter == 0) != del {
				t.Errorf("delete=%v: old node after = %d pods", del, u.PodsAfter)
			}
		}
	}
}

func TestUnmanagedPods(t *testing.T) {
	bare := ready(st.MakePod("debug").Namespace("default").Node("old").Obj())
	bare.Spec.Volumes = []v1.Volume{{Name: "scratch", VolumeSource: v1.VolumeSource{EmptyDir: &v1.EmptyDirVolumeSource{}}}}
	cl := &snapshot.Cluster{Nodes: []*v1.Node{node("old", "8"), node("new", "8")}, Pods: []*v1.Pod{bare, rsPod("a", "old", "1", 1)}}
	r, err := Run(context.Background(), cl, []string{"old"}, options(t))
	if err != nil {
		t.Fatal(err)
	}
	// kubectl drain refuses the whole node: nothing is evicted.
	if r.Nodes[0].Drained || len(r.Moves) != 0 || len(r.Refused) != 2 || r.Complete {
		t.Errorf("without --force: nodes %+v moves %+v refused %+v", r.Nodes, r.Moves, r.Refused)
	}
	o := options(t)
	o.Force = true
	if r, err = Run(context.Background(), cl, []string{"old"}, o); err != nil {
		t.Fatal(err)
	}
	want := []report.PodNote{{Pod: "default/debug", Node: "old", Reason: "deleting Pods that declare no controller: nothing recreates it", LocalStorage: true}}
	if d := cmp.Diff(want, r.Lost); d != "" || len(r.Moves) != 1 || r.Complete {
		t.Errorf("with --force: lost (-want +got):\n%s moves %+v", d, r.Moves)
	}
}

func TestUnknownNode(t *testing.T) {
	cl := &snapshot.Cluster{Nodes: []*v1.Node{node("a", "1")}}
	if _, err := Run(context.Background(), cl, []string{"b"}, options(t)); !errors.Is(err, ErrUnknownNode) {
		t.Errorf("error = %v, want ErrUnknownNode", err)
	}
}

// The cluster given is not modified.
func TestRunLeavesTheClusterAlone(t *testing.T) {
	p := rsPod("a", "old", "1", 1)
	n := node("old", "8")
	cl := &snapshot.Cluster{Nodes: []*v1.Node{n, node("new", "8")}, Pods: []*v1.Pod{p}}
	before := p.DeepCopy()
	nodeBefore := n.DeepCopy()
	if _, err := Run(context.Background(), cl, []string{"old"}, options(t)); err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(before, p); d != "" {
		t.Errorf("pod changed:\n%s", d)
	}
	if d := cmp.Diff(nodeBefore, n); d != "" {
		t.Errorf("node changed:\n%s", d)
	}
}
