package queue

import (
	"context"
	"fmt"
	"hash/fnv"
	"math/rand"
	"reflect"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/sets"
	configv1 "k8s.io/kube-scheduler/config/v1"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/kubectl-sched/kubectl-sched/schedcore"
	schedruntime "github.com/kubectl-sched/kubectl-sched/schedcore/runtime"
	"github.com/kubectl-sched/kubectl-sched/schedcore/schedtest"
)

// hintLog records queueing hint calls as "plugin pod event".
type hintLog struct{ calls []string }

// loggedHint is a hint answering by a hash of the plugin, the pod (and its
// labels) and the event's object: Queue, QueueSkip or an error.
func (l *hintLog) loggedHint(plugin, event string) schedcore.QueueingHintFn {
	return func(_ logr.Logger, pod *v1.Pod, oldObj, newObj any) (schedcore.QueueingHint, error) {
		l.calls = append(l.calls, plugin+" "+pod.Name+" "+event)
		h := fnv.New32a()
		fmt.Fprint(h, plugin, pod.Name, pod.Labels["v"], event, objName(oldObj), objName(newObj))
		switch h.Sum32() % 7 {
		case 0, 1:
			return schedcore.Queue, nil
		case 2:
			return schedcore.QueueSkip, fmt.Errorf("hint of %s failed", plugin)
		}
		return schedcore.QueueSkip, nil
	}
}

func objName(o any) string {
	switch o := o.(type) {
	case *v1.Pod:
		return "pod/" + o.Name
	case *v1.Node:
		return "node/" + o.Name
	}
	return ""
}

// hintCounts counts hint observations by plugin, event and result.
type hintCounts struct {
	*recordingMetrics
	hints map[string]int
}

func (m *hintCounts) QueueingHint(plugin, event, hint string, _ time.Duration) {
	m.hints[plugin+" "+event+" "+hint]++
}

// registrations the random configurations draw from.
var randomRegistrations = []schedcore.ClusterEvent{
	nodeAdd, nodeLabel,
	{Resource: schedcore.Node, ActionType: schedcore.Update},
	{Resource: schedcore.Pod, ActionType: schedcore.Add},
	{Resource: schedcore.Pod, ActionType: schedcore.Delete},
	{Resource: schedcore.Pod, ActionType: schedcore.UpdatePodLabel},
	{Resource: schedcore.PersistentVolumeClaim, ActionType: schedcore.Add | schedcore.Update},
	{Resource: schedcore.WildCard, ActionType: schedcore.All},
}

// events the random runs send through MoveAllToActiveOrBackoffQueue.
var randomEvents = []schedcore.ClusterEvent{
	nodeAdd, nodeLabel, nodeUpdate, assignedAdd, assignedDelete,
	{Resource: schedcore.Node, ActionType: schedcore.UpdateNodeTaint},
	{Resource: schedcore.AssignedPod, ActionType: schedcore.UpdatePodLabel},
	{Resource: schedcore.UnscheduledPod, ActionType: schedcore.Add},
	{Resource: schedcore.PersistentVolumeClaim, ActionType: schedcore.Add},
	{Resource: schedcore.StorageClass, ActionType: schedcore.Add},
	{Resource: schedcore.Node, ActionType: schedcore.Add, CustomLabel: "NodeAddCustom"},
	schedcore.EventUnschedulableTimeout,
}

// randomConfig is what two worlds share: each plugin's registrations
// (nil hint for some), by plugin name.
type randomConfig struct {
	regs map[string][]regSpec
}

type regSpec struct {
	event  schedcore.ClusterEvent
	noHint bool
}

var (
	profileA     = v1.DefaultSchedulerName
	profileB     = "second"
	filtersA     = []string{"F0", "F1", "F2", "F3"}
	filtersB     = []string{"F2", "F3", "F4", "F5"}
	rejectorPool = []string{"F0", "F1", "F2", "F3", "F4", "F5", "G", "Z"}
)

func newRandomConfig(rng *rand.Rand) randomConfig {
	c := randomConfig{regs: map[string][]regSpec{}}
	for _, pl := range []string{"F0", "F1", "F2", "F3", "F4", "F5", "G"} {
		n := 1 + rng.Intn(3)
		for range n {
			e := randomRegistrations[rng.Intn(len(randomRegistrations)-1)]
			if rng.Intn(12) == 0 {
				e = randomRegistrations[len(randomRegistrations)-1] // the wildcard
			}
			c.regs[pl] = append(c.regs[pl], regSpec{event: e, noHint: rng.Intn(6) == 0})
		}
	}
	// G, F0 and F4 also wake on pod label changes (which may gate pods).
	for _, pl := range []string{"G", "F0", "F4"} {
		c.regs[pl] = append(c.regs[pl], regSpec{event: schedcore.ClusterEvent{Resource: schedcore.Pod, ActionType: schedcore.UpdatePodLabel}})
	}
	return c
}

