package engine

import (
	"context"
	"slices"

	"testing"

	"github.com/google/go-cmp/cmp"

	v1 "k8s.io/api/core/v1"
	schedulingv1beta1 "k8s.io/api/scheduling/v1beta1"
	"k8s.io/apimachinery/pkg/api/resource"
	apimeta "k8s.io/apimachinery/pkg/apis/meta/v1"
	configv1 "k8s.io/kube-scheduler/config/v1"

	"github.com/kubectl-sched/kubectl-sched/internal/snapshot"
)

// The queueing rows of docs/design/workloads.md §6 (G14–G19, G21), from
// kube v1.37's test/integration/scheduler/podgroup/queueing/queueing_test.go
// (QT) and podgroup_pvc_test.go: kube's steps (create, one scheduling
// attempt, wait for a pod in a queue) as offline runs, one cycle at a time
// where kube runs ScheduleOne. Pods request cpu 2 unless the row says
// otherwise; QT's node has cpu 2.

// scheduleOne runs one scheduling cycle (kube's RunScheduleOne step).
func (r *cycleRun) scheduleOne(t *testing.T) {
	t.Helper()
	qpi, ok := r.c.Queue.TryPop(r.c.Options.Logger)
	if !ok {
		t.Fatal("nothing to pop")
	}
	r.c.Scheduler.ScheduleOnePod(context.Background(), qpi)
	r.c.Clock.Step(cycleTime)
}

// where says where a pod is: its node, or the queue part holding it
// (active, backoff, unschedulable, pending — pendingPodGroupPods —,
// incomplete — incompletePodGroupPods —), or "-".
func (r *cycleRun) where(name string) string {
	if p, ok := r.c.Pod("ns", name); ok && p.Spec.NodeName != "" {
		return p.Spec.NodeName
	}
	q := r.c.Queue
	for _, part := range []struct {
		name string
		pods []*v1.Pod
	}{{"active", q.PodsInActiveQ()}, {"backoff", q.PodsInBackoffQ()}, {"unschedulable", q.UnschedulablePods()},
		{"pending", q.PendingPodGroupPods()}, {"incomplete", q.IncompletePodGroupPods()}} {
		if slices.ContainsFunc(part.pods, func(p *v1.Pod) bool { return p.Name == name }) {
			return part.name
		}
	}
	return "-"
}

func (r *cycleRun) expectWhere(t *testing.T, step string, want map[string]string) {
	t.Helper()
	for name, w := range want {
		if got := r.where(name); got != w {
			t.Errorf("%s: %s is %s, want %s (messages %v)", step, name, got, w, r.msgs)
		}
	}
}

// expectFailed checks that each pod had a failed attempt (kube's
// WaitForPodsUnschedulable: the PodScheduled=False condition).
func (r *cycleRun) expectFailed(t *testing.T, step string, names ...string) {
	t.Helper()
	for _, n := range names {
		if _, ok := r.msgs[n]; !ok {
			t.Errorf("%s: %s was not reported unschedulable", step, n)
		}
	}
}

func noBackoff(cfg *configv1.KubeSchedulerConfiguration) {
	zero := int64(0)
	cfg.PodInitialBackoffSeconds, cfg.PodMaxBackoffSeconds = &zero, &zero
}

func qtCluster(nodes []*v1.Node, pg *schedulingv1beta1.PodGroup, pods ...cyclePod) *snapshot.Cluster {
	cl := &snapshot.Cluster{Nodes: nodes}
	if pg != nil {
		cl.Workloads.PodGroups = []*schedulingv1beta1.PodGroup{pg}
	}
	for _, p := range pods {
		cl.Pods = append(cl.Pods, p.obj())
	}
	return cl
}

func big(name string, created int) cyclePod {
	return cyclePod{name: name, group: "pg", cpu: "2", created: created}
}

