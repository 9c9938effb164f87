package runtime_test

import (
	"context"
	"fmt"
	"strconv"
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

// slotFilter is a NodeLocalFilter: a node passes when its "slots" label is
// at least the pod's (the key). calls counts Filter calls. With extensions
// it also has PreFilterExtensions, whose AddPod and RemovePod could change
// what Filter reads: the framework must then remember nothing.
type slotFilter struct {
	slots
	calls *atomic.Int64
}

func (p slotFilter) Filter(ctx context.Context, state *schedcore.CycleState, pod *v1.Pod, ni *schedcore.NodeInfo) *schedcore.Status {
	p.calls.Add(1)
	return p.slots.Filter(ctx, state, pod, ni)
}

func (p slotFilter) FilterKey(_ *schedcore.CycleState, pod *v1.Pod, k *schedcore.MemoKey) bool {
	k.String(pod.Labels["slots"])
	return true
}

type slotFilterWithExtensions struct{ slotFilter }

func (slotFilterWithExtensions) AddPod(context.Context, *schedcore.CycleState, *v1.Pod, *schedcore.PodInfo, *schedcore.NodeInfo) *schedcore.Status {
	return nil
}
func (slotFilterWithExtensions) RemovePod(context.Context, *schedcore.CycleState, *v1.Pod, *schedcore.PodInfo, *schedcore.NodeInfo) *schedcore.Status {
	return nil
}

var (
	_ schedcore.NodeLocalFilter     = slotFilter{}
	_ schedcore.PreFilterExtensions = slotFilterWithExtensions{}
)

// TestNodeLocalFilterPassesAreRemembered checks that RunFilterPlugins calls
// a NodeLocalFilter again only on the nodes that changed since a cycle with
// the same key, or where it rejected the pod, with the verdicts of a fresh
// framework; and never skips a plugin with PreFilterExtensions.
func TestNodeLocalFilterPassesAreRemembered(t *testing.T) {
	for _, ext := range []bool{false, true} {
		t.Run(fmt.Sprintf("extensions=%v", ext), func(t *testing.T) {
			var calls atomic.Int64
			newFramework := func(snap *schedcore.Snapshot) *schedruntime.Framework {
				if ext {
					return onePluginFramework(t, snap, slotFilterWithExtensions{slotFilter{calls: &calls}})
				}
				return onePluginFramework(t, snap, slotFilter{calls: &calls})
			}
			cache, snap := slotNodes()
			long := newFramework(snap)
			filter := func(fw *schedruntime.Framework, want string) []string {
				pod := schedtest.MakePod("p").Label("slots", want).Obj()
				state := schedcore.NewCycleState()
				if _, s, _ := fw.RunPreFilterPlugins(context.Background(), state, pod); !s.IsSuccess() {
					t.Fatal(s.AsError())
				}
				var out []string
				for _, ni := range snap.List() {
					out = append(out, fmt.Sprint(ni.Name(), " ", fw.RunFilterPlugins(context.Background(), state, pod, ni).Code()))
				}
				return out
			}
			check := func(step, want string, wantCalls int64) {
				t.Helper()
				calls.Store(0)
				got := filter(long, want)
				n := calls.Load()
				if diff := cmp.Diff(filter(newFramework(snap), want), got); diff != "" {
					t.Fatalf("%s, pod wanting %s: remembered verdicts differ from a fresh framework's (-fresh +remembered):\n%s", step, want, diff)
				}
				if ext {
					wantCalls = 20
				}
				if n != wantCalls {
					t.Errorf("%s, pod wanting %s: Filter called %d times, want %d", step, want, n, wantCalls)
				}
			}
			check("first cycle", "2", 20)
			check("same pod again: only the 8 rejections", "2", 8)
			check("another key", "4", 20)
			check("another key again: only the 16 rejections", "4", 16)
			// n04 (4 slots) drops to 0, n01 (1) rises to 4.
			cache.AddNode(schedtest.MakeNode("n04").Label("slots", "0").Obj())
			cache.AddNode(schedtest.MakeNode("n01").Label("slots", "4").Obj())
			cache.UpdateSnapshot(snap)
			check("two nodes changed", "2", 8+2-1)
			check("two nodes changed", "4", 16+2-1)
		})
	}
}

// onePluginFramework is a default-named profile with pl (named Slots) at
// every extension point it implements, on snap.
func onePluginFramework(t *testing.T, snap *schedcore.Snapshot, pl schedcore.Plugin) *schedruntime.Framework {
	t.Helper()
	reg := schedcore.Registry{"Slots": {Factory: func(context.Context, runtime.Object, *schedcore.Handle) (schedcore.Plugin, error) { return pl, nil }}}
	name := v1.DefaultSchedulerName
	profile := &configv1.KubeSchedulerProfile{SchedulerName: &name, Plugins: &configv1.Plugins{
		MultiPoint: configv1.PluginSet{Enabled: []configv1.Plugin{{Name: "Slots"}}},
	}}
	fw, err := schedruntime.NewFramework(context.Background(), reg, profile, schedcore.NewHandle(snap, 2), schedruntime.FrameworkOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return fw
}

// slotNodes is a cache of 20 nodes n00..n19 with i%5 slots, and its
// snapshot.
func slotNodes() (*schedcore.Cache, *schedcore.Snapshot) {
	cache := schedcore.NewCache(schedcore.DefaultFeatures)
	for i := 0; i < 20; i++ {
		cache.AddNode(schedtest.MakeNode(fmt.Sprintf("n%02d", i)).Label("slots", strconv.Itoa(i%5)).Obj())
	}
	snap := schedcore.NewEmptySnapshot()
	cache.UpdateSnapshot(snap)
	return cache, snap
}

// sharedSlotFilter is slotFilter with shared rejections, one per missing
// slot count (so that a plugin has several remembered rejections).
type sharedSlotFilter struct{ slotFilter }

var slotsMissing = func() []*schedcore.Status {
	out := make([]*schedcore.Status, 5)
	for i := range out {
		out[i] = schedcore.NewSharedStatus(schedcore.UnschedulableAndUnresolvable, fmt.Sprintf("%d slot(s) missing", i))
	}
	return out
}()

func (p sharedSlotFilter) Filter(ctx context.Context, state *schedcore.CycleState, pod *v1.Pod, ni *schedcore.NodeInfo) *schedcore.Status {
	p.calls.Add(1)
	want, _ := strconv.Atoi(pod.Labels["slots"])
	if free := p.free(ni); free < want {
		return slotsMissing[want-free]
	}
	return nil
}

// TestSharedRejectionsAreRemembered checks that the framework remembers a
// NodeLocalFilter's rejections when they are shared statuses (the same for
// every node and call), as its passes: Filter runs again only on the nodes
// that changed, and each node gets the status (code, reasons, plugin) a
// fresh framework gives it, through RunFilterPlugins and through the
// Algorithm's filter loop (by list position).
func TestSharedRejectionsAreRemembered(t *testing.T) {
	var calls atomic.Int64
	cache, snap := slotNodes()
	long := onePluginFramework(t, snap, sharedSlotFilter{slotFilter{calls: &calls}})
	filter := func(fw *schedruntime.Framework, want string) []string {
		pod := schedtest.MakePod("p").Label("slots", want).Obj()
		state := schedcore.NewCycleState()
		if _, s, _ := fw.RunPreFilterPlugins(context.Background(), state, pod); !s.IsSuccess() {
			t.Fatal(s.AsError())
		}
		var out []string
		for _, ni := range snap.List() {
			s := fw.RunFilterPlugins(context.Background(), state, pod, ni)
			out = append(out, fmt.Sprint(ni.Name(), " ", s.Code(), " ", s.Plugin(), " ", s.Reasons()))
		}
		// The Algorithm's loop, over the snapshot's list by position.
		alg := &schedruntime.Algorithm{Snapshot: snap, PercentageOfNodesToScore: 100}
		res, diag, err := alg.SchedulePod(context.Background(), fw, schedcore.NewCycleState(), pod)
		out = append(out, fmt.Sprint("host ", res.SuggestedHost, " feasible ", res.FeasibleNodes, " err ", err))
		if diag != nil {
			diag.NodeToStatus.ForEachExplicitNode(func(node string, s *schedcore.Status) {
				out = append(out, fmt.Sprint(node, " ", s.Code(), " ", s.Plugin(), " ", s.Reasons()))
			})
		}
		return out
	}
	check := func(step, want string, wantCalls int64) {
		t.Helper()
		calls.Store(0)
		got := filter(long, want)
		n := calls.Load()
		if diff := cmp.Diff(filter(onePluginFramework(t, snap, sharedSlotFilter{slotFilter{calls: new(atomic.Int64)}}), want), got); diff != "" {
			t.Fatalf("%s, pod wanting %s: remembered verdicts differ from a fresh framework's (-fresh +remembered):\n%s", step, want, diff)
		}
		if n != wantCalls {
			t.Errorf("%s, pod wanting %s: Filter called %d times, want %d", step, want, n, wantCalls)
		}
	}
	check("first cycle", "2", 20)
	check("same pod again: nothing", "2", 0)
	check("another key", "4", 20)
	check("another key again: nothing", "4", 0)
	cache.AddNode(schedtest.MakeNode("n04").Label("slots", "0").Obj())
	cache.AddNode(schedtest.MakeNode("n01").Label("slots", "4").Obj())
	cache.UpdateSnapshot(snap)
	check("two nodes changed", "2", 2)
	check("two nodes changed", "4", 2)
	// A node added: the list is rebuilt, the new node comes last.
	cache.AddNode(schedtest.MakeNode("n20").Label("slots", "3").Obj())
	cache.UpdateSnapshot(snap)
	check("a node added", "4", 1)
	check("a node added, again", "4", 0)
	// The first node removed: every other node moves up one position.
	cache.RemoveNode(schedtest.MakeNode("n00").Obj())
	cache.UpdateSnapshot(snap)
	check("a node removed", "4", 20)
	check("a node removed, again", "4", 0)
}
