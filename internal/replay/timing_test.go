package replay_test

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"

	"github.com/kubectl-sched/kubectl-sched/internal/replay"
	"github.com/kubectl-sched/kubectl-sched/schedcore/schedtest"
)

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func at(sec float64) time.Time { return t0.Add(time.Duration(sec * float64(time.Second))) }

func node(name, cpu string) replay.Node {
	return replay.Node{Node: schedtest.MakeNode(name).Capacity("cpu", cpu, "memory", "8Gi").Obj()}
}

func pod(name, cpu string, arrive, leave float64) replay.Pod {
	p := replay.Pod{Pod: schedtest.MakePod(name).Req("cpu", cpu).Obj(), Arrive: at(arrive)}
	if leave > 0 {
		p.Leave = at(leave)
	}
	return p
}

// line is an event as the tests compare it.
type line struct {
	At   float64
	Pod  string
	Type string
	Node string
}

func lines(res *replay.Result) []line {
	var out []line
	for _, e := range res.Events {
		out = append(out, line{e.Time.Sub(t0).Seconds(), e.Pod, e.Type, e.Node})
	}
	return out
}

func TestPodsAreRetriedWhenKubeSchedulerWouldRetryThem(t *testing.T) {
	tainted := replay.Node{Node: schedtest.MakeNode("n1").Capacity("cpu", "4", "memory", "8Gi").Taint("dedicated", "db", v1.TaintEffectNoSchedule).Obj()}
	tests := []struct {
		name  string
		trace replay.Trace
		o     func(*replay.Options)
		want  []line
	}{
		{
			name: "a pod that did not fit is placed the instant a departure frees room (the queueing hint requeues it)",
			trace: replay.Trace{Start: t0, Nodes: []replay.Node{node("n1", "4")},
				Pods: []replay.Pod{pod("a", "3", 0, 100), pod("b", "2", 10, 0)}},
			want: []line{
				{0, "default/a", "placed", "n1"},
				{10, "default/b", "unschedulable", ""},
				{100, "default/a", "departed", "n1"},
				{100, "default/b", "placed", "n1"},
			},
		},
		{
			name: "a pod that did not fit is placed the instant a node arrives",
			trace: replay.Trace{Start: t0, Nodes: []replay.Node{node("n1", "1"), {Node: node("n2", "4").Node, Arrive: at(50)}},
				Pods: []replay.Pod{pod("b", "2", 0, 0)}},
			want: []line{
				{0, "default/b", "unschedulable", ""},
				{50, "default/b", "placed", "n2"},
			},
		},
		{
			name: "a pod no event can help is retried by the unschedulable pool's flush, on the first 30s tick more than 5 minutes after its attempt, then left",
			trace: replay.Trace{Start: t0, Nodes: []replay.Node{tainted},
				Pods: []replay.Pod{pod("b", "1", 0, 0)}},
			want: []line{
				{0, "default/b", "unschedulable", ""},
				{330, "default/b", "unschedulable", ""},
			},
		},
		{
			name: "the flush happens on its tick even when pods arrive at that instant",
			trace: replay.Trace{Start: t0, Nodes: []replay.Node{tainted},
				Pods: []replay.Pod{pod("b", "1", 0, 0), pod("c", "1", 330, 0), pod("d", "1", 330, 0)}},
			want: []line{
				{0, "default/b", "unschedulable", ""},
				{330, "default/b", "unschedulable", ""},
				{330, "default/c", "unschedulable", ""},
				{330, "default/d", "unschedulable", ""},
				// A full stay after their attempts at 330 (the arrivals'
				// retries tie on their queue timestamps).
				{660, "default/b", "unschedulable", ""},
				{660, "default/d", "unschedulable", ""},
				{660, "default/c", "unschedulable", ""},
			},
		},
		{
			name: "a pod still pending when it leaves is deleted from the queue",
			trace: replay.Trace{Start: t0, Nodes: []replay.Node{tainted},
				Pods: []replay.Pod{pod("b", "1", 0, 60)}},
			want: []line{
				{0, "default/b", "unschedulable", ""},
				{60, "default/b", "deleted", ""},
			},
		},
		{
			name: "a pod whose node leaves departs with it; the deletion requeues the pod waiting for room, which still does not fit",
			trace: replay.Trace{Start: t0, Nodes: []replay.Node{node("n1", "4"), {Node: node("n2", "2").Node, Leave: at(30)}},
				Pods: []replay.Pod{pod("a", "3", 0, 0), pod("b", "2", 1, 0), pod("c", "2", 2, 0)}},
			want: []line{
				{0, "default/a", "placed", "n1"},
				{1, "default/b", "placed", "n2"},
				{2, "default/c", "unschedulable", ""},
				{30, "default/b", "departed", "n2"},
				{30, "default/c", "unschedulable", ""},
				{360, "default/c", "unschedulable", ""},
			},
		},
		{
			name: "a higher-priority pod preempts a lower one in its failed attempt and is placed at the same instant",
			trace: replay.Trace{Start: t0, Nodes: []replay.Node{node("n1", "4")},
				Pods: []replay.Pod{pod("low", "3", 0, 0), {Pod: schedtest.MakePod("high").Req("cpu", "3").Priority(100).Obj(), Arrive: at(5)}}},
			want: []line{
				{0, "default/low", "placed", "n1"},
				{5, "default/low", "preempted", "n1"},
				{5, "default/high", "unschedulable", ""},
				{5, "default/high", "placed", "n1"},
			},
		},
		{
			name: "--until stops the replay: later arrivals never come",
			trace: replay.Trace{Start: t0, Nodes: []replay.Node{node("n1", "4")},
				Pods: []replay.Pod{pod("a", "1", 0, 0), pod("b", "1", 3600, 0)}},
			o:    func(o *replay.Options) { o.Until = time.Hour - time.Second },
			want: []line{{0, "default/a", "placed", "n1"}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := defaults(t)
			if tt.o != nil {
				tt.o(&o)
			}
			res := mustRun(t, &tt.trace, o)
			if diff := cmp.Diff(tt.want, lines(res)); diff != "" {
				t.Errorf("events (-want +got):\n%s", diff)
			}
		})
	}
}

