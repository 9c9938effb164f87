package live

import (
	"context"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	schedulingv1beta1 "k8s.io/api/scheduling/v1beta1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/kubectl-sched/kubectl-sched/internal/engine"
	"github.com/kubectl-sched/kubectl-sched/schedcore"
	schedruntime "github.com/kubectl-sched/kubectl-sched/schedcore/runtime"
	"github.com/kubectl-sched/kubectl-sched/schedcore/schedtest"
)

// call is one queue call the handlers made.
type call struct {
	Op    string // Add, Update, Delete, Move
	Pod   string // the pod added/updated/deleted
	Event string // Move: the event label
	// Old and New name the event's objects ("" for nil).
	Old, New string
	// PreCheck lists, for a Move with a pre-check, which of the probe
	// priorities it lets through.
	PreCheck []int32
}

// recordingQueue records the calls of the handlers; the rest of the
// interface is not used by them.
type recordingQueue struct {
	schedcore.SchedulingQueue
	calls []call
}

func (q *recordingQueue) Add(_ logr.Logger, p *v1.Pod) {
	q.calls = append(q.calls, call{Op: "Add", Pod: p.Name})
}

func (q *recordingQueue) Update(_ logr.Logger, _, p *v1.Pod) {
	q.calls = append(q.calls, call{Op: "Update", Pod: p.Name})
}

func (q *recordingQueue) Delete(p *v1.Pod) {
	q.calls = append(q.calls, call{Op: "Delete", Pod: p.Name})
}

func (q *recordingQueue) AddPodGroup(_ logr.Logger, pg *schedulingv1beta1.PodGroup) {
	q.calls = append(q.calls, call{Op: "AddPodGroup", Pod: pg.Name})
}

func (q *recordingQueue) UpdatePodGroup(_ logr.Logger, pg *schedulingv1beta1.PodGroup) {
	q.calls = append(q.calls, call{Op: "UpdatePodGroup", Pod: pg.Name})
}

func (q *recordingQueue) DeletePodGroup(_ logr.Logger, pg *schedulingv1beta1.PodGroup) {
	q.calls = append(q.calls, call{Op: "DeletePodGroup", Pod: pg.Name})
}

var probePriorities = []int32{-10, 0, 10, 100}

func (q *recordingQueue) MoveAllToActiveOrBackoffQueue(_ logr.Logger, e schedcore.ClusterEvent, oldObj, newObj any, pre func(*v1.Pod) bool) {
	c := call{Op: "Move", Event: e.Label(), Old: objName(oldObj), New: objName(newObj)}
	if pre != nil {
		c.PreCheck = []int32{}
		for _, p := range probePriorities {
			if pre(schedtest.MakePod("probe").Priority(p).Obj()) {
				c.PreCheck = append(c.PreCheck, p)
			}
		}
	}
	q.calls = append(q.calls, c)
}

func objName(o any) string {
	if o == nil {
		return ""
	}
	if m, ok := o.(metav1.Object); ok {
		return m.GetName()
	}
	return "?"
}

const profile = "kubectl-sched"

func testProfiles(t *testing.T) map[string]*schedruntime.Framework {
	t.Helper()
	cfg, err := engine.LoadConfig("")
	if err != nil {
		t.Fatal(err)
	}
	name := profile
	cfg.Profiles[0].SchedulerName = &name
	reg, err := engine.Registry(nil)
	if err != nil {
		t.Fatal(err)
	}
	ps, err := engine.BuildProfiles(context.Background(), engine.Options{Config: cfg, Registry: reg}, schedcore.NewEmptySnapshot(), engine.Driver{})
	if err != nil {
		t.Fatal(err)
	}
	return ps.ByName
}

func ours(name string) *schedtest.PodWrapper {
	return schedtest.MakePod(name).UID(name).SchedulerName(profile)
}

func withVersion(p *v1.Pod, v string) *v1.Pod { p.ResourceVersion = v; return p }

func nominated(p *v1.Pod, node string) *v1.Pod { p.Status.NominatedNodeName = node; return p }

func deleting(p *v1.Pod) *v1.Pod {
	now := metav1.Now()
	p.DeletionTimestamp = &now
	return p
}

