package runtime

import (
	"context"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/sets"
	configv1 "k8s.io/kube-scheduler/config/v1"

	"github.com/kubectl-sched/kubectl-sched/schedcore"
	"github.com/kubectl-sched/kubectl-sched/schedcore/schedtest"
)

// blindPlugin is a PreFilter, Filter and PostFilter plugin that says it is
// blind to the other pods at the points in blind; its callbacks are never
// run here (podBlind reads the profile and the diagnosis only).
type blindPlugin struct {
	name  string
	blind schedcore.PodBlindness
}

func (p blindPlugin) Name() string { return p.name }
func (p blindPlugin) PreFilter(context.Context, *schedcore.CycleState, *v1.Pod, []*schedcore.NodeInfo) (*schedcore.PreFilterResult, *schedcore.Status) {
	return nil, nil
}
func (p blindPlugin) PreFilterExtensions() schedcore.PreFilterExtensions { return nil }
func (p blindPlugin) Filter(context.Context, *schedcore.CycleState, *v1.Pod, *schedcore.NodeInfo) *schedcore.Status {
	return nil
}
func (p blindPlugin) PostFilter(context.Context, *schedcore.CycleState, *v1.Pod, *schedcore.NodeToStatus) (*schedcore.PostFilterResult, *schedcore.Status) {
	return nil, schedcore.NewStatus(schedcore.Unschedulable)
}
func (p blindPlugin) PodBlind(*v1.Pod) schedcore.PodBlindness { return p.blind }

// fifo is the profile's queue sort and binder.
type fifo struct{}

func (fifo) Bind(context.Context, *schedcore.CycleState, *v1.Pod, string) *schedcore.Status {
	return nil
}

func (fifo) Name() string                            { return "FIFO" }
func (fifo) Less(a, b *schedcore.QueuedPodInfo) bool { return a.Timestamp.Before(b.Timestamp) }

