package queue

import (
	"context"
	"fmt"
	"sort"
	"testing"

	"github.com/go-logr/logr"
	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	schedulingv1beta1 "k8s.io/api/scheduling/v1beta1"
	"k8s.io/apimachinery/pkg/runtime"
	configv1 "k8s.io/kube-scheduler/config/v1"

	"github.com/kubectl-sched/kubectl-sched/schedcore"
	schedruntime "github.com/kubectl-sched/kubectl-sched/schedcore/runtime"
)

// gangGate stands in for GangScheduling's PreEnqueue and hints (another
// package, GS:75-160 and GS:250-281 in kube) over a test cluster: a member
// waits while its PodGroup is not observed or fewer members than minCount
// are known; a new member of the same group, or the group's creation,
// queues it.
type gangGate struct {
	groups  map[string]*schedulingv1beta1.PodGroup
	members map[string]int
}

func (g *gangGate) Name() string { return "GangScheduling" }

func (g *gangGate) PreEnqueue(_ context.Context, pod *v1.Pod) *schedcore.Status {
	name, ok := schedcore.PodGroupNameOf(pod)
	if !ok {
		return nil
	}
	pg := g.groups[pod.Namespace+"/"+name]
	if pg == nil {
		return schedcore.NewStatus(schedcore.UnschedulableAndUnresolvable, fmt.Sprintf("waiting for pods's pod group %q to appear in scheduling queue", name))
	}
	if gang := pg.Spec.SchedulingPolicy.Gang; gang != nil && g.members[pod.Namespace+"/"+name] < int(gang.MinCount) {
		return schedcore.NewStatus(schedcore.UnschedulableAndUnresolvable, "waiting for minCount pods from a gang to appear in scheduling queue")
	}
	return nil
}

func (g *gangGate) EventsToRegister(context.Context) ([]schedcore.ClusterEventWithHint, error) {
	sameGroup := func(_ logr.Logger, pod *v1.Pod, _, newObj any) (schedcore.QueueingHint, error) {
		mine, _ := schedcore.PodGroupNameOf(pod)
		switch o := newObj.(type) {
		case *v1.Pod:
			if theirs, ok := schedcore.PodGroupNameOf(o); ok && theirs == mine && o.Namespace == pod.Namespace {
				return schedcore.Queue, nil
			}
		case *schedulingv1beta1.PodGroup:
			if o.Name == mine && o.Namespace == pod.Namespace {
				return schedcore.Queue, nil
			}
		}
		return schedcore.QueueSkip, nil
	}
	return []schedcore.ClusterEventWithHint{
		withHint(schedcore.ClusterEvent{Resource: schedcore.UnscheduledPod, ActionType: schedcore.Add}, sameGroup),
		withHint(schedcore.ClusterEvent{Resource: schedcore.PodGroup, ActionType: schedcore.Add}, sameGroup),
	}, nil
}

// gangCluster delivers objects as kube's event handlers do with
// GenericWorkload (eventhandlers.go): the cache (here the gate's counts)
// first, then the queue, then the move.
type gangCluster struct {
	q    *PriorityQueue
	gate *gangGate
}

func (c *gangCluster) addPod(pod *v1.Pod) {
	if name, ok := schedcore.PodGroupNameOf(pod); ok {
		c.gate.members[pod.Namespace+"/"+name]++
	}
	c.q.Add(logger, pod)
	c.q.MoveAllToActiveOrBackoffQueue(logger, schedcore.ClusterEvent{Resource: schedcore.UnscheduledPod, ActionType: schedcore.Add}, nil, pod, nil)
}

func (c *gangCluster) addPodGroup(pg *schedulingv1beta1.PodGroup) {
	c.gate.groups[pg.Namespace+"/"+pg.Name] = pg
	c.q.AddPodGroup(logger, pg)
	c.q.MoveAllToActiveOrBackoffQueue(logger, schedcore.ClusterEvent{Resource: schedcore.PodGroup, ActionType: schedcore.Add}, nil, pg, nil)
}

// poppable pops everything and lists the pods popped (members of popped
// groups included).
func (c *gangCluster) poppable() []string {
	var out []string
	for {
		e, ok := c.q.TryPop(logger)
		if !ok {
			break
		}
		if e.Group == nil {
			out = append(out, e.Pod.Name)
			continue
		}
		for _, p := range e.Group.UnscheduledPods() {
			out = append(out, p.Name)
		}
	}
	sort.Strings(out)
	return out
}