func TestPodHandlers(t *testing.T) {
	node := schedtest.MakeNode("n1").Capacity("cpu", "4", "memory", "8Gi", "pods", "110").Obj()
	tests := []struct {
		name string
		// assume is assumed on n1 before the events.
		assume *v1.Pod
		// cached is added to the cache as bound before the events.
		cached *v1.Pod
		do     func(h *handlers)
		want   []call
		// inCache and notInCache are pod names checked afterwards.
		inCache, notInCache []string
		storage, selectors  int
	}{
		{
			name: "an unassigned pod of our profile is queued",
			do:   func(h *handlers) { h.addPod(ours("p").Obj()) },
			want: []call{{Op: "Add", Pod: "p"}},
		},
		{
			name: "an unassigned pod of another scheduler is ignored",
			do:   func(h *handlers) { h.addPod(schedtest.MakePod("p").SchedulerName("default-scheduler").Obj()) },
		},
		{
			name: "an assigned pod of any scheduler is cached and wakes pods with AssignedPodAdd",
			do: func(h *handlers) {
				h.addPod(schedtest.MakePod("p").UID("p").SchedulerName("default-scheduler").Node("n1").Obj())
			},
			want:    []call{{Op: "Move", Event: "AssignedPodAdd", New: "p"}},
			inCache: []string{"p"},
		},
		{
			name: "a binding caches the pod and takes it out of the queue without a delete event",
			do: func(h *handlers) {
				h.updatePod(withVersion(ours("p").Obj(), "1"), withVersion(ours("p").Node("n1").Obj(), "2"))
			},
			want:    []call{{Op: "Move", Event: "AssignedPodAdd", New: "p"}, {Op: "Delete", Pod: "p"}},
			inCache: []string{"p"},
		},
		{
			name:   "the binding of an assumed pod confirms it in the cache",
			assume: ours("p").Obj(),
			do: func(h *handlers) {
				h.updatePod(withVersion(ours("p").Obj(), "1"), withVersion(ours("p").Node("n1").Obj(), "2"))
				if h.cache.IsAssumedPod(ours("p").Obj()) {
					panic("still assumed after the binding")
				}
			},
			want:    []call{{Op: "Move", Event: "AssignedPodAdd", New: "p"}, {Op: "Delete", Pod: "p"}},
			inCache: []string{"p"},
		},
		{
			name: "an update of a pending pod with the same resourceVersion is ignored",
			do: func(h *handlers) {
				h.updatePod(withVersion(ours("p").Obj(), "1"), withVersion(ours("p").Label("a", "b").Obj(), "1"))
			},
		},
		{
			name: "an update of a pending pod goes to the queue",
			do: func(h *handlers) {
				h.updatePod(withVersion(ours("p").Obj(), "1"), withVersion(ours("p").Label("a", "b").Obj(), "2"))
			},
			want: []call{{Op: "Update", Pod: "p"}},
		},
		{
			name: "a pending pod losing its nominated node wakes pods of lower or equal priority",
			do: func(h *handlers) {
				h.updatePod(withVersion(nominated(ours("p").Priority(10).Obj(), "n1"), "1"), withVersion(ours("p").Priority(10).Obj(), "2"))
			},
			want: []call{{Op: "Update", Pod: "p"}, {Op: "Move", Event: "AssignedPodDelete", Old: "p", PreCheck: []int32{-10, 0, 10}}},
		},
		{
			name:   "an update of an assumed pod is not queued",
			assume: ours("p").Obj(),
			do: func(h *handlers) {
				h.updatePod(withVersion(ours("p").Obj(), "1"), withVersion(ours("p").Label("a", "b").Obj(), "2"))
			},
			// Still assumed: the binding cycle owns it.
			inCache: []string{"p"},
		},
		{
			name:   "an assumed pod being deleted is forgotten at once and its room wakes pods",
			assume: ours("p").Obj(),
			do: func(h *handlers) {
				h.updatePod(withVersion(ours("p").Obj(), "1"), withVersion(deleting(ours("p").Obj()), "2"))
			},
			want: []call{{Op: "Move", Event: "AssignedPodDelete", Old: "p"}},
			// The event carries the cached (assumed) copy, which has the node.
			notInCache: []string{"p"},
		},
		{
			name: "a pod of another scheduler is never queued on update",
			do: func(h *handlers) {
				h.updatePod(withVersion(schedtest.MakePod("p").Obj(), "1"), withVersion(schedtest.MakePod("p").Label("a", "b").Obj(), "2"))
			},
		},
		{
			name:   "a label change of an assigned pod is UpdatePodLabel",
			cached: ours("p").Node("n1").Obj(),
			do: func(h *handlers) {
				h.updatePod(withVersion(ours("p").Node("n1").Obj(), "1"), withVersion(ours("p").Node("n1").Label("app", "x").Obj(), "2"))
			},
			want:    []call{{Op: "Move", Event: "AssignedPodUpdatePodLabel", Old: "p", New: "p"}},
			inCache: []string{"p"},
		},
		{
			name:   "an assigned pod scaled down and relabelled gives both events in kube's order",
			cached: ours("p").Node("n1").Req("cpu", "2").Obj(),
			do: func(h *handlers) {
				h.updatePod(withVersion(ours("p").Node("n1").Req("cpu", "2").Obj(), "1"), withVersion(ours("p").Node("n1").Req("cpu", "1").Label("app", "x").Obj(), "2"))
			},
			want: []call{
				{Op: "Move", Event: "AssignedPodUpdatePodLabel", Old: "p", New: "p"},
				{Op: "Move", Event: "AssignedPodUpdatePodScaleDown", Old: "p", New: "p"},
			},
			inCache: []string{"p"},
		},
		{
			name:   "an assigned pod's status update is a plain AssignedPodUpdate",
			cached: ours("p").Node("n1").Obj(),
			do: func(h *handlers) {
				h.updatePod(withVersion(ours("p").Node("n1").Obj(), "1"), withVersion(ours("p").Node("n1").Phase(v1.PodRunning).Obj(), "2"))
			},
			want:    []call{{Op: "Move", Event: "AssignedPodUpdate", Old: "p", New: "p"}},
			inCache: []string{"p"},
		},
		{
			name:       "an assigned pod's deletion frees its room with AssignedPodDelete",
			cached:     ours("p").Node("n1").Obj(),
			do:         func(h *handlers) { h.deletePod(ours("p").Node("n1").Obj()) },
			want:       []call{{Op: "Move", Event: "AssignedPodDelete", Old: "p"}},
			notInCache: []string{"p"},
		},
		{
			name: "a pending pod's deletion takes it out of the queue",
			do:   func(h *handlers) { h.deletePod(ours("p").Obj()) },
			want: []call{{Op: "Delete", Pod: "p"}},
		},
		{
			name: "a nominated pending pod's deletion wakes pods of lower or equal priority",
			do:   func(h *handlers) { h.deletePod(nominated(ours("p").Priority(0).Obj(), "n1")) },
			want: []call{{Op: "Delete", Pod: "p"}, {Op: "Move", Event: "AssignedPodDelete", Old: "p", PreCheck: []int32{-10, 0}}},
		},
		{
			name:       "a pending pod deleted while assumed is forgotten at once",
			assume:     ours("p").Obj(),
			do:         func(h *handlers) { h.deletePod(ours("p").Obj()) },
			want:       []call{{Op: "Delete", Pod: "p"}, {Op: "Move", Event: "AssignedPodDelete", Old: "p"}},
			notInCache: []string{"p"},
		},
		{
			name:   "a pod tombstone is unwrapped and cleaned up on both sides, whatever its stale node says",
			cached: ours("p").Node("n1").Obj(),
			do: func(h *handlers) {
				h.deletePod(cache.DeletedFinalStateUnknown{Key: "default/p", Obj: ours("p").Obj()})
			},
			want:       []call{{Op: "Move", Event: "AssignedPodDelete", Old: "p"}, {Op: "Delete", Pod: "p"}},
			notInCache: []string{"p"},
		},
		{
			name: "a tombstone of something else is ignored",
			do:   func(h *handlers) { h.deletePod(cache.DeletedFinalStateUnknown{Key: "x", Obj: node}) },
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			q := &recordingQueue{}
			h := &handlers{cache: schedcore.NewCache(schedcore.DefaultFeatures), queue: q, profiles: testProfiles(t), features: schedcore.DefaultFeatures, logger: logr.Discard()}
			h.cache.AddNode(node)
			if tt.cached != nil {
				if err := h.cache.AddPod(tt.cached); err != nil {
					t.Fatal(err)
				}
			}
			if tt.assume != nil {
				p := tt.assume.DeepCopy()
				p.Spec.NodeName = "n1"
				if err := h.cache.AssumePod(p); err != nil {
					t.Fatal(err)
				}
			}
			tt.do(h)
			if diff := cmp.Diff(tt.want, q.calls); diff != "" {
				t.Errorf("queue calls (-want +got):\n%s", diff)
			}
			for _, n := range tt.inCache {
				if _, ok := h.cache.GetPod(ours(n).Obj()); !ok {
					t.Errorf("pod %s not in the cache", n)
				}
			}
			for _, n := range tt.notInCache {
				if _, ok := h.cache.GetPod(ours(n).Obj()); ok {
					t.Errorf("pod %s still in the cache", n)
				}
			}
		})
	}
}

