package runtime_test

import (
	"context"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	configv1 "k8s.io/kube-scheduler/config/v1"

	"github.com/kubectl-sched/kubectl-sched/schedcore"
	"github.com/kubectl-sched/kubectl-sched/schedcore/queue"
	schedruntime "github.com/kubectl-sched/kubectl-sched/schedcore/runtime"
	"github.com/kubectl-sched/kubectl-sched/schedcore/schedtest"
)

// tagged is the pod name a cycle's PreFilter wrote into its state.
type tagged string

func (t tagged) Clone() schedcore.StateData { return t }

// stateTagger writes its pod's name into the cycle state at PreFilter,
// keeps pods named in wait at Permit, and at Bind reports the pods whose
// state no longer holds their own name.
type stateTagger struct {
	wait  map[string]bool
	wrong []string
	bound []string
}

const tagKey schedcore.StateKey = "PreFilterStateTagger"

func (p *stateTagger) Name() string                            { return "StateTagger" }
func (p *stateTagger) Less(a, b *schedcore.QueuedPodInfo) bool { return a.Pod.Name < b.Pod.Name }
func (p *stateTagger) PreFilter(_ context.Context, state *schedcore.CycleState, pod *v1.Pod, _ []*schedcore.NodeInfo) (*schedcore.PreFilterResult, *schedcore.Status) {
	state.Write(tagKey, tagged(pod.Name))
	return nil, nil
}
func (p *stateTagger) PreFilterExtensions() schedcore.PreFilterExtensions { return nil }
func (p *stateTagger) Filter(context.Context, *schedcore.CycleState, *v1.Pod, *schedcore.NodeInfo) *schedcore.Status {
	return nil
}
func (p *stateTagger) Permit(_ context.Context, _ *schedcore.CycleState, pod *v1.Pod, _ string) (*schedcore.Status, time.Duration) {
	if p.wait[pod.Name] {
		return schedcore.NewStatus(schedcore.Wait), time.Minute
	}
	return nil, 0
}
func (p *stateTagger) Bind(_ context.Context, state *schedcore.CycleState, pod *v1.Pod, _ string) *schedcore.Status {
	if got, ok := schedcore.Lookup[tagged](state, tagKey); !ok || string(got) != pod.Name {
		p.wrong = append(p.wrong, pod.Name+" read "+string(got))
	}
	p.bound = append(p.bound, pod.Name)
	return nil
}

// The scheduling loop gives a finished cycle's CycleState to the next
// cycle (emptied), but never the state of a binding cycle parked at
// Permit, which reads it when its pod is allowed: each case schedules
// pods in order, some waiting at Permit while the others are placed, and
// every binding cycle must read its own cycle's state.
func TestSchedulerReusesOnlyFinishedCycleStates(t *testing.T) {
	for _, tc := range []struct {
		name string
		pods []string
		wait []string
	}{
		{"no pod waits", []string{"a", "b", "c"}, nil},
		{"the first waits while the others bind", []string{"a", "b", "c"}, []string{"a"}},
		{"two wait", []string{"a", "b", "c", "d"}, []string{"a", "c"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pl := &stateTagger{wait: map[string]bool{}}
			for _, w := range tc.wait {
				pl.wait[w] = true
			}
			reg := schedcore.Registry{"StateTagger": {Factory: func(context.Context, runtime.Object, *schedcore.Handle) (schedcore.Plugin, error) {
				return pl, nil
			}}}
			name := v1.DefaultSchedulerName
			profile := &configv1.KubeSchedulerProfile{SchedulerName: &name, Plugins: &configv1.Plugins{
				MultiPoint: configv1.PluginSet{Enabled: []configv1.Plugin{{Name: "StateTagger"}}},
			}}
			cache := schedcore.NewCache(schedcore.DefaultFeatures)
			cache.AddNode(schedtest.MakeNode("n1").Capacity("pods", "110").Obj())
			snap := schedcore.NewEmptySnapshot()
			fw, err := schedruntime.NewFramework(context.Background(), reg, profile, schedcore.NewHandle(snap, 2), schedruntime.FrameworkOptions{})
			if err != nil {
				t.Fatal(err)
			}
			profiles := map[string]*schedruntime.Framework{name: fw}
			q := queue.New(fw.QueueSortLess(), profiles)
			s := schedruntime.NewScheduler(cache, q, profiles, snap, &schedruntime.Algorithm{})
			s.SyncBinding = true
			ctx := context.Background()
			for _, n := range tc.pods {
				q.Add(s.Logger, schedtest.MakePod(n).UID(n).Obj())
			}
			for range tc.pods {
				qpi, ok := q.TryPop(s.Logger)
				if !ok {
					t.Fatal("queue empty")
				}
				s.ScheduleOnePod(ctx, qpi)
			}
			if s.NumParked() != len(tc.wait) {
				t.Fatalf("%d binding cycles parked, want %d", s.NumParked(), len(tc.wait))
			}
			for _, w := range tc.wait {
				pod := schedtest.MakePod(w).UID(w).Obj()
				wp := fw.GetWaitingPod(pod.UID)
				if wp == nil {
					t.Fatalf("%s is not waiting", w)
				}
				wp.Allow("StateTagger")
			}
			s.ResolveWaiting(ctx)
			if len(pl.bound) != len(tc.pods) {
				t.Errorf("bound %v, want all of %v", pl.bound, tc.pods)
			}
			if len(pl.wrong) != 0 {
				t.Errorf("binding cycles read another cycle's state: %v", pl.wrong)
			}
		})
	}
}