// TestPodGroupQueueingSequentialRows: QT's TestPodGroupSequentialQueueing
// (backoff 0): a failed group is retried at once, never parked.
func TestPodGroupQueueingSequentialRows(t *testing.T) {
	node := []*v1.Node{offlineNode("node", "2")}
	t.Run("G14 gang fails and retries without any cluster change", func(t *testing.T) {
		r := newCycleRun(t, false, qtCluster(node, podGroup("pg", 2, ""), big("p1", 1), big("p2", 2)), noBackoff)
		r.expectWhere(t, "before", map[string]string{"p1": "active", "p2": "active"})
		r.scheduleOne(t)
		r.expectFailed(t, "after the attempt", "p1", "p2")
		r.expectWhere(t, "after the attempt", map[string]string{"p1": "active", "p2": "active"})
	})
	t.Run("G15 basic group partially fails and retries without any cluster change", func(t *testing.T) {
		r := newCycleRun(t, false, qtCluster(node, podGroup("pg", 0, ""), big("p1", 1), big("p2", 2)), noBackoff)
		r.expectWhere(t, "before", map[string]string{"p1": "active", "p2": "active"})
		r.scheduleOne(t)
		r.expectFailed(t, "after the attempt", "p2")
		r.expectWhere(t, "after the attempt", map[string]string{"p1": "node", "p2": "active"})
	})
}

// TestPodGroupQueueingRows: QT's TestPodGroupQueueing rows. kube runs them
// with backoff 0 only to make its waits short; the rows that run to
// quiescence keep the default backoff (with 0 a failing group would be
// retried until the run's idle limit).
func TestPodGroupQueueingRows(t *testing.T) {
	node := func() *v1.Node { return offlineNode("node", "2") }
	node2 := func() *v1.Node { return offlineNode("node2", "6") }

	// QT:245/274: kube injects p3 from a PreFilter plugin while p1 is
	// scheduled; here p3 arrives after the group was popped and before its
	// cycle (the group is in flight either way).
	for _, tc := range []struct {
		name        string
		schedulable bool
	}{{"G16 member added mid-cycle, buffered and retried after an unschedulable attempt", false},
		{"G16 member added mid-cycle, buffered and retried after a schedulable attempt", true}} {
		t.Run(tc.name, func(t *testing.T) {
			nodes := []*v1.Node{node()}
			if tc.schedulable {
				nodes = append(nodes, node2())
			}
			r := newCycleRun(t, false, qtCluster(nodes, podGroup("pg", 2, ""), big("p1", 1), big("p2", 2)), nil)
			qpi, ok := r.c.Queue.TryPop(r.c.Options.Logger)
			if !ok || qpi.Group == nil {
				t.Fatalf("popped %v, want the group", qpi)
			}
			mustAdd(t, r.c, big("p3", 3))
			r.expectWhere(t, "p3 added mid-cycle", map[string]string{"p3": "pending"})
			r.c.Scheduler.ScheduleOnePod(context.Background(), qpi)
			r.c.Clock.Step(cycleTime)
			if tc.schedulable {
				r.run(t)
				for _, p := range []string{"p1", "p2", "p3"} {
					if got := r.where(p); got != "node2" {
						t.Errorf("%s on %s, want node2", p, got)
					}
				}
				return
			}
			r.run(t)
			r.expectFailed(t, "after the attempt", "p1", "p2", "p3")
			for _, p := range []string{"p1", "p2", "p3"} {
				if got := r.where(p); got == "node" || got == "node2" || got == "-" {
					t.Errorf("%s is %s, want queued", p, got)
				}
			}
			r.c.AddNode(node2())
			r.run(t)
			r.expectWhere(t, "node2 added", map[string]string{"p1": "node2", "p2": "node2", "p3": "node2"})
		})
	}

	t.Run("G17 single gated pod blocks the gang until ungated", func(t *testing.T) {
		gated := big("p1", 1)
		gated.mod = func(p *v1.Pod) { p.Spec.SchedulingGates = []v1.PodSchedulingGate{{Name: "foo-gate"}} }
		r := newCycleRun(t, false, qtCluster([]*v1.Node{node(), node2()}, podGroup("pg", 2, ""), gated), nil)
		r.run(t)
		r.expectWhere(t, "p1 created", map[string]string{"p1": "unschedulable"})
		mustAdd(t, r.c, big("p2", 2))
		mustAdd(t, r.c, big("p3", 3))
		r.run(t)
		r.expectWhere(t, "p2, p3 created", map[string]string{"p1": "unschedulable", "p2": "unschedulable", "p3": "unschedulable"})
		if r.c.Placements() != 0 {
			t.Errorf("%d placements while gated", r.c.Placements())
		}
		cur, _ := r.c.Pod("ns", "p1")
		ungated := cur.DeepCopy()
		ungated.Spec.SchedulingGates = nil
		if err := r.c.UpdatePending(ungated); err != nil {
			t.Fatal(err)
		}
		r.run(t)
		for _, p := range []string{"p1", "p2", "p3"} {
			if got := r.where(p); got != "node" && got != "node2" {
				t.Errorf("after ungating %s is %s, want bound", p, got)
			}
		}
	})

	t.Run("G18 gang partially scheduled, then the PodGroup deleted", func(t *testing.T) {
		r := newCycleRun(t, false, qtCluster([]*v1.Node{node()}, podGroup("pg", 2, ""),
			cyclePod{name: "p1", group: "pg", cpu: "1", created: 1}, cyclePod{name: "p2", group: "pg", cpu: "1", created: 2}, big("p3", 3)), nil)
		r.run(t)
		r.expectWhere(t, "scheduled", map[string]string{"p1": "node", "p2": "node"})
		r.expectFailed(t, "scheduled", "p3")
		r.c.DeletePodGroup("ns", "pg")
		r.expectWhere(t, "PodGroup deleted", map[string]string{"p3": "incomplete"})
	})
}