func TestDeletingAPodWaitingOnPermitRejectsItInsteadOfForgettingIt(t *testing.T) {
	q := &recordingQueue{}
	profiles := testProfiles(t)
	h := &handlers{cache: schedcore.NewCache(schedcore.DefaultFeatures), queue: q, profiles: profiles, logger: logr.Discard()}
	p := ours("p").Node("n1").Obj()
	if err := h.cache.AssumePod(p); err != nil {
		t.Fatal(err)
	}
	w := profiles[profile].AddWaitingPod(p, map[string]time.Duration{"Gang": time.Hour})
	h.deletePod(ours("p").Obj())
	if got := profiles[profile].WaitOnPermit(context.Background(), p); got.Code() != schedcore.Unschedulable || got.Message() != "removed" {
		t.Errorf("WaitOnPermit = %v, want Unschedulable \"removed\"", got)
	}
	if !h.cache.IsAssumedPod(p) {
		t.Error("the pod was forgotten; its binding cycle must do it after the rejection")
	}
	_ = w
	want := []call{{Op: "Delete", Pod: "p"}, {Op: "Move", Event: "AssignedPodDelete", Old: "p"}}
	if diff := cmp.Diff(want, q.calls); diff != "" {
		t.Errorf("queue calls (-want +got):\n%s", diff)
	}
}

