package schedcore

import (
	"sort"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	schedulingv1beta1 "k8s.io/api/scheduling/v1beta1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
)

func groupMember(name, group, node string) *v1.Pod {
	p := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns1", Name: name, UID: types.UID(name)}}
	p.Spec.NodeName = node
	if group != "" {
		p.Spec.SchedulingGroup = &v1.PodSchedulingGroup{PodGroupName: &group}
	}
	return p
}

func onNode(p *v1.Pod, node string) *v1.Pod {
	c := p.DeepCopy()
	c.Spec.NodeName = node
	return c
}

// groupView is a state seen through the PodGroupState interface, by pod
// name, sorted.
type groupView struct {
	all, unscheduled, assumed, assigned, scheduled []string
}

func viewOf(st PodGroupState) groupView {
	uids := func(s sets.Set[types.UID]) []string {
		out := []string{}
		for u := range s {
			out = append(out, string(u))
		}
		sort.Strings(out)
		return out
	}
	var v groupView
	v.all, v.assumed, v.assigned = uids(st.AllPods()), uids(st.AssumedPods()), uids(st.AssignedPods())
	v.unscheduled = []string{}
	for name := range st.UnscheduledPods() {
		v.unscheduled = append(v.unscheduled, name)
	}
	sort.Strings(v.unscheduled)
	v.scheduled = []string{}
	for _, p := range st.ScheduledPods() {
		v.scheduled = append(v.scheduled, p.Name+"@"+p.Spec.NodeName)
	}
	sort.Strings(v.scheduled)
	if len(v.all) != st.AllPodsCount() || len(v.scheduled) != st.ScheduledPodsCount() {
		panic("counts disagree with lists")
	}
	return v
}

func (v groupView) String() string {
	j := func(s []string) string { return "[" + strings.Join(s, " ") + "]" }
	return "all" + j(v.all) + " unscheduled" + j(v.unscheduled) + " assumed" + j(v.assumed) + " assigned" + j(v.assigned) + " scheduled" + j(v.scheduled)
}