// TestPodGroupRequeueRemainingRow: G19, QT:1089
// (TestPodGroupRequeueRemainingOnSchedulingSuccess, backoff 10 s / 20 s):
// after a basic group's success its leftover member goes back to activeQ
// with the group's old timestamp, ahead of a newer pod of equal priority.
func TestPodGroupRequeueRemainingRow(t *testing.T) {
	zero := func(p *v1.Pod) { p.Spec.Priority = new(int32) }
	pg := podGroup("pg", 0, "")
	*pg.Spec.Priority = 0
	var pods []cyclePod
	for i, n := range []string{"pg-p1", "pg-p2", "pg-p3"} {
		pods = append(pods, cyclePod{name: n, group: "pg", cpu: "2", created: 1 + i, mod: zero})
	}
	pods = append(pods, cyclePod{name: "normal-priority-pod", cpu: "2", created: 10, mod: zero})
	r := newCycleRun(t, false, qtCluster([]*v1.Node{offlineNode("node", "4")}, pg, pods...), func(cfg *configv1.KubeSchedulerConfiguration) {
		ten, twenty := int64(10), int64(20)
		cfg.PodInitialBackoffSeconds, cfg.PodMaxBackoffSeconds = &ten, &twenty
	})
	r.expectWhere(t, "created", map[string]string{"pg-p1": "active", "pg-p2": "active", "pg-p3": "active", "normal-priority-pod": "active"})
	r.scheduleOne(t)
	r.expectWhere(t, "first attempt", map[string]string{"pg-p1": "node", "pg-p2": "node", "pg-p3": "active"})
	r.expectFailed(t, "first attempt", "pg-p3")
	r.c.AddNode(offlineNode("node3", "2"))
	r.scheduleOne(t)
	r.expectWhere(t, "node3 added", map[string]string{"pg-p3": "node3"})
	r.scheduleOne(t)
	r.expectFailed(t, "third attempt", "normal-priority-pod")
	if got := r.where("normal-priority-pod"); got == "node" || got == "node3" {
		t.Errorf("normal-priority-pod bound to %s", got)
	}
}

