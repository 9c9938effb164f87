package live

import (
	"fmt"
	"testing"

	"github.com/go-logr/logr"
	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	schedulingv1beta1 "k8s.io/api/scheduling/v1beta1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/kubectl-sched/kubectl-sched/schedcore"
)

func member(name, group string) *v1.Pod {
	p := ours(name).Obj()
	p.Spec.SchedulingGroup = &v1.PodSchedulingGroup{PodGroupName: &group}
	return p
}

func livePodGroup(name, rv string) *schedulingv1beta1.PodGroup {
	return &schedulingv1beta1.PodGroup{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name, ResourceVersion: rv}}
}

// TestPodGroupHandlers: with GenericWorkload on, pending members and
// v1beta1 PodGroups reach the cache's pod group states as kube's handlers
// (eventhandlers.go) put them there, and every member Add and PodGroup
// event is replayed to the queue; with the gate off a member is a pod.
func TestPodGroupHandlers(t *testing.T) {
	on := schedcore.DefaultFeatures
	on.GenericWorkload = true
	tests := []struct {
		name     string
		features schedcore.Features
		do       func(h *handlers)
		want     []call
		// group is what the cache's states say of default/pg.
		group string
	}{
		{
			name:     "a pending member is counted and its Add replayed",
			features: on,
			do:       func(h *handlers) { h.addPod(member("m1", "pg")) },
			want:     []call{{Op: "Add", Pod: "m1"}, {Op: "Move", Event: "UnscheduledPodAdd", New: "m1"}},
			group:    "all=1 unscheduled=1 object=false",
		},
		{
			name:     "a deleted pending member is forgotten, and the state with it",
			features: on,
			do: func(h *handlers) {
				h.addPod(member("m1", "pg"))
				h.deletePod(member("m1", "pg"))
			},
			want:  []call{{Op: "Add", Pod: "m1"}, {Op: "Move", Event: "UnscheduledPodAdd", New: "m1"}, {Op: "Delete", Pod: "m1"}},
			group: "pod group state not found for pod group default/pg",
		},
		{
			name:     "a member bound by the scheduler becomes assigned",
			features: on,
			do: func(h *handlers) {
				h.addPod(withVersion(member("m1", "pg"), "1"))
				bound := withVersion(member("m1", "pg"), "2")
				bound.Spec.NodeName = "n1"
				h.updatePod(withVersion(member("m1", "pg"), "1"), bound)
			},
			want:  []call{{Op: "Add", Pod: "m1"}, {Op: "Move", Event: "UnscheduledPodAdd", New: "m1"}, {Op: "Move", Event: "AssignedPodAdd", New: "m1"}, {Op: "Delete", Pod: "m1"}},
			group: "all=1 unscheduled=0 object=false",
		},
		{
			name:     "PodGroup add, same-version update ignored, update, tombstone delete",
			features: on,
			do: func(h *handlers) {
				f := h.podGroupFuncs()
				f.OnAdd(livePodGroup("pg", "1"), false)
				f.OnUpdate(livePodGroup("pg", "1"), livePodGroup("pg", "1"))
				f.OnUpdate(livePodGroup("pg", "1"), livePodGroup("pg", "2"))
				h.addPod(member("m1", "pg"))
				f.OnDelete(cache.DeletedFinalStateUnknown{Key: "default/pg", Obj: livePodGroup("pg", "2")})
			},
			want: []call{
				{Op: "AddPodGroup", Pod: "pg"}, {Op: "Move", Event: "scheduling.k8s.io/PodGroupAdd", New: "pg"},
				{Op: "UpdatePodGroup", Pod: "pg"}, {Op: "Move", Event: "scheduling.k8s.io/PodGroupUpdate", Old: "pg", New: "pg"},
				{Op: "Add", Pod: "m1"}, {Op: "Move", Event: "UnscheduledPodAdd", New: "m1"},
				{Op: "DeletePodGroup", Pod: "pg"}, {Op: "Move", Event: "scheduling.k8s.io/PodGroupDelete", Old: "pg"},
			},
			group: "all=1 unscheduled=1 object=false",
		},
		{
			name:     "a PodGroup without members keeps a state",
			features: on,
			do:       func(h *handlers) { h.podGroupFuncs().OnAdd(livePodGroup("pg", "1"), false) },
			want:     []call{{Op: "AddPodGroup", Pod: "pg"}, {Op: "Move", Event: "scheduling.k8s.io/PodGroupAdd", New: "pg"}},
			group:    "all=0 unscheduled=0 object=true",
		},
		{
			name:  "gate off: a member is a pod, its Add is not replayed",
			do:    func(h *handlers) { h.addPod(member("m1", "pg")) },
			want:  []call{{Op: "Add", Pod: "m1"}},
			group: "generic workload feature gate is disabled",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := tt.features
			if f == (schedcore.Features{}) {
				f = schedcore.DefaultFeatures
			}
			q := &recordingQueue{}
			h := &handlers{cache: schedcore.NewCache(f), queue: q, profiles: testProfiles(t), features: f, logger: logr.Discard()}
			h.cache.AddNode(&v1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1"}})
			tt.do(h)
			if diff := cmp.Diff(tt.want, q.calls); diff != "" {
				t.Errorf("queue calls (-want +got):\n%s", diff)
			}
			got := ""
			if st, err := h.cache.PodGroupStates().Get("default", "pg"); err != nil {
				got = err.Error()
			} else {
				_, err := h.cache.PodGroups().Get("default", "pg")
				got = fmt.Sprintf("all=%d unscheduled=%d object=%t", st.AllPodsCount(), len(st.UnscheduledPods()), err == nil)
			}
			if got != tt.group {
				t.Errorf("group state: got %q, want %q", got, tt.group)
			}
		})
	}
}
