package explain

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"

	"github.com/kubectl-sched/kubectl-sched/internal/dryrun"
	"github.com/kubectl-sched/kubectl-sched/internal/report"
	"github.com/kubectl-sched/kubectl-sched/internal/snapshot"
	st "github.com/kubectl-sched/kubectl-sched/schedcore/schedtest"
)

// TestAtTurnAgreesWithTheDryRun: explain --at-turn explains a pod on the
// state of its last attempt in a dry-run, so its verdict, node and message
// are the dry-run's, where the plain explanation (the dump as it is) says
// how many pending pods it leaves unplaced ahead of the pod.
func TestAtTurnAgreesWithTheDryRun(t *testing.T) {
	tests := []struct {
		name        string
		cl          *snapshot.Cluster
		pod         *v1.Pod // explained; from the cluster unless fromFile
		fromFile    bool
		seed        *int64
		wantAhead   int
		wantListed  string // Selected as listed, "" = unschedulable
		wantTurn    report.ExplainTurn
		wantVerdict string // Selected at its turn, "" = unschedulable
	}{
		{
			name:        "pods ahead fill the nodes: fits as listed, not at its turn",
			cl:          &snapshot.Cluster{Nodes: twoNodes(), Pods: []*v1.Pod{pendingPod("a", 1, "3"), pendingPod("b", 2, "3"), pendingPod("c", 3, "3")}},
			pod:         pendingPod("c", 3, "3"),
			wantAhead:   2,
			wantListed:  "n1",
			wantTurn:    report.ExplainTurn{Attempt: 1, PlacedBefore: 2},
			wantVerdict: "",
		},
		{
			name:        "the first pod of the queue: the same state both ways",
			cl:          &snapshot.Cluster{Nodes: twoNodes(), Pods: []*v1.Pod{pendingPod("a", 1, "3"), pendingPod("b", 2, "3")}},
			pod:         pendingPod("a", 1, "3"),
			wantListed:  "n1",
			wantTurn:    report.ExplainTurn{Attempt: 1, Node: "n1"},
			wantVerdict: "n1",
		},
		{
			name:        "a higher-priority pod created later is still ahead",
			cl:          &snapshot.Cluster{Nodes: []*v1.Node{node("n1").Obj()}, Pods: []*v1.Pod{pendingPod("a", 1, "3"), st.MakePod("vip").Namespace("ns").Req("cpu", "3").Priority(10).Created(2).Obj()}},
			pod:         pendingPod("a", 1, "3"),
			wantAhead:   1,
			wantListed:  "n1",
			wantTurn:    report.ExplainTurn{Attempt: 1, PlacedBefore: 1},
			wantVerdict: "",
		},
		{
			name: "a pod that preempts is explained at the attempt that places it",
			cl: &snapshot.Cluster{Nodes: []*v1.Node{node("n1").Obj()}, Pods: []*v1.Pod{
				st.MakePod("low").Namespace("ns").Req("cpu", "3").Priority(1).Node("n1").Obj(),
				st.MakePod("high").Namespace("ns").Req("cpu", "3").Priority(10).Created(1).Obj(),
			}},
			pod:         st.MakePod("high").Namespace("ns").Req("cpu", "3").Priority(10).Created(1).Obj(),
			wantListed:  "",
			wantTurn:    report.ExplainTurn{Attempt: 2, EvictedBefore: 1, Node: "n1"},
			wantVerdict: "n1",
		},
		{
			name:        "a pod from a file queues behind the pending pods of its priority",
			cl:          &snapshot.Cluster{Nodes: twoNodes(), Pods: []*v1.Pod{pendingPod("a", 1, "3"), pendingPod("b", 2, "3")}},
			pod:         st.MakePod("new").Namespace("ns").Req("cpu", "3").Obj(),
			fromFile:    true,
			wantAhead:   2,
			wantListed:  "n1",
			wantTurn:    report.ExplainTurn{Attempt: 1, PlacedBefore: 2},
			wantVerdict: "",
		},
		{
			name: "with a seed the node is the one the dry-run drew among the tied",
			cl: &snapshot.Cluster{Nodes: []*v1.Node{node("n1").Obj(), node("n2").Obj(), node("n3").Obj(), node("n4").Obj()},
				Pods: []*v1.Pod{pendingPod("a", 1, "1"), pendingPod("b", 2, "1"), pendingPod("c", 3, "1")}},
			pod:        pendingPod("c", 3, "1"),
			seed:       ptr(int64(7)),
			wantAhead:  2,
			wantListed: "*",
			wantTurn:   report.ExplainTurn{Attempt: 1, PlacedBefore: 2, Node: "*"},
		},
	}
	ctx := context.Background()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := options(t)
			if tt.seed != nil {
				o.Seed, o.UseSeed = *tt.seed, true
			}
			cl := tt.cl
			if tt.fromFile {
				// A dry-run of the dump and the pod, created after the
				// pending pods.
				newer := tt.pod.DeepCopy()
				newer.CreationTimestamp = st.MakePod("x").Created(3).Obj().CreationTimestamp
				withPod := *cl
				withPod.Pods = append(append([]*v1.Pod{}, cl.Pods...), newer)
				cl = &withPod
			}
			dr, err := dryrun.Run(ctx, cl, dryrun.Options{Config: o.Config, Registry: o.Registry, Seed: o.Seed, UseSeed: o.UseSeed})
			if err != nil {
				t.Fatal(err)
			}
			placedOn, message := "", ""
			for _, p := range dr.Placements {
				if p.Pod == "ns/"+tt.pod.Name {
					placedOn = p.Node
				}
			}
			for _, u := range dr.Unschedulable {
				if u.Pod == "ns/"+tt.pod.Name {
					message = u.Message
				}
			}

			listed, err := Run(ctx, tt.cl, tt.pod, o)
			if err != nil {
				t.Fatal(err)
			}
			if listed.State != StateAsListed || listed.Ahead != tt.wantAhead || listed.Turn != nil {
				t.Errorf("as listed: state %q, ahead %d, turn %v; want %q, %d, none", listed.State, listed.Ahead, listed.Turn, StateAsListed, tt.wantAhead)
			}
			if tt.wantListed != "*" && listed.Selected != tt.wantListed {
				t.Errorf("as listed: selected %q, want %q", listed.Selected, tt.wantListed)
			}

			at, err := RunAtTurn(ctx, tt.cl, tt.pod, o)
			if err != nil {
				t.Fatal(err)
			}
			want := tt.wantTurn
			if want.Node == "*" {
				want.Node = placedOn
			}
			if at.State != StateAtTurn || at.Ahead != 0 || at.Turn == nil {
				t.Fatalf("at its turn: state %q, ahead %d, turn %v", at.State, at.Ahead, at.Turn)
			}
			if d := cmp.Diff(want, *at.Turn); d != "" {
				t.Errorf("turn (-want +got):\n%s", d)
			}
			// The dry-run's answer, word for word.
			if at.Selected != placedOn {
				t.Errorf("at its turn: selected %q, the dry-run placed it on %q", at.Selected, placedOn)
			}
			if tt.wantTurn.Node != "*" && at.Selected != tt.wantVerdict {
				t.Errorf("at its turn: selected %q, want %q", at.Selected, tt.wantVerdict)
			}
			if placedOn == "" && (at.Message == "" || !strings.HasPrefix(message, at.Message)) {
				t.Errorf("at its turn: message %q, the dry-run's %q", at.Message, message)
			}
		})
	}
}