// TestPodGroupStateTransitions transcribes kube's podgroupstate_test.go
// (TestPodGroupState_AssumeForget, _PodCounts, _ScheduledPods) as steps.
func TestPodGroupStateTransitions(t *testing.T) {
	p1, p2, p3, p4 := groupMember("p1", "pg1", ""), groupMember("p2", "pg1", ""), groupMember("p3", "pg1", "node1"), groupMember("p4", "pg1", "")
	type step struct {
		do   func(st *podGroupState)
		want string
	}
	tests := []struct {
		name  string
		steps []step
	}{
		{
			name: "assume then forget",
			steps: []step{
				{func(st *podGroupState) { st.addPod(p1) }, "all[p1] unscheduled[p1] assumed[] assigned[] scheduled[]"},
				{func(st *podGroupState) { st.assumePod(onNode(p1, "n")) }, "all[p1] unscheduled[] assumed[p1] assigned[] scheduled[p1@n]"},
				{func(st *podGroupState) { st.forgetPod(p1.UID) }, "all[p1] unscheduled[p1] assumed[] assigned[] scheduled[]"},
			},
		},
		{
			name: "pod counts",
			steps: []step{
				{func(st *podGroupState) {}, "all[] unscheduled[] assumed[] assigned[] scheduled[]"},
				{func(st *podGroupState) { st.addPod(p1); st.addPod(p2); st.addPod(p3) }, "all[p1 p2 p3] unscheduled[p1 p2] assumed[] assigned[p3] scheduled[p3@node1]"},
				// Assuming moves a member from unscheduled to assumed.
				{func(st *podGroupState) { st.assumePod(p1) }, "all[p1 p2 p3] unscheduled[p2] assumed[p1] assigned[p3] scheduled[p1@ p3@node1]"},
				// Assuming an assigned member changes nothing.
				{func(st *podGroupState) { st.assumePod(p3) }, "all[p1 p2 p3] unscheduled[p2] assumed[p1] assigned[p3] scheduled[p1@ p3@node1]"},
				// Assuming a pod the state does not know changes nothing.
				{func(st *podGroupState) { st.assumePod(p4) }, "all[p1 p2 p3] unscheduled[p2] assumed[p1] assigned[p3] scheduled[p1@ p3@node1]"},
				// Forgetting an assigned member keeps it assigned.
				{func(st *podGroupState) { st.forgetPod(p3.UID) }, "all[p1 p2 p3] unscheduled[p2] assumed[p1] assigned[p3] scheduled[p1@ p3@node1]"},
				{func(st *podGroupState) { st.forgetPod(p1.UID) }, "all[p1 p2 p3] unscheduled[p1 p2] assumed[] assigned[p3] scheduled[p3@node1]"},
				// Forgetting a member not assumed changes nothing.
				{func(st *podGroupState) { st.forgetPod(p1.UID) }, "all[p1 p2 p3] unscheduled[p1 p2] assumed[] assigned[p3] scheduled[p3@node1]"},
				{func(st *podGroupState) { st.assumePod(p2) }, "all[p1 p2 p3] unscheduled[p1] assumed[p2] assigned[p3] scheduled[p2@ p3@node1]"},
				// Forgetting a pod the state does not know changes nothing.
				{func(st *podGroupState) { st.forgetPod(p4.UID) }, "all[p1 p2 p3] unscheduled[p1] assumed[p2] assigned[p3] scheduled[p2@ p3@node1]"},
			},
		},
		{
			name: "scheduled pods are the assigned and the assumed copies",
			steps: []step{
				{func(st *podGroupState) { st.addPod(p3); st.addPod(p1); st.addPod(p2) }, "all[p1 p2 p3] unscheduled[p1 p2] assumed[] assigned[p3] scheduled[p3@node1]"},
				{func(st *podGroupState) { st.assumePod(onNode(p2, "node2")) }, "all[p1 p2 p3] unscheduled[p1] assumed[p2] assigned[p3] scheduled[p2@node2 p3@node1]"},
			},
		},
		{
			name: "bind, external bind of an assumed member, delete",
			steps: []step{
				{func(st *podGroupState) { st.addPod(p1); st.addPod(p2) }, "all[p1 p2] unscheduled[p1 p2] assumed[] assigned[] scheduled[]"},
				{func(st *podGroupState) { st.updatePod(p1, onNode(p1, "n1")) }, "all[p1 p2] unscheduled[p2] assumed[] assigned[p1] scheduled[p1@n1]"},
				{func(st *podGroupState) { st.assumePod(onNode(p2, "n2")); st.addPod(onNode(p2, "n3")) }, "all[p1 p2] unscheduled[] assumed[] assigned[p1 p2] scheduled[p1@n1 p2@n3]"},
				{func(st *podGroupState) { st.deletePod(p1.UID) }, "all[p2] unscheduled[] assumed[] assigned[p2] scheduled[p2@n3]"},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := newPodGroupState()
			for i, s := range tt.steps {
				gen := st.generation
				s.do(st)
				if got := viewOf(st).String(); got != s.want {
					t.Fatalf("step %d:\n got %s\nwant %s", i, got, s.want)
				}
				if i > 0 && st.generation == gen && s.want != tt.steps[i-1].want {
					t.Errorf("step %d changed the state but not its generation", i)
				}
			}
		})
	}
}