func TestInvalidTracesAreRejected(t *testing.T) {
	tests := []struct {
		name  string
		trace replay.Trace
		want  string
	}{
		{
			name:  "a pod leaving before it arrives",
			trace: replay.Trace{Start: t0, Nodes: []replay.Node{node("n1", "1")}, Pods: []replay.Pod{{Pod: schedtest.MakePod("p").Obj(), Arrive: at(10), Leave: at(5), Origin: "trace.yaml:12"}}},
			want:  "trace.yaml:12: Pod default/p: invalid trace: leaves at 2026-01-01T00:00:05Z, before it arrives at 2026-01-01T00:00:10Z",
		},
		{
			name:  "a pod named twice",
			trace: replay.Trace{Start: t0, Nodes: []replay.Node{node("n1", "1")}, Pods: []replay.Pod{pod("p", "1", 0, 0), pod("p", "1", 1, 0)}},
			want:  "pods[1]: Pod default/p: invalid trace: named twice",
		},
		{
			name:  "a pod arriving before the start",
			trace: replay.Trace{Start: t0, Nodes: []replay.Node{node("n1", "1")}, Pods: []replay.Pod{pod("p", "1", -1, 0)}},
			want:  "pods[0]: Pod default/p: invalid trace: arrives at 2025-12-31T23:59:59Z, before the trace starts at 2026-01-01T00:00:00Z",
		},
		{
			name:  "no node at the start (the engine needs one to start from)",
			trace: replay.Trace{Start: t0, Nodes: []replay.Node{{Node: node("n1", "1").Node, Arrive: at(9)}}},
			want:  "the trace has no node at its start",
		},
		{
			name:  "a node leaving before it arrives",
			trace: replay.Trace{Start: t0, Nodes: []replay.Node{{Node: node("n1", "1").Node, Arrive: at(9), Leave: at(1)}}},
			want:  "nodes[0]: Node n1: invalid trace: leaves at 2026-01-01T00:00:01Z, before it arrives at 2026-01-01T00:00:09Z",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := replay.Run(t.Context(), &tt.trace, defaults(t))
			if err == nil || err.Error() != tt.want {
				t.Errorf("got %v, want %q", err, tt.want)
			}
		})
	}
}