// world is a queue over two profiles built from a config, recording its
// hint calls and metrics.
type world struct {
	q       *PriorityQueue
	clk     *clocktesting.FakeClock
	log     *hintLog
	metrics *hintCounts
}

func (c randomConfig) build(t *testing.T, walkAll bool) *world {
	t.Helper()
	w := &world{log: &hintLog{}, metrics: &hintCounts{recordingMetrics: newRecordingMetrics(), hints: map[string]int{}}}
	events := func(pl string) []schedcore.ClusterEventWithHint {
		var out []schedcore.ClusterEventWithHint
		for _, r := range c.regs[pl] {
			e := schedcore.ClusterEventWithHint{Event: r.event}
			if !r.noHint {
				e.QueueingHintFn = w.log.loggedHint(pl, r.event.Label())
			}
			out = append(out, e)
		}
		return out
	}
	plugins := map[string]*filterPlugin{}
	for _, pl := range []string{"F0", "F1", "F2", "F3", "F4", "F5"} {
		plugins[pl] = &filterPlugin{name: pl, events: events(pl)}
	}
	gate := &gatePlugin{name: "G", gate: func(p *v1.Pod) bool { return p.Labels["gate"] == "on" }, events: events("G")}
	profiles := map[string]*schedruntime.Framework{}
	for name, filters := range map[string][]string{profileA: filtersA, profileB: filtersB} {
		var fs []*filterPlugin
		for _, f := range filters {
			fs = append(fs, plugins[f])
		}
		profiles[name] = newNamedFramework(t, name, fs, gate)
	}
	w.clk = clocktesting.NewFakeClock(epoch)
	w.q = New(less, profiles, WithClock(w.clk), WithMetrics(w.metrics), WithPodMaxInUnschedulablePodsDuration(20*time.Second))
	w.q.walkAll = walkAll
	t.Cleanup(w.q.Close)
	return w
}