// TestPodGroupStateClone transcribes kube's TestPodGroupState_Clone: a
// snapshot copy and the cache's state change independently.
func TestPodGroupStateClone(t *testing.T) {
	p1, p2, p3 := groupMember("p1", "pg", ""), groupMember("p2", "pg", ""), groupMember("p3", "pg", "")
	st := newPodGroupState()
	st.addPod(p1)
	st.addPod(p2)
	st.assumePod(p2)
	snap := st.clone()
	if snap.generation != st.generation {
		t.Errorf("clone generation %d, want %d", snap.generation, st.generation)
	}
	want := "all[p1 p2] unscheduled[p1] assumed[p2] assigned[] scheduled[p2@]"
	if got := viewOf(snap).String(); got != want {
		t.Errorf("clone: got %s, want %s", got, want)
	}
	snap.assumePod(p1)
	st.addPod(p3)
	if got, want := viewOf(st).String(), "all[p1 p2 p3] unscheduled[p1 p3] assumed[p2] assigned[] scheduled[p2@]"; got != want {
		t.Errorf("original after changes: got %s, want %s", got, want)
	}
	if got, want := viewOf(snap).String(), "all[p1 p2] unscheduled[] assumed[p1 p2] assigned[] scheduled[p1@ p2@]"; got != want {
		t.Errorf("clone after changes: got %s, want %s", got, want)
	}
}

func podGroupObj(name string) *schedulingv1beta1.PodGroup {
	return &schedulingv1beta1.PodGroup{ObjectMeta: metav1.ObjectMeta{Namespace: "ns1", Name: name}}
}

// TestCachePodGroups follows members and PodGroup objects through the
// cache (kube's cache.go: addPod/removePod/AddPodGroupMember/AddPodGroup)
// into the snapshot's listers.
func TestCachePodGroups(t *testing.T) {
	node := &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1"}}
	u1, u2 := groupMember("u1", "pg", ""), groupMember("u2", "pg", "")
	b1 := groupMember("b1", "pg", "n1")
	loner := groupMember("loner", "", "n1")
	on := Features{GenericWorkload: true}
	tests := []struct {
		name     string
		features Features
		do       func(c *Cache)
		// want is the view of ns1/pg, or the lister's error.
		want       string
		wantObject string
	}{
		{
			name:     "members in every state",
			features: on,
			do: func(c *Cache) {
				c.AddPodGroupMember(u1)
				c.AddPodGroupMember(u2)
				_ = c.AddPod(b1)
				_ = c.AddPod(loner)
				_ = c.AssumePod(onNode(u1, "n1"))
			},
			want:       "all[b1 u1 u2] unscheduled[u2] assumed[u1] assigned[b1] scheduled[b1@n1 u1@n1]",
			wantObject: "pod group object not found for pod group podgroup/ns1/pg",
		},
		{
			name:     "forget puts an assumed member back",
			features: on,
			do: func(c *Cache) {
				c.AddPodGroupMember(u1)
				_ = c.AssumePod(onNode(u1, "n1"))
				c.ForgetPod(onNode(u1, "n1"))
			},
			want:       "all[u1] unscheduled[u1] assumed[] assigned[] scheduled[]",
			wantObject: "pod group object not found for pod group podgroup/ns1/pg",
		},
		{
			name:     "binding confirms an assumed member as assigned",
			features: on,
			do: func(c *Cache) {
				c.AddPodGroup(podGroupObj("pg"))
				c.AddPodGroupMember(u1)
				_ = c.AssumePod(onNode(u1, "n1"))
				_ = c.AddPod(onNode(u1, "n1"))
			},
			want:       "all[u1] unscheduled[] assumed[] assigned[u1] scheduled[u1@n1]",
			wantObject: "ns1/pg",
		},
		{
			name:     "assuming a member the cache never saw",
			features: on,
			do:       func(c *Cache) { _ = c.AssumePod(onNode(u1, "n1")) },
			// kube's assumePodGroupMember creates the state knowing the
			// assumed copy, which has a node: assumePod counts it assigned.
			want:       "all[u1] unscheduled[] assumed[] assigned[u1] scheduled[u1@n1]",
			wantObject: "pod group object not found for pod group podgroup/ns1/pg",
		},
		{
			name:     "the state outlives its PodGroup while members are known",
			features: on,
			do: func(c *Cache) {
				c.AddPodGroup(podGroupObj("pg"))
				c.AddPodGroupMember(u1)
				c.RemovePodGroup(podGroupObj("pg"))
			},
			want:       "all[u1] unscheduled[u1] assumed[] assigned[] scheduled[]",
			wantObject: "pod group object not found for pod group podgroup/ns1/pg",
		},
		{
			name:     "a PodGroup without members",
			features: on,
			do:       func(c *Cache) { c.AddPodGroup(podGroupObj("pg")) },
			want:     "all[] unscheduled[] assumed[] assigned[] scheduled[]", wantObject: "ns1/pg",
		},
		{
			name:     "the last member and the PodGroup gone: no state",
			features: on,
			do: func(c *Cache) {
				c.AddPodGroup(podGroupObj("pg"))
				_ = c.AddPod(b1)
				c.AddPodGroupMember(u1)
				c.RemovePod(b1)
				c.RemovePodGroupMember(u1)
				c.RemovePodGroup(podGroupObj("pg"))
			},
			want:       "pod group state not found for pod group ns1/pg",
			wantObject: "pod group state not found for pod group podgroup/ns1/pg",
		},
		{
			name:     "an update of an unknown PodGroup is ignored",
			features: on,
			do:       func(c *Cache) { c.UpdatePodGroup(nil, podGroupObj("pg")) },
			want:     "pod group state not found for pod group ns1/pg", wantObject: "pod group state not found for pod group podgroup/ns1/pg",
		},
		{
			name: "gate off: nothing is kept",
			do: func(c *Cache) {
				c.AddPodGroup(podGroupObj("pg"))
				c.AddPodGroupMember(u1)
				_ = c.AddPod(b1)
			},
			want:       "pod group state not found for pod group ns1/pg",
			wantObject: "generic workload feature gate is disabled",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := NewCache(tt.features)
			c.AddNode(node)
			tt.do(c)
			s := NewEmptySnapshot()
			c.UpdateSnapshot(s)
			for _, from := range []struct {
				name string
				m    PodGroupManager
			}{{"snapshot", s}, {"cache", c}} {
				got := ""
				if st, err := from.m.PodGroupStates().Get("ns1", "pg"); err != nil {
					got = err.Error()
				} else {
					got = viewOf(st).String()
				}
				want := tt.want
				if from.name == "cache" && !tt.features.GenericWorkload {
					want = "generic workload feature gate is disabled"
				}
				if got != want {
					t.Errorf("%s PodGroupStates: got %s, want %s", from.name, got, want)
				}
				if pg, err := from.m.PodGroups().Get("ns1", "pg"); err != nil {
					got = err.Error()
				} else {
					got = pg.Namespace + "/" + pg.Name
				}
				if got != tt.wantObject {
					t.Errorf("%s PodGroups: got %s, want %s", from.name, got, tt.wantObject)
				}
			}
		})
	}
}