func ptr[T any](v T) *T { return &v }

// twoNodes are two nodes of 4 cpu.
func twoNodes() []*v1.Node { return []*v1.Node{node("n1").Obj(), node("n2").Obj()} }

// pendingPod is a pending pod of namespace ns created at second created.
func pendingPod(name string, created int64, cpu string) *v1.Pod {
	return st.MakePod(name).Namespace("ns").Req("cpu", cpu).Created(created).Obj()
}

func TestAtTurnRefusals(t *testing.T) {
	ctx := context.Background()
	nodes := []*v1.Node{node("n1").Obj()}
	gated := st.MakePod("gated").Namespace("ns").Obj()
	gated.Spec.SchedulingGates = []v1.PodSchedulingGate{{Name: "wait"}}
	tests := []struct {
		name    string
		pod     *v1.Pod
		node    string
		wantErr error
		wantMsg string
	}{
		{name: "a gated pod never has a turn", pod: gated, wantErr: ErrNeverAttempted, wantMsg: "pod ns/gated: never attempted in the dry-run (it has scheduling gates); explain it without --at-turn"},
		{name: "a scheduler no profile serves", pod: st.MakePod("x").Namespace("ns").SchedulerName("volcano").Obj(), wantErr: ErrUnknownProfile},
		{name: "an unknown --node is refused before the dry-run", pod: st.MakePod("x").Namespace("ns").Obj(), node: "nope", wantErr: ErrUnknownNode},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := options(t)
			o.Node = tt.node
			_, err := RunAtTurn(ctx, &snapshot.Cluster{Nodes: nodes, Pods: []*v1.Pod{tt.pod}}, tt.pod, o)
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("error %v, want %v", err, tt.wantErr)
			}
			if tt.wantMsg != "" && err.Error() != tt.wantMsg {
				t.Errorf("error %q, want %q", err, tt.wantMsg)
			}
		})
	}
	if _, err := RunAtTurn(ctx, &snapshot.Cluster{}, gated, options(t)); !errors.Is(err, ErrNoNodes) {
		t.Errorf("no nodes: %v, want ErrNoNodes", err)
	}
}
