package runtime_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	configv1 "k8s.io/kube-scheduler/config/v1"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/kubectl-sched/kubectl-sched/schedcore"
	"github.com/kubectl-sched/kubectl-sched/schedcore/queue"
	schedruntime "github.com/kubectl-sched/kubectl-sched/schedcore/runtime"
	"github.com/kubectl-sched/kubectl-sched/schedcore/schedtest"
)

// calls records plugin calls in order, shared by the test plugins.
type calls struct {
	mu  sync.Mutex
	log []string
}

func (c *calls) add(s string) { c.mu.Lock(); c.log = append(c.log, s); c.mu.Unlock() }
func (c *calls) get() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.log...)
}

// stateful is a Reserve plugin that keeps runtime state: the pods it has
// reserved. Unreserve must undo exactly what Reserve did.
type stateful struct {
	name     string
	calls    *calls
	fail     bool
	mu       sync.Mutex
	reserved map[string]string
}

func (p *stateful) Name() string { return p.name }
func (p *stateful) Reserve(_ context.Context, _ *schedcore.CycleState, pod *v1.Pod, node string) *schedcore.Status {
	p.calls.add("Reserve/" + p.name)
	if p.fail {
		return schedcore.NewStatus(schedcore.Unschedulable, "reserve refused")
	}
	p.mu.Lock()
	p.reserved[pod.Name] = node
	p.mu.Unlock()
	return nil
}
func (p *stateful) Unreserve(_ context.Context, _ *schedcore.CycleState, pod *v1.Pod, _ string) {
	p.calls.add("Unreserve/" + p.name)
	p.mu.Lock()
	delete(p.reserved, pod.Name)
	p.mu.Unlock()
}

// stages implements QueueSort, Permit, PreBind and Bind with scripted
// outcomes.
type stages struct {
	calls   *calls
	permit  *schedcore.Status
	timeout time.Duration
	preBind *schedcore.Status
	bind    *schedcore.Status
}

func (s *stages) Name() string                            { return "Stages" }
func (s *stages) Less(a, b *schedcore.QueuedPodInfo) bool { return a.Pod.Name < b.Pod.Name }
func (s *stages) PreBind(context.Context, *schedcore.CycleState, *v1.Pod, string) *schedcore.Status {
	s.calls.add("PreBind")
	return s.preBind
}
func (s *stages) Permit(context.Context, *schedcore.CycleState, *v1.Pod, string) (*schedcore.Status, time.Duration) {
	s.calls.add("Permit")
	return s.permit, s.timeout
}
func (s *stages) Bind(context.Context, *schedcore.CycleState, *v1.Pod, string) *schedcore.Status {
	s.calls.add("Bind")
	return s.bind
}

var (
	_ schedcore.ReservePlugin   = (*stateful)(nil)
	_ schedcore.QueueSortPlugin = (*stages)(nil)
	_ schedcore.PermitPlugin    = (*stages)(nil)
	_ schedcore.PreBindPlugin   = (*stages)(nil)
	_ schedcore.BindPlugin      = (*stages)(nil)
)

