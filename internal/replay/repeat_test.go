package replay_test

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	v1 "k8s.io/api/core/v1"

	"github.com/kubectl-sched/kubectl-sched/internal/engine"
	"github.com/kubectl-sched/kubectl-sched/internal/replay"
	"github.com/kubectl-sched/kubectl-sched/internal/snapshot"
	"github.com/kubectl-sched/kubectl-sched/schedcore/schedtest"
)

// fromFiles is the trace of files read as `replay -f` reads them.
func fromFiles(t testing.TB, files ...string) *replay.Trace {
	t.Helper()
	cl := &snapshot.Cluster{}
	if err := cl.AddPaths(files, nil); err != nil {
		t.Fatal(err)
	}
	return mustTrace(t, cl)
}

// narrowed is a cluster of 150 equal empty nodes (more than the 100 a
// cycle samples at least, so where filtering starts decides which nodes a
// pod is scored on, and the lowest name among them wins) and a pod pinned
// by node affinity (a field selector on its name) to one node too small for it: its PreFilter narrows
// the nodes to that one, so each failed attempt moves the start node
// index by one. Pods arriving every ten minutes are placed where the
// index says.
func narrowed() *replay.Trace {
	tr := &replay.Trace{Start: t0}
	for i := range 150 {
		tr.Nodes = append(tr.Nodes, node(fmt.Sprintf("n%03d", i), "2"))
	}
	pinned := schedtest.MakePod("pinned").Req("cpu", "3").Obj()
	pinned.Spec.Affinity = &v1.Affinity{NodeAffinity: &v1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &v1.NodeSelector{
		NodeSelectorTerms: []v1.NodeSelectorTerm{{MatchFields: []v1.NodeSelectorRequirement{{Key: "metadata.name", Operator: v1.NodeSelectorOpIn, Values: []string{"n007"}}}}},
	}}}
	tr.Pods = append(tr.Pods, replay.Pod{Pod: pinned, Arrive: at(0)})
	for i := range 12 {
		tr.Pods = append(tr.Pods, pod(fmt.Sprintf("web-%02d", i), "1", float64(600*(i+1)), 0))
	}
	return tr
}

// preempting is four 2-cpu nodes, each running a 1-cpu pod of priority
// 20: a 2-cpu pod of priority 10 fits nowhere and finds no victims, but
// every node is worth a dry run, so each attempt draws the scan's offset
// (with a seed). A 2-cpu pod of priority 30 arriving later preempts one of
// the four equal candidates: the first in scan order, where the draws so
// far put the offset.
func preempting() *replay.Trace {
	tr := &replay.Trace{Start: t0}
	for i := range 4 {
		n := fmt.Sprintf("n%d", i)
		tr.Nodes = append(tr.Nodes, node(n, "2"))
		low := schedtest.MakePod("low-"+n).Req("cpu", "1").Priority(20).Obj()
		low.Spec.NodeName = n
		tr.Pods = append(tr.Pods, replay.Pod{Pod: low, Arrive: at(0)})
	}
	tr.Pods = append(tr.Pods,
		replay.Pod{Pod: schedtest.MakePod("huge").Req("cpu", "2").Priority(10).Obj(), Arrive: at(1)},
		replay.Pod{Pod: schedtest.MakePod("urgent").Req("cpu", "2").Priority(30).Obj(), Arrive: at(2000)})
	return tr
}

// guarded is one node running a pod that keeps pods labelled app=web off
// it: two web replicas arriving together fail alike (the second repeats
// the first's attempt), and a pod arriving with them that differs only in
// its labels fits.
func guarded() *replay.Trace {
	db := schedtest.MakePod("db").Req("cpu", "1").PodAntiAffinity(v1.LabelHostname, map[string]string{"app": "web"}).Obj()
	db.Spec.NodeName = "n1"
	web := func(name, app string) replay.Pod {
		return replay.Pod{Pod: schedtest.MakePod(name).Req("cpu", "1").Label("app", app).Obj(), Arrive: at(1)}
	}
	return &replay.Trace{Start: t0, Nodes: []replay.Node{node("n1", "4")},
		Pods: []replay.Pod{{Pod: db, Arrive: at(0)}, web("web-1", "web"), web("web-2", "web"), web("x-1", "other")}}
}

// comings is ten 1-cpu pods arriving every ten minutes from 60 s, each
// leaving 25 minutes after it came: changes to the cluster's pods that
// help no pod pinned elsewhere.
func comings() []replay.Pod {
	var out []replay.Pod
	for i := range 10 {
		out = append(out, pod(fmt.Sprintf("web-%02d", i), "1", float64(60+600*i), float64(60+600*i+1500)))
	}
	return out
}