// TestPodGroupReadWriteOncePodRow: G21, podgroup_pvc_test.go:101 and :119
// (TestPodGroupSchedulingWithReadWriteOncePodPVC): the second member
// assumed in the cycle sees the first one's ReadWriteOncePod claim.
func TestPodGroupReadWriteOncePodRow(t *testing.T) {
	for _, tc := range []struct {
		name, second string
		want         map[string]string
		condition    string
	}{
		{"two pods sharing a ReadWriteOncePod PVC keep the group unschedulable", "pvc-1",
			map[string]string{"pvc-pod-1": "pending", "pvc-pod-2": "pending"}, "False/Unschedulable"},
		{"two pods with distinct ReadWriteOncePod PVCs are scheduled", "pvc-2",
			map[string]string{"pvc-pod-1": "node-1", "pvc-pod-2": "node-1"}, "True/Scheduled"},
	} {
		t.Run("G21 "+tc.name, func(t *testing.T) {
			pg := podGroup("pg", 2, "")
			*pg.Spec.Priority = 200
			withPVC := func(claim string) func(*v1.Pod) {
				return func(p *v1.Pod) {
					prio := int32(200)
					p.Spec.Priority = &prio
					p.Spec.Volumes = append(p.Spec.Volumes, v1.Volume{Name: "vol", VolumeSource: v1.VolumeSource{
						PersistentVolumeClaim: &v1.PersistentVolumeClaimVolumeSource{ClaimName: claim}}})
				}
			}
			pods := []cyclePod{{name: "pvc-pod-1", group: "pg", cpu: "1", created: 1, mod: withPVC("pvc-1")},
				{name: "pvc-pod-2", group: "pg", cpu: "1", created: 2, mod: withPVC(tc.second)}}
			cl := qtCluster([]*v1.Node{offlineNode("node-1", "2")}, pg, pods...)
			for _, claim := range slices.Compact([]string{"pvc-1", tc.second}) {
				pv, pvc := rwopClaim(claim)
				cl.PVs = append(cl.PVs, pv)
				cl.PVCs = append(cl.PVCs, pvc)
			}
			r := newCycleRun(t, false, cl, nil)
			r.run(t)
			got := r.outcome(pods)
			if diff := cmp.Diff(cycleOutcome{Pods: tc.want, Conditions: map[string]string{"pg": tc.condition}}, got); diff != "" {
				t.Errorf("outcome (-want +got):\n%s\nmessages: %v", diff, r.msgs)
			}
		})
	}
}

// rwopClaim is kube's createBoundRWOPPVC: a HostPath PV and a PVC bound to
// it, both ReadWriteOncePod.
func rwopClaim(name string) (*v1.PersistentVolume, *v1.PersistentVolumeClaim) {
	size := resource.MustParse("1Mi")
	dirOrCreate := v1.HostPathDirectoryOrCreate
	pv := &v1.PersistentVolume{ObjectMeta: apimeta.ObjectMeta{Name: "pv-ns-" + name}, Spec: v1.PersistentVolumeSpec{
		AccessModes:            []v1.PersistentVolumeAccessMode{v1.ReadWriteOncePod},
		Capacity:               v1.ResourceList{v1.ResourceStorage: size},
		PersistentVolumeSource: v1.PersistentVolumeSource{HostPath: &v1.HostPathVolumeSource{Path: "/mnt", Type: &dirOrCreate}},
	}}
	pvc := &v1.PersistentVolumeClaim{
		ObjectMeta: apimeta.ObjectMeta{Namespace: "ns", Name: name, Annotations: map[string]string{"pv.kubernetes.io/bind-completed": "true"}},
		Spec: v1.PersistentVolumeClaimSpec{VolumeName: pv.Name, AccessModes: []v1.PersistentVolumeAccessMode{v1.ReadWriteOncePod},
			Resources: v1.VolumeResourceRequirements{Requests: v1.ResourceList{v1.ResourceStorage: size}}},
	}
	return pv, pvc
}