// newNamedFramework is newFramework for a profile name.
func newNamedFramework(t *testing.T, name string, filters []*filterPlugin, gates ...*gatePlugin) *schedruntime.Framework {
	t.Helper()
	r := schedcore.Registry{
		"Sort": {Factory: func(context.Context, runtime.Object, *schedcore.Handle) (schedcore.Plugin, error) {
			return sortPlugin{}, nil
		}},
		"Bind": {Factory: func(context.Context, runtime.Object, *schedcore.Handle) (schedcore.Plugin, error) {
			return bindPlugin{}, nil
		}},
	}
	plugins := &configv1.Plugins{
		QueueSort: configv1.PluginSet{Enabled: []configv1.Plugin{{Name: "Sort"}}},
		Bind:      configv1.PluginSet{Enabled: []configv1.Plugin{{Name: "Bind"}}},
	}
	for _, f := range filters {
		r[f.name] = schedcore.PluginSpec{Factory: func(context.Context, runtime.Object, *schedcore.Handle) (schedcore.Plugin, error) { return f, nil }}
		plugins.Filter.Enabled = append(plugins.Filter.Enabled, configv1.Plugin{Name: f.name})
	}
	for _, g := range gates {
		r[g.name] = schedcore.PluginSpec{Factory: func(context.Context, runtime.Object, *schedcore.Handle) (schedcore.Plugin, error) { return g, nil }}
		plugins.PreEnqueue.Enabled = append(plugins.PreEnqueue.Enabled, configv1.Plugin{Name: g.name})
	}
	fw, err := schedruntime.NewFramework(context.Background(), r, &configv1.KubeSchedulerProfile{SchedulerName: &name, Plugins: plugins}, schedcore.NewHandle(nil, 1), schedruntime.FrameworkOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return fw
}

// state is what must be equal between the index and the full walk: the
// hint calls since the last look, the queues and the metrics.
type state struct {
	Hints         []string
	Active        []string
	Backoff       []string
	Unschedulable []string
	Gated         []string
	Lengths       schedcore.QueueLengths
	Pending       map[string]int
	Incoming      map[[2]string]int
	Reasons       map[string]int
	InFlight      map[string]int
	HintMetrics   map[string]int
}

func (w *world) state() state {
	s := state{
		Hints:   w.log.calls,
		Active:  names(w.q.PodsInActiveQ()),
		Backoff: names(w.q.PodsInBackoffQ()),
		Lengths: w.q.Lengths(),
		Pending: w.metrics.pending, Incoming: w.metrics.incoming, Reasons: w.metrics.reasons,
		InFlight: w.metrics.inflight, HintMetrics: w.metrics.hints,
	}
	for _, p := range w.q.UnschedulablePods() {
		if q, _ := w.q.GetPod(p.Name, p.Namespace); q != nil && q.Gated() {
			s.Gated = append(s.Gated, p.Name+"/"+q.GatingPlugin)
		}
		s.Unschedulable = append(s.Unschedulable, p.Name)
	}
	return s
}

// randomObject is a node (fitting or not) or a pod, for an event.
func randomObject(rng *rand.Rand, pods map[string]*v1.Pod) any {
	switch rng.Intn(4) {
	case 0:
		return fitsNode
	case 1:
		return otherNode
	case 2:
		if len(pods) > 0 {
			return pods[sortedKeys(pods)[rng.Intn(len(pods))]]
		}
	}
	return nil
}

func sortedKeys(m map[string]*v1.Pod) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func randomSet(rng *rand.Rand, n int) sets.Set[string] {
	s := sets.New[string]()
	for range rng.Intn(n + 1) {
		s.Insert(rejectorPool[rng.Intn(len(rejectorPool))])
	}
	return s
}

// TestIndexedRequeueMatchesTheFullWalk runs random operations on two queues
// built alike, one visiting only the index's candidates on each event and
// one walking the whole unschedulable pool as kube does, and compares,
// after every operation, the hint calls (which, for which pod, in which
// order), where every pod is and in which order, and the metrics.
func TestIndexedRequeueMatchesTheFullWalk(t *testing.T) {
	for seed := int64(1); seed <= 30; seed++ {
		t.Run(fmt.Sprint("seed ", seed), func(t *testing.T) {
			rng := rand.New(rand.NewSource(seed))
			cfg := newRandomConfig(rng)
			worlds := []*world{cfg.build(t, false), cfg.build(t, true)}
			pods := map[string]*v1.Pod{} // pending pods, current versions
			next := 0
			moved := 0 // hint calls
			for op := range 400 {
				var what string
				switch r := rng.Intn(100); {
				case r < 18 || len(pods) == 0:
					name := fmt.Sprintf("p%03d", next)
					next++
					w := schedtest.MakePod(name).UID(name).Priority(int32(rng.Intn(3))).Label("v", "0")
					switch rng.Intn(6) {
					case 0:
						w.SchedulerName(profileB)
					case 1:
						w.SchedulerName("unknown")
					default:
						w.SchedulerName(profileA)
					}
					if rng.Intn(5) == 0 {
						w.Label("gate", "on")
					}
					p := w.Obj()
					pods[name] = p
					what = "add " + name
					for _, wd := range worlds {
						wd.q.Add(logger, p)
					}
				case r < 45:
					unsched, pending := randomSet(rng, 2), randomSet(rng, 1)
					if rng.Intn(8) == 0 {
						unsched, pending = sets.New[string](), sets.New[string]()
					}
					var during []schedcore.ClusterEvent
					var objs []any
					for range rng.Intn(3) {
						during = append(during, randomEvents[rng.Intn(len(randomEvents))])
						objs = append(objs, randomObject(rng, pods))
					}
					what = fmt.Sprintf("pop and reject by %v, pending %v, events in flight %v", sets.List(unsched), sets.List(pending), during)
					for _, wd := range worlds {
						qpi, ok := wd.q.TryPop(logger)
						if !ok {
							what = "pop: nothing"
							continue
						}
						for i, e := range during {
							wd.q.MoveAllToActiveOrBackoffQueue(logger, e, nil, objs[i], nil)
						}
						c := *qpi
						c.UnschedulablePlugins, c.PendingPlugins = unsched.Clone(), pending.Clone()
						if err := wd.q.AddUnschedulableIfNotPresent(logger, &c, wd.q.SchedulingCycle()); err != nil {
							t.Fatal(err)
						}
					}
				case r < 70:
					e := randomEvents[rng.Intn(len(randomEvents))]
					oldObj, newObj := randomObject(rng, pods), randomObject(rng, pods)
					var pre func(*v1.Pod) bool
					if rng.Intn(4) == 0 {
						pre = func(p *v1.Pod) bool { return p.Name[len(p.Name)-1]%2 == 0 }
					}
					what = fmt.Sprintf("event %s old %s new %s precheck %v", e.Label(), objName(oldObj), objName(newObj), pre != nil)
					for _, wd := range worlds {
						wd.q.MoveAllToActiveOrBackoffQueue(logger, e, oldObj, newObj, pre)
					}
				case r < 75:
					bound := schedtest.MakePod(fmt.Sprintf("bound%d", op)).Node("n1").Obj()
					what = "assigned pod added"
					for _, wd := range worlds {
						wd.q.AssignedPodAdded(logger, bound)
					}
				case r < 90:
					// A label change, gating or ungating the pod as well,
					// mostly of a pod of the unschedulable pool: the hints
					// may requeue it and the gate then keeps it in place.
					old := pods[sortedKeys(pods)[rng.Intn(len(pods))]]
					if pool := worlds[0].q.UnschedulablePods(); len(pool) > 0 && rng.Intn(4) != 0 {
						old = pods[pool[rng.Intn(len(pool))].Name]
					}
					upd := old.DeepCopy()
					upd.Labels["v"] = fmt.Sprint(rng.Intn(3))
					if rng.Intn(3) != 0 {
						if upd.Labels["gate"] == "on" {
							delete(upd.Labels, "gate")
						} else {
							upd.Labels["gate"] = "on"
						}
					}
					pods[upd.Name] = upd
					what = "update " + upd.Name

					for _, wd := range worlds {
						wd.q.Update(logger, old, upd)
					}
				case r < 93:
					p := pods[sortedKeys(pods)[rng.Intn(len(pods))]]
					what = "activate " + p.Name
					for _, wd := range worlds {
						wd.q.Activate(logger, map[string]*v1.Pod{podKey(p): p})
					}
				case r < 96:
					p := pods[sortedKeys(pods)[rng.Intn(len(pods))]]
					delete(pods, p.Name)
					what = "delete " + p.Name
					for _, wd := range worlds {
						wd.q.Delete(p)
					}
				default:
					d := time.Duration(rng.Intn(25)) * time.Second
					what = fmt.Sprint("step ", d, " and flush")
					for _, wd := range worlds {
						wd.clk.Step(d)
						wd.q.flushBackoffQCompleted(logger)
						wd.q.flushUnschedulablePodsLeftover(logger)
					}
				}
				indexed, full := worlds[0].state(), worlds[1].state()
				// reflect first: cmp.Diff is slow, and most operations agree.
				if !reflect.DeepEqual(full, indexed) {
					t.Fatalf("op %d (%s): the indexed queue differs from the full walk (-full +indexed):\n%s", op, what, cmp.Diff(full, indexed))
				}
				moved += len(indexed.Hints)
				for _, wd := range worlds {
					wd.log.calls = nil
				}
			}
			if moved == 0 {
				t.Fatal("no hint was called: the run tests nothing")
			}
		})
	}
}

// TestRequeueIndexCandidates checks which pods of the pool an event visits
// and in which order.
func TestRequeueIndexCandidates(t *testing.T) {
	filters := []*filterPlugin{
		{name: "Fit", events: []schedcore.ClusterEventWithHint{withHint(assignedDelete, nil), withHint(nodeAdd, nil)}},
		{name: "Spread", events: []schedcore.ClusterEventWithHint{withHint(schedcore.ClusterEvent{Resource: schedcore.Pod, ActionType: schedcore.Add | schedcore.Delete}, nil)}},
		{name: "Labels", events: []schedcore.ClusterEventWithHint{withHint(nodeLabel, nil)}},
	}
	type stored struct {
		name          string
		unschedulable []string
		profile       string
	}
	pool := []stored{
		{name: "fit", unschedulable: []string{"Fit"}},
		{name: "spread", unschedulable: []string{"Spread"}},
		{name: "error"},
		{name: "both", unschedulable: []string{"Spread", "Fit"}},
		{name: "silent", unschedulable: []string{"NoHints"}},
		{name: "other-profile", unschedulable: []string{"Fit"}, profile: "nobody"},
		{name: "labels", unschedulable: []string{"Labels"}},
	}
	tests := []struct {
		name  string
		event schedcore.ClusterEvent
		want  []string
	}{
		{
			name:  "a bound pod visits the pods its registrants rejected, those without rejectors and those without hints",
			event: assignedAdd,
			want:  []string{"spread", "error", "both", "other-profile"},
		},
		{
			name:  "a pod deletion visits every registrant's pods once, in the pool's order",
			event: assignedDelete,
			want:  []string{"fit", "spread", "error", "both", "other-profile"},
		},
		{
			name:  "a plain node update does not visit the pods of a label-update registration",
			event: nodeUpdate,
			want:  []string{"error", "other-profile"},
		},
		{
			name:  "a label update does",
			event: nodeLabel,
			want:  []string{"error", "other-profile", "labels"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			q, _ := newQueue(t, newFramework(t, filters))
			q.lock.Lock()
			defer q.lock.Unlock()
			for _, s := range pool {
				p := pod(s.name).UID(s.name).SchedulerName(v1.DefaultSchedulerName)
				if s.profile != "" {
					p.SchedulerName(s.profile)
				}
				q.unschedulable.addOrUpdate(&schedcore.QueuedPodInfo{
					PodInfo:              schedcore.NewPodInfo(p.Obj()),
					UnschedulablePlugins: sets.New(s.unschedulable...),
					PendingPlugins:       sets.New[string](),
				}, "test")
			}
			var got []string
			for _, c := range q.unschedulable.candidates(q.ix.plan(tc.event).lists, nil) {
				got = append(got, c.Pod.Name)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("candidates (-want +got):\n%s", diff)
			}
		})
	}
}

// TestRequeueIndexRefilesAPodGatedInPlace: a pod of the pool that an
// update requeues and a PreEnqueue plugin then gates stays in the pool, in
// its place, with the gate's plugin among its rejectors; an event only the
// gate registered must find it.
func TestRequeueIndexRefilesAPodGatedInPlace(t *testing.T) {
	labels := schedcore.ClusterEvent{Resource: schedcore.Pod, ActionType: schedcore.UpdatePodLabel}
	gateCalls := 0
	gate := &gatePlugin{
		name: "G",
		gate: func(p *v1.Pod) bool { return p.Labels["gate"] == "on" },
		events: []schedcore.ClusterEventWithHint{withHint(nodeAdd, func(logr.Logger, *v1.Pod, any, any) (schedcore.QueueingHint, error) {
			gateCalls++
			return schedcore.QueueSkip, nil
		})},
	}
	fw := newFramework(t, []*filterPlugin{{name: "D", events: []schedcore.ClusterEventWithHint{withHint(labels, queueAlways)}}}, gate)
	q, _ := newQueue(t, fw)
	p := pod("p").UID("p").Label("v", "0").Obj()
	q.Add(logger, p)
	if err := q.AddUnschedulableIfNotPresent(logger, popAndReject(t, q, "p", []string{"D"}, nil), q.SchedulingCycle()); err != nil {
		t.Fatal(err)
	}
	upd := p.DeepCopy()
	upd.Labels["gate"] = "on"
	q.Update(logger, p, upd)
	if got := where(q, upd); got != QueueGated {
		t.Fatalf("after the update the pod is in %s, want %s", got, QueueGated)
	}
	q.MoveAllToActiveOrBackoffQueue(logger, nodeAdd, nil, fitsNode, nil)
	if gateCalls != 1 {
		t.Errorf("the gate's hint was called %d times, want 1", gateCalls)
	}
}

// TestRequeueWalksThePoolWhenSkipsAreLogged: kube logs, at V(5), every pod
// of the pool an event does not move; with such a logger the event visits
// the whole pool, so pods the index would leave out are logged too.
func TestRequeueWalksThePoolWhenSkipsAreLogged(t *testing.T) {
	fw := newFramework(t, []*filterPlugin{
		{name: "Fit", events: []schedcore.ClusterEventWithHint{withHint(assignedDelete, nil)}},
		{name: "Spread", events: []schedcore.ClusterEventWithHint{withHint(assignedAdd, queueNever)}},
	})
	for _, tc := range []struct {
		name      string
		verbosity int
		want      []string
	}{
		{name: "at V(5) both pods are logged", verbosity: 5, want: []string{"default/fit", "default/spread"}},
		{name: "below V(5) nothing is logged", verbosity: 4},
	} {
		t.Run(tc.name, func(t *testing.T) {
			q, _ := newQueue(t, fw)
			for _, s := range []struct{ name, plugin string }{{"fit", "Fit"}, {"spread", "Spread"}} {
				q.Add(logger, pod(s.name).UID(s.name).Obj())
				if err := q.AddUnschedulableIfNotPresent(logger, popAndReject(t, q, s.name, []string{s.plugin}, nil), q.SchedulingCycle()); err != nil {
					t.Fatal(err)
				}
			}
			var logged []string
			l := funcr.New(func(_, args string) {
				if strings.Contains(args, "Event is not making pod schedulable") {
					logged = append(logged, regexp.MustCompile(`"pod"="([^"]*)"`).FindStringSubmatch(args)[1])
				}
			}, funcr.Options{Verbosity: tc.verbosity})
			q.MoveAllToActiveOrBackoffQueue(l, assignedAdd, nil, pod("bound").Node("n1").Obj(), nil)
			if diff := cmp.Diff(tc.want, logged); diff != "" {
				t.Errorf("pods logged as not moved (-want +got):\n%s", diff)
			}
		})
	}
}