// unfit is two nodes without the disk=ssd label, one of them tainted, and
// two replicas asking for it, which fail on node affinity and taints alone
// (no pod read) while the other pods come and go; a node with the label
// arrives at 7000 s and takes them.
func unfit() *replay.Trace {
	tainted := schedtest.MakeNode("n2").Capacity("cpu", "4", "memory", "8Gi").Taint("dedicated", "gpu", v1.TaintEffectNoSchedule).Obj()
	ssd := schedtest.MakeNode("ssd").Capacity("cpu", "4", "memory", "8Gi").Label("disk", "ssd").Obj()
	tr := &replay.Trace{Start: t0, Nodes: []replay.Node{node("n1", "4"), {Node: tainted}, {Node: ssd, Arrive: at(7000)}}}
	for _, name := range []string{"ssd-1", "ssd-2"} {
		tr.Pods = append(tr.Pods, replay.Pod{Pod: schedtest.MakePod(name).Req("cpu", "1").Label("app", "ssd").NodeSelector("disk", "ssd").Obj(), Arrive: at(1)})
	}
	tr.Pods = append(tr.Pods, comings()...)
	return tr
}

// following is two replicas whose required pod affinity no pod satisfies yet:
// InterPodAffinity rejects every node, UnschedulableAndUnresolvable, from
// the pods it counted. Its leader arrives at 2000 s.
func following() *replay.Trace {
	follower := func(name string) replay.Pod {
		return replay.Pod{Pod: schedtest.MakePod(name).Req("cpu", "1").PodAffinity(v1.LabelHostname, map[string]string{"app": "leader"}).Obj(), Arrive: at(1)}
	}
	leader := schedtest.MakePod("leader").Req("cpu", "1").Label("app", "leader").Obj()
	tr := &replay.Trace{Start: t0, Nodes: []replay.Node{node("n1", "4"), node("n2", "4")},
		Pods: []replay.Pod{follower("follower-1"), follower("follower-2"), {Pod: leader, Arrive: at(2000)}}}
	tr.Pods = append(tr.Pods, comings()...)
	return tr
}

// reordered is a profile whose filters run NodeResourcesFit before
// NodeAffinity, and a 3-cpu pod for zone a on a 4-cpu node of zone b:
// NodeAffinity rejects it there until a 1-cpu pod leaves the node too
// little room, and NodeResourcesFit, which comes first, rejects it.
func reordered(t *testing.T) (*replay.Trace, replay.Options) {
	cfg := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(cfg, []byte(`apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: default-scheduler
  plugins:
    filter:
      disabled: [{name: "*"}]
      enabled: [{name: NodeResourcesFit}, {name: NodeAffinity}]
`), 0o600); err != nil {
		t.Fatal(err)
	}
	o := defaults(t)
	c, err := engine.LoadConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	o.Config = c
	zoneB := schedtest.MakeNode("b1").Capacity("cpu", "4", "memory", "8Gi").Label("zone", "b").Obj()
	tr := &replay.Trace{Start: t0, Nodes: []replay.Node{{Node: zoneB}},
		Pods: []replay.Pod{
			{Pod: schedtest.MakePod("picky").Req("cpu", "3").NodeSelector("zone", "a").Obj(), Arrive: at(1)},
			pod("filler", "2", 900, 0),
		}}
	return tr, o
}