// TestPodBlindNeedsEveryCondition checks each condition of
// Framework.podBlind on a failed cycle's diagnosis: a failure is blind to
// the other pods only when every node was rejected
// UnschedulableAndUnresolvable by a blind filter with only blind filters
// before it, every PreFilter and PostFilter is blind, the PreFilters
// passed and left nothing pending, the nodes without a status were left
// out by a PreFilterResult, and the pod is not nominated.
func TestPodBlindNeedsEveryCondition(t *testing.T) {
	all := schedcore.BlindPreFilter | schedcore.BlindFilter | schedcore.BlindPostFilter
	plugins := map[string]schedcore.PodBlindness{
		"Static":    all,
		"Soft":      all,
		"Counting":  schedcore.BlindFilter | schedcore.BlindPostFilter, // its PreFilter reads pods
		"Victims":   schedcore.BlindPreFilter | schedcore.BlindFilter,  // its PostFilter reads pods
		"NodePods":  schedcore.BlindPreFilter | schedcore.BlindPostFilter,
		"Unsettled": 0,
	}
	reg := schedcore.Registry{"FIFO": {Factory: func(context.Context, runtime.Object, *schedcore.Handle) (schedcore.Plugin, error) { return fifo{}, nil }}}
	for name, b := range plugins {
		reg[name] = schedcore.PluginSpec{Factory: func(context.Context, runtime.Object, *schedcore.Handle) (schedcore.Plugin, error) {
			return blindPlugin{name: name, blind: b}, nil
		}}
	}
	framework := func(t *testing.T, names ...string) *Framework {
		t.Helper()
		enabled := []configv1.Plugin{{Name: "FIFO"}}
		for _, n := range names {
			enabled = append(enabled, configv1.Plugin{Name: n})
		}
		sched := v1.DefaultSchedulerName
		profile := &configv1.KubeSchedulerProfile{SchedulerName: &sched, Plugins: &configv1.Plugins{MultiPoint: configv1.PluginSet{Enabled: enabled}}}
		snap := schedcore.NewSnapshot(nil, []*v1.Node{schedtest.MakeNode("n1").Obj(), schedtest.MakeNode("n2").Obj()})
		fw, err := NewFramework(context.Background(), reg, profile, schedcore.NewHandle(snap, 1), FrameworkOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return fw
	}
	unresolvable := func(plugin string) *schedcore.Status {
		return schedcore.NewStatus(schedcore.UnschedulableAndUnresolvable, "no").WithPlugin(plugin)
	}
	fitError := func(statuses ...*schedcore.Status) *schedcore.FitError {
		m := schedcore.NewNodeToStatus()
		for i, s := range statuses {
			m.SetNew([]string{"n1", "n2"}[i], s)
		}
		return &schedcore.FitError{NumAllNodes: 2, Diagnosis: schedcore.Diagnosis{NodeToStatus: m}}
	}
	pod := schedtest.MakePod("p").Obj()
	nominated := schedtest.MakePod("p").Obj()
	nominated.Status.NominatedNodeName = "n1"
	tests := []struct {
		name    string
		plugins []string
		pod     *v1.Pod
		fe      func() *schedcore.FitError
		want    bool
	}{
		{
			name: "every node rejected by a blind filter", plugins: []string{"Static", "Soft"},
			fe: func() *schedcore.FitError { return fitError(unresolvable("Static"), unresolvable("Soft")) }, want: true,
		},
		{
			name: "a node rejected Unschedulable (preemption would read its pods)", plugins: []string{"Static", "Soft"},
			fe: func() *schedcore.FitError {
				return fitError(unresolvable("Static"), schedcore.NewStatus(schedcore.Unschedulable, "no").WithPlugin("Soft"))
			},
		},
		{
			name: "a node rejected by a filter that reads pods", plugins: []string{"Static", "NodePods"},
			fe: func() *schedcore.FitError { return fitError(unresolvable("Static"), unresolvable("NodePods")) },
		},
		{
			name: "a blind filter after one that reads pods", plugins: []string{"NodePods", "Static"},
			fe: func() *schedcore.FitError { return fitError(unresolvable("Static"), unresolvable("Static")) },
		},
		{
			name: "a PreFilter that reads pods", plugins: []string{"Static", "Counting"},
			fe: func() *schedcore.FitError { return fitError(unresolvable("Static"), unresolvable("Static")) },
		},
		{
			name: "a PostFilter that reads pods", plugins: []string{"Static", "Victims"},
			fe: func() *schedcore.FitError { return fitError(unresolvable("Static"), unresolvable("Static")) },
		},
		{
			name: "a plugin that says nothing", plugins: []string{"Static", "Unsettled"},
			fe: func() *schedcore.FitError { return fitError(unresolvable("Static"), unresolvable("Static")) },
		},
		{
			name: "a PreFilter rejected the pod", plugins: []string{"Static"},
			fe: func() *schedcore.FitError {
				fe := fitError(unresolvable("Static"), unresolvable("Static"))
				fe.Diagnosis.PreFilterMsg = "no"
				return fe
			},
		},
		{
			name: "a plugin left the pod pending (it waits for something else)", plugins: []string{"Static"},
			fe: func() *schedcore.FitError {
				fe := fitError(unresolvable("Static"), unresolvable("Static"))
				fe.Diagnosis.PendingPlugins = sets.New("Static")
				return fe
			},
		},
		{
			name: "a node without a status, not left out by a PreFilterResult", plugins: []string{"Static"},
			fe: func() *schedcore.FitError { return fitError(unresolvable("Static")) },
		},
		{
			name: "a node left out by a PreFilterResult", plugins: []string{"Static"},
			fe: func() *schedcore.FitError {
				fe := fitError(unresolvable("Static"))
				fe.Diagnosis.LeftOutBy = []string{"Static"}
				return fe
			},
			want: true,
		},
		{
			name: "a nominated pod (its node is tried first)", plugins: []string{"Static"}, pod: nominated,
			fe: func() *schedcore.FitError { return fitError(unresolvable("Static"), unresolvable("Static")) },
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := tt.pod
			if p == nil {
				p = pod
			}
			if got := framework(t, tt.plugins...).podBlind(p, tt.fe()); got != tt.want {
				t.Errorf("podBlind = %v, want %v", got, tt.want)
			}
		})
	}
}