// TestSnapshotClonesChangedGroupsOnly: UpdateSnapshot keeps an unchanged
// group's copy, replaces a changed one, drops a removed one.
func TestSnapshotClonesChangedGroupsOnly(t *testing.T) {
	c := NewCache(Features{GenericWorkload: true})
	c.AddPodGroup(podGroupObj("a"))
	c.AddPodGroup(podGroupObj("b"))
	c.AddPodGroup(podGroupObj("c"))
	s := NewEmptySnapshot()
	c.UpdateSnapshot(s)
	a, b := s.podGroupStates[podGroupKey{"ns1", "a"}], s.podGroupStates[podGroupKey{"ns1", "b"}]
	c.AddPodGroupMember(groupMember("x", "b", ""))
	c.RemovePodGroup(podGroupObj("c"))
	c.UpdateSnapshot(s)
	if s.podGroupStates[podGroupKey{"ns1", "a"}] != a {
		t.Error("unchanged group a was copied again")
	}
	if nb := s.podGroupStates[podGroupKey{"ns1", "b"}]; nb == b || nb.AllPodsCount() != 1 || b.AllPodsCount() != 0 {
		t.Error("changed group b: the snapshot's copy is not a new copy with the member")
	}
	if _, ok := s.podGroupStates[podGroupKey{"ns1", "c"}]; ok {
		t.Error("removed group c is still in the snapshot")
	}
}