// TestGangQueueingIntegration transcribes the two GenericWorkload rows of
// kube's test/integration/scheduler/queueing (queue.go:2524-2567): pods
// first rejected at PreEnqueue by GangScheduling, then requeued by the
// trigger. GangScheduling itself is another package's; gangGate stands in.
func TestGangQueueingIntegration(t *testing.T) {
	gangPG := func(name string, minCount int32) *schedulingv1beta1.PodGroup {
		pg := &schedulingv1beta1.PodGroup{}
		pg.Namespace, pg.Name = "ns1", name
		pg.Spec.SchedulingPolicy.Gang = &schedulingv1beta1.GangSchedulingPolicy{MinCount: minCount}
		return pg
	}
	pod := func(name, group string) *v1.Pod {
		p := groupMember(name, true)
		p.Spec.SchedulingGroup.PodGroupName = &group
		return p
	}
	tests := []struct {
		name          string
		initialGroups []*schedulingv1beta1.PodGroup
		pods          []*v1.Pod
		trigger       func(c *gangCluster)
		want          []string
	}{
		{
			name:          "Pod rejected by the GangScheduling plugin is requeued when a new pod with matching scheduling group is created",
			initialGroups: []*schedulingv1beta1.PodGroup{gangPG("pg1", 2)},
			pods:          []*v1.Pod{pod("pod1", "pg1"), pod("pod2", "pg2")},
			trigger:       func(c *gangCluster) { c.addPod(pod("pod3", "pg1")) },
			want:          []string{"pod1", "pod3"},
		},
		{
			name:    "Pod rejected by the GangScheduling plugin is requeued when a matching pod group is created",
			pods:    []*v1.Pod{pod("pod1", "pg1"), pod("pod2", "pg2")},
			trigger: func(c *gangCluster) { c.addPodGroup(gangPG("pg1", 1)) },
			want:    []string{"pod1"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			gate := &gangGate{groups: map[string]*schedulingv1beta1.PodGroup{}, members: map[string]int{}}
			f := schedcore.DefaultFeatures
			f.GenericWorkload = true
			fw := newFrameworkWith(t, gate)
			q, _ := newQueue(t, fw, WithFeatures(f))
			c := &gangCluster{q: q, gate: gate}
			for _, pg := range tt.initialGroups {
				c.addPodGroup(pg)
			}
			for _, p := range tt.pods {
				c.addPod(p)
			}
			if got := c.poppable(); len(got) != 0 {
				t.Fatalf("before the trigger, popped %v; want every pod held", got)
			}
			tt.trigger(c)
			if diff := cmp.Diff(tt.want, c.poppable()); diff != "" {
				t.Errorf("requeued pods (-want +got)\n%s", diff)
			}
		})
	}
}

// newFrameworkWith builds the default-scheduler profile with one
// PreEnqueue plugin.
func newFrameworkWith(t *testing.T, pl schedcore.PreEnqueuePlugin) *schedruntime.Framework {
	t.Helper()
	factory := func(p schedcore.Plugin) schedcore.PluginSpec {
		return schedcore.PluginSpec{Factory: func(context.Context, runtime.Object, *schedcore.Handle) (schedcore.Plugin, error) { return p, nil }}
	}
	r := schedcore.Registry{"Sort": factory(sortPlugin{}), "Bind": factory(bindPlugin{}), pl.Name(): factory(pl)}
	plugins := &configv1.Plugins{
		QueueSort:  configv1.PluginSet{Enabled: []configv1.Plugin{{Name: "Sort"}}},
		Bind:       configv1.PluginSet{Enabled: []configv1.Plugin{{Name: "Bind"}}},
		PreEnqueue: configv1.PluginSet{Enabled: []configv1.Plugin{{Name: pl.Name()}}},
	}
	name := v1.DefaultSchedulerName
	fw, err := schedruntime.NewFramework(context.Background(), r, &configv1.KubeSchedulerProfile{SchedulerName: &name, Plugins: plugins}, schedcore.NewHandle(nil, 1), schedruntime.FrameworkOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return fw
}