// TestFailuresAfterReserve checks that every failure after Reserve runs
// Unreserve on all Reserve plugins in reverse order and forgets the assumed
// pod, in both binding modes, so no resource stays counted.
func TestFailuresAfterReserve(t *testing.T) {
	wait := schedcore.NewStatus(schedcore.Wait)
	tests := []struct {
		name string
		// failReserve makes the second Reserve plugin refuse.
		failReserve bool
		st          stages
		// then runs after the scheduling cycle, while the pod may wait.
		then        func(clk *clocktesting.FakeClock, h *schedcore.Handle)
		wantCalls   []string
		wantBound   bool
		wantMessage string
		// wantForGroup: the failure is one for the group's sake
		// (RejectedForGroup), not the pod's own fit.
		wantForGroup bool
	}{
		{
			name:        "a refused Reserve unreserves every Reserve plugin in reverse order",
			failReserve: true,
			wantCalls:   []string{"Reserve/A", "Reserve/B", "Unreserve/B", "Unreserve/A"},
			wantMessage: "0/1 nodes are available: 1 reserve refused.",
		},
		{
			name:        "a Permit rejection unreserves in reverse order",
			st:          stages{permit: schedcore.NewStatus(schedcore.Unschedulable, "not permitted")},
			wantCalls:   []string{"Reserve/A", "Reserve/B", "Permit", "Unreserve/B", "Unreserve/A"},
			wantMessage: "0/1 nodes are available: 1 not permitted.",
		},
		{
			name:        "a Permit error unreserves in reverse order",
			st:          stages{permit: schedcore.AsStatus(errors.New("boom"))},
			wantCalls:   []string{"Reserve/A", "Reserve/B", "Permit", "Unreserve/B", "Unreserve/A"},
			wantMessage: `running Permit plugin "Stages": boom`,
		},
		{
			name: "a Permit timeout on the injected clock unreserves in reverse order",
			st:   stages{permit: wait, timeout: 10 * time.Second},
			then: func(clk *clocktesting.FakeClock, _ *schedcore.Handle) {
				clk.Step(9 * time.Second)
				clk.Step(time.Second)
			},
			wantCalls:    []string{"Reserve/A", "Reserve/B", "Permit", "Unreserve/B", "Unreserve/A"},
			wantMessage:  "0/1 nodes are available: 1 rejected due to timeout after waiting 10s at plugin Stages.",
			wantForGroup: true,
		},
		{
			name: "a waiting pod rejected by another plugin through the handle unreserves in reverse order",
			st:   stages{permit: wait, timeout: time.Minute},
			then: func(_ *clocktesting.FakeClock, h *schedcore.Handle) {
				h.IterateOverWaitingPods(func(w schedcore.WaitingPod) { w.Reject("Other", "sibling failed") })
			},
			wantCalls:    []string{"Reserve/A", "Reserve/B", "Permit", "Unreserve/B", "Unreserve/A"},
			wantMessage:  "0/1 nodes are available: 1 sibling failed.",
			wantForGroup: true,
		},
		{
			name: "a waiting pod removed through RejectWaitingPod unreserves",
			st:   stages{permit: wait, timeout: time.Minute},
			then: func(_ *clocktesting.FakeClock, h *schedcore.Handle) {
				if !h.RejectWaitingPod("uid-p") {
					panic("pod was not waiting")
				}
			},
			wantCalls:   []string{"Reserve/A", "Reserve/B", "Permit", "Unreserve/B", "Unreserve/A"},
			wantMessage: "0/1 nodes are available: 1 removed.",
		},
		{
			name: "a waiting pod allowed before its timeout binds and keeps its reservation",
			st:   stages{permit: wait, timeout: time.Minute},
			then: func(clk *clocktesting.FakeClock, h *schedcore.Handle) {
				clk.Step(30 * time.Second)
				w := h.GetWaitingPod("uid-p")
				if got := w.PendingPlugins(); !cmp.Equal(got, []string{"Stages"}) {
					panic(fmt.Sprint("pending plugins ", got))
				}
				w.Allow("Stages")
				clk.Step(time.Hour)
			},
			wantCalls: []string{"Reserve/A", "Reserve/B", "Permit", "PreBind", "Bind"},
			wantBound: true,
		},
		{
			name:        "a PreBind error unreserves in reverse order",
			st:          stages{preBind: schedcore.AsStatus(errors.New("volume not ready"))},
			wantCalls:   []string{"Reserve/A", "Reserve/B", "Permit", "PreBind", "Unreserve/B", "Unreserve/A"},
			wantMessage: `running PreBind plugin "Stages": volume not ready`,
		},
		{
			name:        "a Bind error unreserves in reverse order",
			st:          stages{bind: schedcore.AsStatus(errors.New("conflict"))},
			wantCalls:   []string{"Reserve/A", "Reserve/B", "Permit", "PreBind", "Bind", "Unreserve/B", "Unreserve/A"},
			wantMessage: `running Bind plugin "Stages": conflict`,
		},
	}
	for _, tt := range tests {
		for _, syncBinding := range []bool{true, false} {
			t.Run(fmt.Sprintf("%s (sync binding %v)", tt.name, syncBinding), func(t *testing.T) {
				c := &calls{}
				a := &stateful{name: "A", calls: c, reserved: map[string]string{}}
				b := &stateful{name: "B", calls: c, fail: tt.failReserve, reserved: map[string]string{}}
				st := tt.st
				st.calls = c
				reg := schedcore.Registry{
					"A":      {Factory: func(context.Context, runtime.Object, *schedcore.Handle) (schedcore.Plugin, error) { return a, nil }},
					"B":      {Factory: func(context.Context, runtime.Object, *schedcore.Handle) (schedcore.Plugin, error) { return b, nil }},
					"Stages": {Factory: func(context.Context, runtime.Object, *schedcore.Handle) (schedcore.Plugin, error) { return &st, nil }},
				}
				name := v1.DefaultSchedulerName
				profile := &configv1.KubeSchedulerProfile{SchedulerName: &name, Plugins: &configv1.Plugins{
					MultiPoint: configv1.PluginSet{Enabled: []configv1.Plugin{{Name: "Stages"}, {Name: "A"}, {Name: "B"}}},
				}}
				clk := clocktesting.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
				snap := schedcore.NewEmptySnapshot()
				h := schedcore.NewHandle(snap, 1, schedcore.WithClock(clk))
				fw, err := schedruntime.NewFramework(context.Background(), reg, profile, h, schedruntime.FrameworkOptions{})
				if err != nil {
					t.Fatal(err)
				}
				profiles := map[string]*schedruntime.Framework{name: fw}
				q := queue.New(fw.QueueSortLess(), profiles, queue.WithClock(clk))
				cache := schedcore.NewCache(schedcore.DefaultFeatures)
				cache.AddNode(schedtest.MakeNode("n1").Capacity("cpu", "4", "pods", "10").Obj())
				s := schedruntime.NewScheduler(cache, q, profiles, snap, &schedruntime.Algorithm{})
				s.SyncBinding = syncBinding
				s.Clock = clk
				var mu sync.Mutex
				var bound bool
				var message string
				var forGroup bool
				s.Hooks = schedruntime.Hooks{
					Scheduled: func(context.Context, *schedruntime.Framework, *schedcore.QueuedPodInfo, string, schedruntime.ScheduleResult) {
						mu.Lock()
						bound = true
						mu.Unlock()
					},
					Failed: func(_ context.Context, _ *schedruntime.Framework, _ *schedcore.QueuedPodInfo, _ string, st *schedcore.Status, _ *schedcore.NominatingInfo) {
						mu.Lock()
						message = st.Message()
						forGroup = schedcore.RejectedForGroup(st)
						mu.Unlock()
					},
				}
				pod := schedtest.MakePod("p").Req("cpu", "1").Obj()
				q.Add(s.Logger, pod)
				qpi, ok := q.TryPop(s.Logger)
				if !ok {
					t.Fatal("pod not in activeQ")
				}
				s.ScheduleOnePod(context.Background(), qpi)
				if tt.then != nil {
					tt.then(clk, h)
				}
				if syncBinding {
					s.ResolveWaiting(context.Background())
					if n := s.NumParked(); n != 0 {
						t.Errorf("%d binding cycles still parked", n)
					}
				}
				s.WaitForBindings()

				if diff := cmp.Diff(tt.wantCalls, c.get()); diff != "" {
					t.Errorf("plugin calls (-want +got):\n%s", diff)
				}
				mu.Lock()
				defer mu.Unlock()
				if bound != tt.wantBound {
					t.Errorf("bound = %v, want %v", bound, tt.wantBound)
				}
				if !strings.Contains(message, tt.wantMessage) || (tt.wantMessage == "") != (message == "") {
					t.Errorf("failure message %q, want %q", message, tt.wantMessage)
				}
				if forGroup != tt.wantForGroup {
					t.Errorf("RejectedForGroup = %v, want %v", forGroup, tt.wantForGroup)
				}
				if n := fw.NumWaitingPods(); n != 0 {
					t.Errorf("%d pods still in the waiting map", n)
				}
				cache.UpdateSnapshot(snap)
				ni, err := snap.Get("n1")
				if err != nil {
					t.Fatal(err)
				}
				wantCPU, wantPods := int64(0), 0
				if tt.wantBound {
					// Bound in this test means assumed and FinishBinding'd:
					// the resource stays counted on purpose.
					wantCPU, wantPods = 1000, 1
				}
				if ni.Requested.MilliCPU != wantCPU || len(ni.Pods) != wantPods {
					t.Errorf("node n1 counts %dm cpu and %d pods, want %dm and %d", ni.Requested.MilliCPU, len(ni.Pods), wantCPU, wantPods)
				}
				if got := cache.IsAssumedPod(pod); got != tt.wantBound {
					t.Errorf("pod assumed = %v, want %v", got, tt.wantBound)
				}
				a.mu.Lock()
				left := len(a.reserved)
				a.mu.Unlock()
				if want := map[bool]int{true: 1, false: 0}[tt.wantBound]; left != want {
					t.Errorf("plugin A still holds %d reservations, want %d", left, want)
				}
			})
		}
	}
}