// TestRepeatedRetriesReportWhatRunningThemReports replays traces with
// the retries whose answer is known repeated and with every retry run:
// the results are equal, event for event.
func TestRepeatedRetriesReportWhatRunningThemReports(t *testing.T) {
	small := replay.Node{Node: schedtest.MakeNode("n1").Capacity("cpu", "1", "memory", "8Gi").Obj()}
	tests := []struct {
		name  string
		trace func(t *testing.T) *replay.Trace
		// options, when set, replace the defaults.
		options func(t *testing.T) (*replay.Trace, replay.Options)
		seed    bool
		// repeats: some retries are expected to be repeated, not run;
		// blind: some of them after other pods changed.
		repeats, blind bool
	}{
		{
			name:    "replicas that fit no node's labels or taints repeat their failure while other pods come and go; a node with the label takes them",
			trace:   func(*testing.T) *replay.Trace { return unfit() },
			repeats: true,
			blind:   true,
		},
		{
			name:    "a pod whose pod affinity no pod satisfies is rejected from the pods counted: retried for real after each change, placed once its leader runs",
			trace:   func(*testing.T) *replay.Trace { return following() },
			repeats: true,
		},
		{
			name:    "node affinity rejects every node but runs after NodeResourcesFit: a pod landing there changes the reason",
			options: reordered,
			repeats: true,
		},
		{
			name: "a node that arrives too small changes the next retry's message (0/2 nodes), a big one places the pod",
			trace: func(*testing.T) *replay.Trace {
				return &replay.Trace{Start: t0,
					Nodes: []replay.Node{small, {Node: node("n2", "1").Node, Arrive: at(60)}, {Node: node("n3", "4").Node, Arrive: at(3000)}},
					Pods:  []replay.Pod{pod("b", "2", 0, 0)}}
			},
			repeats: true,
		},
		{
			name: "a departure that frees too little changes nothing the retry reads but the pods on the node",
			trace: func(*testing.T) *replay.Trace {
				return &replay.Trace{Start: t0, Nodes: []replay.Node{node("n1", "4")},
					Pods: []replay.Pod{pod("a", "1", 0, 1000), pod("c", "2", 0, 0), pod("b", "3", 10, 0)}}
			},
			repeats: true,
		},
		{
			name:    "a failed attempt narrowed by PreFilter moves the start node index; repeated, it moves it as far",
			trace:   func(*testing.T) *replay.Trace { return narrowed() },
			repeats: true,
		},
		{
			name:    "repeated failures redraw the preemption scan's offsets: a later preemption picks the node running them picks",
			trace:   func(*testing.T) *replay.Trace { return preempting() },
			seed:    true,
			repeats: true,
		},
		{
			name:    "replicas share a failed attempt; a pod that differs only in its labels does not",
			trace:   func(*testing.T) *replay.Trace { return guarded() },
			repeats: true,
		},
		{
			name: "the example cluster and its eight hours of trace",
			trace: func(t *testing.T) *replay.Trace {
				return fromFiles(t, "../../examples/cluster.yaml", "../../examples/trace.yaml")
			},
			repeats: true,
			blind:   true,
		},
		{
			name: "the same with a seed: ties and preemption's scan offsets are drawn, and redrawn when repeated",
			trace: func(t *testing.T) *replay.Trace {
				return fromFiles(t, "../../examples/cluster.yaml", "../../examples/trace.yaml")
			},
			seed:    true,
			repeats: true,
			blind:   true,
		},
		{
			name:  "pod groups are always run (gangs hold state of their own)",
			trace: func(t *testing.T) *replay.Trace { return fromFiles(t, "../../examples/gang-trace.yaml") },
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var tr *replay.Trace
			var o replay.Options
			if tt.options != nil {
				tr, o = tt.options(t)
			} else {
				tr, o = tt.trace(t), defaults(t)
			}
			o.Seed, o.UseSeed = 1, tt.seed
			if !tt.repeats {
				o.Features.GenericWorkload = true
			}
			n0 := replay.RepeatedAttempts()
			run := mustRun(t, tr, replay.WithoutRepeats(o))
			n1, b1 := replay.RepeatedAttempts(), replay.BlindRepeats()
			repeated := mustRun(t, tr, o)
			n2, b2 := replay.RepeatedAttempts(), replay.BlindRepeats()
			if got := b2 > b1; got != tt.blind {
				t.Errorf("repeated %d attempts after other pods changed, want some: %v", b2-b1, tt.blind)
			}
			if n1 != n0 {
				t.Fatalf("without repeats, %d attempts were repeated", n1-n0)
			}
			if got := n2 > n1; got != tt.repeats {
				t.Errorf("repeated %d attempts, want some: %v", n2-n1, tt.repeats)
			}
			ignore := cmpopts.IgnoreFields(replay.Summary{}, "DurationSeconds")
			if diff := cmp.Diff(run, repeated, ignore); diff != "" {
				t.Errorf("repeated retries report otherwise (-run +repeated):\n%s", diff)
			}
		})
	}
}

// TestNoUnschedulableEventsLeavesOnlyThemOut replays with and without the
// unschedulable events: the rest of the result is the same.
func TestNoUnschedulableEventsLeavesOnlyThemOut(t *testing.T) {
	tests := []struct {
		name  string
		trace func(t *testing.T) *replay.Trace
	}{
		{name: "the example cluster and its trace", trace: func(t *testing.T) *replay.Trace {
			return fromFiles(t, "../../examples/cluster.yaml", "../../examples/trace.yaml")
		}},
		{name: "replicas that do not fit", trace: func(*testing.T) *replay.Trace { return guarded() }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tr := tt.trace(t)
			o := defaults(t)
			want := mustRun(t, tr, o)
			o.NoUnschedulableEvents = true
			got := mustRun(t, tr, o)
			var kept []replay.Event
			for _, e := range want.Events {
				if e.Type != replay.EventUnschedulable {
					kept = append(kept, e)
				}
			}
			if len(kept) == len(want.Events) {
				t.Fatal("the trace has no unschedulable event")
			}
			want.Events = kept
			ignore := cmpopts.IgnoreFields(replay.Summary{}, "DurationSeconds")
			if diff := cmp.Diff(want, got, ignore, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}