func TestNodeHandlers(t *testing.T) {
	base := func() *schedtest.NodeWrapper {
		return schedtest.MakeNode("n1").Capacity("cpu", "4", "memory", "8Gi", "pods", "110")
	}
	heartbeat := base().Obj()
	heartbeat.Status.Conditions = []v1.NodeCondition{{Type: v1.NodeReady, Status: v1.ConditionTrue, LastHeartbeatTime: metav1.Now()}}
	tests := []struct {
		name      string
		do        func(h *handlers)
		want      []call
		wantNodes int
	}{
		{
			name:      "a new node is cached and wakes pods with NodeAdd",
			do:        func(h *handlers) { h.addNode(base().Obj()) },
			want:      []call{{Op: "Move", Event: "NodeAdd", New: "n1"}},
			wantNodes: 1,
		},
		{
			name: "a heartbeat is cached and wakes nothing",
			do: func(h *handlers) {
				h.addNode(base().Obj())
				h.updateNode(base().Obj(), heartbeat)
			},
			want:      []call{{Op: "Move", Event: "NodeAdd", New: "n1"}},
			wantNodes: 1,
		},
		{
			name: "a node made schedulable and relabelled gives UpdateNodeTaint then UpdateNodeLabel",
			do: func(h *handlers) {
				h.addNode(base().Unschedulable().Obj())
				h.updateNode(base().Unschedulable().Obj(), base().Label("zone", "a").Obj())
			},
			want: []call{
				{Op: "Move", Event: "NodeAdd", New: "n1"},
				{Op: "Move", Event: "NodeUpdateNodeTaint", Old: "n1", New: "n1"},
				{Op: "Move", Event: "NodeUpdateNodeLabel", Old: "n1", New: "n1"},
			},
			wantNodes: 1,
		},
		{
			name: "a node's deletion wakes pods, then leaves the cache",
			do: func(h *handlers) {
				h.addNode(base().Obj())
				h.deleteNode(base().Obj())
			},
			want:      []call{{Op: "Move", Event: "NodeAdd", New: "n1"}, {Op: "Move", Event: "NodeDelete", Old: "n1"}},
			wantNodes: 0,
		},
		{
			name: "a node tombstone is unwrapped",
			do: func(h *handlers) {
				h.addNode(base().Obj())
				h.deleteNode(cache.DeletedFinalStateUnknown{Key: "n1", Obj: base().Obj()})
			},
			want:      []call{{Op: "Move", Event: "NodeAdd", New: "n1"}, {Op: "Move", Event: "NodeDelete", Old: "n1"}},
			wantNodes: 0,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			q := &recordingQueue{}
			h := &handlers{cache: schedcore.NewCache(schedcore.DefaultFeatures), queue: q, logger: logr.Discard()}
			tt.do(h)
			if diff := cmp.Diff(tt.want, q.calls); diff != "" {
				t.Errorf("queue calls (-want +got):\n%s", diff)
			}
			if got := h.cache.NodeCount(); got != tt.wantNodes {
				t.Errorf("cache has %d nodes, want %d", got, tt.wantNodes)
			}
		})
	}
}

