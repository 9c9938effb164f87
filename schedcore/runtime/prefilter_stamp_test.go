package runtime_test

import (
	"context"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	configv1 "k8s.io/kube-scheduler/config/v1"

	"github.com/kubectl-sched/kubectl-sched/schedcore"
	schedruntime "github.com/kubectl-sched/kubectl-sched/schedcore/runtime"
	"github.com/kubectl-sched/kubectl-sched/schedcore/schedtest"
)

// sharedRejecter's PreFilter rejects every pod with one shared status
// (NewSharedStatus, as plugins return a rejection that is the same for
// every pod), with the code it is given; it sorts the queue and binds too
// (a profile needs a QueueSort and a Bind plugin).
type sharedRejecter struct{ st *schedcore.Status }

func (sharedRejecter) Name() string { return "SharedRejecter" }
func (r sharedRejecter) PreFilter(context.Context, *schedcore.CycleState, *v1.Pod, []*schedcore.NodeInfo) (*schedcore.PreFilterResult, *schedcore.Status) {
	return nil, r.st
}
func (sharedRejecter) Less(a, b *schedcore.QueuedPodInfo) bool { return a.Pod.Name < b.Pod.Name }
func (sharedRejecter) Bind(context.Context, *schedcore.CycleState, *v1.Pod, string) *schedcore.Status {
	return nil
}

// TestPreFilterStampsASharedStatus: the status a PreFilter pass returns
// carries the rejecting plugin's name even when the plugin returned a
// shared status, which WithPlugin stamps on a copy (the diagnosis files the
// pod under that plugin, and explain names it).
func TestPreFilterStampsASharedStatus(t *testing.T) {
	for _, code := range []schedcore.Code{schedcore.Unschedulable, schedcore.UnschedulableAndUnresolvable} {
		t.Run(code.String(), func(t *testing.T) {
			st := schedcore.NewSharedStatus(code, "no")
			reg := schedcore.Registry{"SharedRejecter": {Factory: func(context.Context, runtime.Object, *schedcore.Handle) (schedcore.Plugin, error) {
				return sharedRejecter{st}, nil
			}}}
			name := v1.DefaultSchedulerName
			profile := &configv1.KubeSchedulerProfile{SchedulerName: &name, Plugins: &configv1.Plugins{
				MultiPoint: configv1.PluginSet{Enabled: []configv1.Plugin{{Name: "SharedRejecter"}}},
			}}
			fw, err := schedruntime.NewFramework(context.Background(), reg, profile, schedcore.NewHandle(schedcore.NewEmptySnapshot(), 1), schedruntime.FrameworkOptions{})
			if err != nil {
				t.Fatal(err)
			}
			_, got, _ := fw.RunPreFilterPlugins(context.Background(), schedcore.NewCycleState(), schedtest.MakePod("p").Obj())
			if got.Code() != code || got.Plugin() != "SharedRejecter" {
				t.Errorf("status %v from plugin %q, want %v from SharedRejecter", got.Code(), got.Plugin(), code)
			}
			if st.Plugin() != "" {
				t.Errorf("the plugin's shared status was stamped %q in place", st.Plugin())
			}
		})
	}
}
