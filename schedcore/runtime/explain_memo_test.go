package runtime_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	configv1 "k8s.io/kube-scheduler/config/v1"

	"github.com/kubectl-sched/kubectl-sched/schedcore"
	schedruntime "github.com/kubectl-sched/kubectl-sched/schedcore/runtime"
	"github.com/kubectl-sched/kubectl-sched/schedcore/schedtest"
)

// gateClosed rejects the nodes labelled gate=closed (an unshared status: never
// remembered), before Slots in the filter order.
type gateClosed struct{}

func (gateClosed) Name() string { return "Gate" }
func (gateClosed) Filter(_ context.Context, _ *schedcore.CycleState, _ *v1.Pod, ni *schedcore.NodeInfo) *schedcore.Status {
	if ni.Node().Labels["gate"] == "closed" {
		return schedcore.NewStatus(schedcore.Unschedulable, "gate closed")
	}
	return nil
}

// An explanation's diagnosis reads the later filters' verdicts remembered
// for the node's generation and remembers those it computes: explaining
// the same pod again calls Slots' Filter on no node, a changed node is
// filtered again, and every node's verdicts are those a fresh framework
// (nothing remembered) gives.
func TestDiagnosisReadsRememberedVerdicts(t *testing.T) {
	var calls atomic.Int64
	cache, snap := slotNodes()
	// Even nodes are gated: the cycle's filters stop at Gate there, and
	// only the diagnosis runs Slots on them.
	relabel := func(name, slots, gateState string) {
		cache.AddNode(schedtest.MakeNode(name).Label("slots", slots).Label("gate", gateState).Obj())
	}
	for i := 0; i < 20; i += 2 {
		relabel(fmt.Sprintf("n%02d", i), fmt.Sprint(i%5), "closed")
	}
	cache.UpdateSnapshot(snap)
	newFramework := func(calls *atomic.Int64) *schedruntime.Framework {
		reg := schedcore.Registry{
			"Gate": {Factory: func(context.Context, runtime.Object, *schedcore.Handle) (schedcore.Plugin, error) {
				return gateClosed{}, nil
			}},
			"Slots": {Factory: func(context.Context, runtime.Object, *schedcore.Handle) (schedcore.Plugin, error) {
				return sharedSlotFilter{slotFilter{calls: calls}}, nil
			}},
		}
		name := v1.DefaultSchedulerName
		profile := &configv1.KubeSchedulerProfile{SchedulerName: &name, Plugins: &configv1.Plugins{
			MultiPoint: configv1.PluginSet{Enabled: []configv1.Plugin{{Name: "Gate"}, {Name: "Slots"}}},
		}}
		fw, err := schedruntime.NewFramework(context.Background(), reg, profile, schedcore.NewHandle(snap, 2), schedruntime.FrameworkOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return fw
	}
	long := newFramework(&calls)
	verdicts := func(fw *schedruntime.Framework, want string) []string {
		pod := schedtest.MakePod("p").Label("slots", want).Obj()
		ex := schedruntime.Explain(context.Background(), fw, snap, pod, nil)
		var out []string
		for _, ne := range ex.Nodes {
			line := fmt.Sprint(ne.Name, " feasible ", ne.Feasible)
			for _, v := range ne.Failures {
				line += fmt.Sprint(" | ", v.Plugin, " ", v.Status.Code(), " ", v.Status.Reasons())
			}
			out = append(out, line)
		}
		return out
	}
	check := func(step, want string, wantCalls int64) {
		t.Helper()
		calls.Store(0)
		got := verdicts(long, want)
		n := calls.Load()
		if diff := cmp.Diff(verdicts(newFramework(new(atomic.Int64)), want), got); diff != "" {
			t.Fatalf("%s, pod wanting %s: verdicts differ from a fresh framework's (-fresh +remembered):\n%s", step, want, diff)
		}
		if n != wantCalls {
			t.Errorf("%s, pod wanting %s: Slots' Filter called %d times, want %d", step, want, n, wantCalls)
		}
	}
	check("first explanation", "2", 20)
	check("same pod again: nothing", "2", 0)
	check("another key", "4", 20)
	// n04 (gated, 4 slots) drops to 0; n03 (open, 3) rises to 4.
	relabel("n04", "0", "closed")
	relabel("n03", "4", "open")
	cache.UpdateSnapshot(snap)
	check("two nodes changed", "2", 2)
	check("two nodes changed", "4", 2)
	check("again", "4", 0)
}