func TestResourceHandlers(t *testing.T) {
	pvc := &v1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: "claim", Namespace: "default"}}
	ns := &v1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "team", Labels: map[string]string{"t": "a"}}}
	rs := func(sel string) *appsv1.ReplicaSet {
		return &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Name: "rs", Namespace: "default"}, Spec: appsv1.ReplicaSetSpec{Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": sel}}}}
	}
	rsStatus := rs("a")
	rsStatus.Status.Replicas = 3
	tests := []struct {
		name                    string
		do                      func(h *handlers)
		want                    []call
		wantStorage, wantSelect int
		wantNamespace           bool
	}{
		{
			name:        "a PVC added refreshes the storage state before waking pods",
			do:          func(h *handlers) { h.storageFuncs(schedcore.PersistentVolumeClaim).OnAdd(pvc, false) },
			want:        []call{{Op: "Move", Event: "PersistentVolumeClaimAdd", New: "claim"}},
			wantStorage: 1,
		},
		{
			name: "a StorageClass tombstone is unwrapped",
			do: func(h *handlers) {
				h.storageFuncs(schedcore.StorageClass).OnDelete(cache.DeletedFinalStateUnknown{Key: "claim", Obj: pvc})
			},
			want:        []call{{Op: "Move", Event: "storage.k8s.io/StorageClassDelete", Old: "claim"}},
			wantStorage: 1,
		},
		{
			name:          "a namespace is cached and its update is an event",
			do:            func(h *handlers) { h.namespaceFuncs().OnUpdate(ns, ns) },
			want:          []call{{Op: "Move", Event: "NamespaceUpdate", Old: "team", New: "team"}},
			wantNamespace: true,
		},
		{
			name: "a namespace tombstone removes it from the cache",
			do: func(h *handlers) {
				h.namespaceFuncs().OnAdd(ns, false)
				h.namespaceFuncs().OnDelete(cache.DeletedFinalStateUnknown{Key: "team", Obj: ns})
			},
			want: []call{{Op: "Move", Event: "NamespaceAdd", New: "team"}, {Op: "Move", Event: "NamespaceDelete", Old: "team"}},
		},
		{
			name:       "a ReplicaSet's selector change refreshes the selectors, waking nothing",
			do:         func(h *handlers) { h.selectorFuncs().OnUpdate(rs("a"), rs("b")) },
			wantSelect: 1,
		},
		{
			name: "a ReplicaSet's status update refreshes nothing",
			do:   func(h *handlers) { h.selectorFuncs().OnUpdate(rs("a"), rsStatus) },
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			q := &recordingQueue{}
			var storage, selectors int
			h := &handlers{cache: schedcore.NewCache(schedcore.DefaultFeatures), queue: q, logger: logr.Discard()}
			h.refreshStorage = func() {
				if len(q.calls) != 0 {
					t.Error("storage refreshed after the queue was told")
				}
				storage++
			}
			h.refreshSelectors = func() { selectors++ }
			tt.do(h)
			if diff := cmp.Diff(tt.want, q.calls); diff != "" {
				t.Errorf("queue calls (-want +got):\n%s", diff)
			}
			if storage != tt.wantStorage || selectors != tt.wantSelect {
				t.Errorf("refreshes: storage %d selectors %d, want %d %d", storage, selectors, tt.wantStorage, tt.wantSelect)
			}
			snap := schedcore.NewEmptySnapshot()
			h.cache.UpdateSnapshot(snap)
			if got := snap.Namespace("team") != nil; got != tt.wantNamespace {
				t.Errorf("namespace cached = %v, want %v", got, tt.wantNamespace)
			}
		})
	}
}
