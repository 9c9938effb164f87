package tainttoleration

import (
	"context"
	"testing"

	"github.com/go-logr/logr"
	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-sched/kubectl-sched/schedcore"
	"github.com/kubectl-sched/kubectl-sched/schedcore/plugintest"
	"github.com/kubectl-sched/kubectl-sched/schedcore/schedtest"
)

func newPlugin(t *testing.T) *TaintToleration {
	t.Helper()
	p, err := New(context.Background(), nil, schedcore.NewHandle(nil, 0))
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return p.(*TaintToleration)
}

func nodeWithTaints(name string, taints ...v1.Taint) *v1.Node {
	n := schedtest.MakeNode(name).Obj()
	n.Spec.Taints = taints
	return n
}

func podWithTolerations(tols ...v1.Toleration) *v1.Pod {
	p := schedtest.MakePod("p").Obj()
	p.Spec.Tolerations = tols
	return p
}

func nodeInfo(n *v1.Node) *schedcore.NodeInfo {
	ni := schedcore.NewNodeInfo()
	ni.SetNode(n)
	return ni
}

func TestFilter(t *testing.T) {
	untolerated := schedcore.NewStatus(schedcore.UnschedulableAndUnresolvable, ErrReasonUntoleratedTaint)
	tests := []struct {
		name string
		pod  *v1.Pod
		node *v1.Node
		want *schedcore.Status
	}{
		{
			name: "a pod without tolerations does not fit a node with a NoSchedule taint",
			pod:  podWithTolerations(),
			node: nodeWithTaints("n", v1.Taint{Key: "dedicated", Value: "user1", Effect: v1.TaintEffectNoSchedule}),
			want: untolerated,
		},
		{
			name: "a pod without tolerations does not fit a node with a NoExecute taint",
			pod:  podWithTolerations(),
			node: nodeWithTaints("n", v1.Taint{Key: "k", Value: "v", Effect: v1.TaintEffectNoExecute}),
			want: untolerated,
		},
		{
			name: "a pod tolerating the taint by key, value and effect fits",
			pod:  podWithTolerations(v1.Toleration{Key: "dedicated", Value: "user1", Effect: v1.TaintEffectNoSchedule}),
			node: nodeWithTaints("n", v1.Taint{Key: "dedicated", Value: "user1", Effect: v1.TaintEffectNoSchedule}),
		},
		{
			name: "a toleration with another value does not tolerate the taint",
			pod:  podWithTolerations(v1.Toleration{Key: "dedicated", Operator: v1.TolerationOpEqual, Value: "user2", Effect: v1.TaintEffectNoSchedule}),
			node: nodeWithTaints("n", v1.Taint{Key: "dedicated", Value: "user1", Effect: v1.TaintEffectNoSchedule}),
			want: untolerated,
		},
		{
			name: "an Exists toleration tolerates any value of the key",
			pod:  podWithTolerations(v1.Toleration{Key: "foo", Operator: v1.TolerationOpExists, Effect: v1.TaintEffectNoSchedule}),
			node: nodeWithTaints("n", v1.Taint{Key: "foo", Value: "bar", Effect: v1.TaintEffectNoSchedule}),
		},
		{
			name: "an Exists toleration without key tolerates every taint",
			pod:  podWithTolerations(v1.Toleration{Operator: v1.TolerationOpExists}),
			node: nodeWithTaints("n", v1.Taint{Key: "a", Effect: v1.TaintEffectNoSchedule}, v1.Taint{Key: "b", Effect: v1.TaintEffectNoExecute}),
		},
		{
			name: "all of several taints tolerated fits",
			pod: podWithTolerations(
				v1.Toleration{Key: "dedicated", Operator: v1.TolerationOpEqual, Value: "user2", Effect: v1.TaintEffectNoSchedule},
				v1.Toleration{Key: "foo", Operator: v1.TolerationOpExists, Effect: v1.TaintEffectNoSchedule}),
			node: nodeWithTaints("n",
				v1.Taint{Key: "dedicated", Value: "user2", Effect: v1.TaintEffectNoSchedule},
				v1.Taint{Key: "foo", Value: "bar", Effect: v1.TaintEffectNoSchedule}),
		},
		{
			name: "one of several taints untolerated does not fit",
			pod:  podWithTolerations(v1.Toleration{Key: "foo", Operator: v1.TolerationOpExists, Effect: v1.TaintEffectNoSchedule}),
			node: nodeWithTaints("n",
				v1.Taint{Key: "foo", Value: "bar", Effect: v1.TaintEffectNoSchedule},
				v1.Taint{Key: "other", Value: "x", Effect: v1.TaintEffectNoExecute}),
			want: untolerated,
		},
		{
			name: "a toleration whose non-empty effect differs does not tolerate the taint",
			pod:  podWithTolerations(v1.Toleration{Key: "foo", Operator: v1.TolerationOpEqual, Value: "bar", Effect: v1.TaintEffectPreferNoSchedule}),
			node: nodeWithTaints("n", v1.Taint{Key: "foo", Value: "bar", Effect: v1.TaintEffectNoSchedule}),
			want: untolerated,
		},
		{
			name: "a toleration with empty effect tolerates a NoSchedule taint",
			pod:  podWithTolerations(v1.Toleration{Key: "foo", Operator: v1.TolerationOpEqual, Value: "bar"}),
			node: nodeWithTaints("n", v1.Taint{Key: "foo", Value: "bar", Effect: v1.TaintEffectNoSchedule}),
		},
		{
			name: "a PreferNoSchedule taint never filters",
			pod:  podWithTolerations(v1.Toleration{Key: "dedicated", Operator: v1.TolerationOpEqual, Value: "user2", Effect: v1.TaintEffectNoSchedule}),
			node: nodeWithTaints("n", v1.Taint{Key: "dedicated", Value: "user1", Effect: v1.TaintEffectPreferNoSchedule}),
		},
		{
			name: "a node without taints fits a pod without tolerations",
			pod:  podWithTolerations(),
			node: nodeWithTaints("n"),
		},
		{
			name: "a Gt toleration never matches while the comparison operators gate is off",
			pod:  podWithTolerations(v1.Toleration{Key: "node.kubernetes.io/sla", Operator: v1.TolerationOpGt, Value: "750", Effect: v1.TaintEffectNoSchedule}),
			node: nodeWithTaints("n", v1.Taint{Key: "node.kubernetes.io/sla", Value: "950", Effect: v1.TaintEffectNoSchedule}),
			want: untolerated,
		},
		{
			name: "a Lt toleration never matches while the comparison operators gate is off",
			pod:  podWithTolerations(v1.Toleration{Key: "node.kubernetes.io/sla", Operator: v1.TolerationOpLt, Value: "950", Effect: v1.TaintEffectNoSchedule}),
			node: nodeWithTaints("n", v1.Taint{Key: "node.kubernetes.io/sla", Value: "800", Effect: v1.TaintEffectNoSchedule}),
			want: untolerated,
		},
		{
			name: "with the gate off only the Equal toleration of a mixed set is honoured",
			pod: podWithTolerations(
				v1.Toleration{Key: "node.kubernetes.io/sla", Operator: v1.TolerationOpGt, Value: "750", Effect: v1.TaintEffectNoSchedule},
				v1.Toleration{Key: "node.kubernetes.io/sla", Operator: v1.TolerationOpEqual, Value: "950", Effect: v1.TaintEffectNoSchedule}),
			node: nodeWithTaints("n", v1.Taint{Key: "node.kubernetes.io/sla", Value: "950", Effect: v1.TaintEffectNoSchedule}),
		},
	}
	pl := newPlugin(t)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			state := schedcore.NewCycleState()
			if _, s := pl.PreFilter(context.Background(), state, tc.pod, nil); !s.IsSuccess() {
				t.Fatalf("PreFilter: %v", s)
			}
			got := pl.Filter(context.Background(), state, tc.pod, nodeInfo(tc.node))
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Filter (-want +got):\n%s", diff)
			}
		})
	}
}

func TestScore(t *testing.T) {
	tests := []struct {
		name  string
		pod   *v1.Pod
		nodes []*v1.Node
		raw   []int64
		want  schedcore.NodeScoreList
	}{
		{
			name: "a node whose PreferNoSchedule taint is tolerated scores higher than one whose taint is not",
			pod:  podWithTolerations(v1.Toleration{Key: "foo", Operator: v1.TolerationOpEqual, Value: "bar", Effect: v1.TaintEffectPreferNoSchedule}),
			nodes: []*v1.Node{
				nodeWithTaints("nodeA", v1.Taint{Key: "foo", Value: "bar", Effect: v1.TaintEffectPreferNoSchedule}),
				nodeWithTaints("nodeB", v1.Taint{Key: "foo", Value: "blah", Effect: v1.TaintEffectPreferNoSchedule}),
			},
			raw:  []int64{0, 1},
			want: schedcore.NodeScoreList{{Name: "nodeA", Score: 100}, {Name: "nodeB", Score: 0}},
		},
		{
			name: "nodes whose taints are all tolerated score the same however many taints they have",
			pod: podWithTolerations(
				v1.Toleration{Key: "cpu-type", Operator: v1.TolerationOpEqual, Value: "arm64", Effect: v1.TaintEffectPreferNoSchedule},
				v1.Toleration{Key: "disk-type", Operator: v1.TolerationOpEqual, Value: "ssd", Effect: v1.TaintEffectPreferNoSchedule}),
			nodes: []*v1.Node{
				nodeWithTaints("nodeA"),
				nodeWithTaints("nodeB", v1.Taint{Key: "cpu-type", Value: "arm64", Effect: v1.TaintEffectPreferNoSchedule}),
				nodeWithTaints("nodeC",
					v1.Taint{Key: "cpu-type", Value: "arm64", Effect: v1.TaintEffectPreferNoSchedule},
					v1.Taint{Key: "disk-type", Value: "ssd", Effect: v1.TaintEffectPreferNoSchedule}),
			},
			raw:  []int64{0, 0, 0},
			want: schedcore.NodeScoreList{{Name: "nodeA", Score: 100}, {Name: "nodeB", Score: 100}, {Name: "nodeC", Score: 100}},
		},
		{
			name: "the more intolerable taints a node has the lower it scores",
			pod:  podWithTolerations(v1.Toleration{Key: "foo", Operator: v1.TolerationOpEqual, Value: "bar", Effect: v1.TaintEffectPreferNoSchedule}),
			nodes: []*v1.Node{
				nodeWithTaints("nodeA"),
				nodeWithTaints("nodeB", v1.Taint{Key: "cpu-type", Value: "arm64", Effect: v1.TaintEffectPreferNoSchedule}),
				nodeWithTaints("nodeC",
					v1.Taint{Key: "cpu-type", Value: "arm64", Effect: v1.TaintEffectPreferNoSchedule},
					v1.Taint{Key: "disk-type", Value: "ssd", Effect: v1.TaintEffectPreferNoSchedule}),
			},
			raw:  []int64{0, 1, 2},
			want: schedcore.NodeScoreList{{Name: "nodeA", Score: 100}, {Name: "nodeB", Score: 50}, {Name: "nodeC", Score: 0}},
		},
		{
			name: "only PreferNoSchedule taints are counted and NoSchedule tolerations do not tolerate them",
			pod: podWithTolerations(
				v1.Toleration{Key: "cpu-type", Operator: v1.TolerationOpEqual, Value: "arm64", Effect: v1.TaintEffectNoSchedule},
				v1.Toleration{Key: "disk-type", Operator: v1.TolerationOpEqual, Value: "ssd", Effect: v1.TaintEffectNoSchedule}),
			nodes: []*v1.Node{
				nodeWithTaints("nodeA"),
				nodeWithTaints("nodeB", v1.Taint{Key: "cpu-type", Value: "arm64", Effect: v1.TaintEffectNoSchedule}),
				nodeWithTaints("nodeC",
					v1.Taint{Key: "cpu-type", Value: "arm64", Effect: v1.TaintEffectPreferNoSchedule},
					v1.Taint{Key: "disk-type", Value: "ssd", Effect: v1.TaintEffectPreferNoSchedule}),
			},
			raw:  []int64{0, 0, 2},
			want: schedcore.NodeScoreList{{Name: "nodeA", Score: 100}, {Name: "nodeB", Score: 100}, {Name: "nodeC", Score: 0}},
		},
		{
			name: "a toleration with empty effect tolerates a PreferNoSchedule taint",
			pod:  podWithTolerations(v1.Toleration{Key: "foo", Operator: v1.TolerationOpExists}),
			nodes: []*v1.Node{
				nodeWithTaints("nodeA", v1.Taint{Key: "foo", Value: "x", Effect: v1.TaintEffectPreferNoSchedule}),
				nodeWithTaints("nodeB", v1.Taint{Key: "bar", Value: "x", Effect: v1.TaintEffectPreferNoSchedule}),
			},
			raw:  []int64{0, 1},
			want: schedcore.NodeScoreList{{Name: "nodeA", Score: 100}, {Name: "nodeB", Score: 0}},
		},
		{
			name: "a pod without tolerations prefers the node without taints",
			pod:  podWithTolerations(),
			nodes: []*v1.Node{
				nodeWithTaints("nodeA"),
				nodeWithTaints("nodeB", v1.Taint{Key: "cpu-type", Value: "arm64", Effect: v1.TaintEffectPreferNoSchedule}),
			},
			raw:  []int64{0, 1},
			want: schedcore.NodeScoreList{{Name: "nodeA", Score: 100}, {Name: "nodeB", Score: 0}},
		},
		{
			name: "the reversed normalization uses integer division",
			pod:  podWithTolerations(),
			nodes: []*v1.Node{
				nodeWithTaints("nodeA", v1.Taint{Key: "a", Effect: v1.TaintEffectPreferNoSchedule}),
				nodeWithTaints("nodeB", v1.Taint{Key: "a", Effect: v1.TaintEffectPreferNoSchedule}, v1.Taint{Key: "b", Effect: v1.TaintEffectPreferNoSchedule}, v1.Taint{Key: "c", Effect: v1.TaintEffectPreferNoSchedule}),
			},
			raw:  []int64{1, 3},
			want: schedcore.NodeScoreList{{Name: "nodeA", Score: 67}, {Name: "nodeB", Score: 0}},
		},
	}
	pl := newPlugin(t)
	ctx := context.Background()
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			state := schedcore.NewCycleState()
			nodes := make([]*schedcore.NodeInfo, len(tc.nodes))
			for i, n := range tc.nodes {
				nodes[i] = nodeInfo(n)
			}
			if s := pl.PreScore(ctx, state, tc.pod, nodes); !s.IsSuccess() {
				t.Fatalf("PreScore: %v", s)
			}
			var raw []int64
			var got schedcore.NodeScoreList
			for _, ni := range nodes {
				sc, s := pl.Score(ctx, state, tc.pod, ni)
				if !s.IsSuccess() {
					t.Fatalf("Score: %v", s)
				}
				raw = append(raw, sc)
				got = append(got, schedcore.NodeScore{Name: ni.Name(), Score: sc})
			}
			if diff := cmp.Diff(tc.raw, raw); diff != "" {
				t.Errorf("raw scores (-want +got):\n%s", diff)
			}
			if s := plugintest.Normalize(ctx, pl, state, tc.pod, got); !s.IsSuccess() {
				t.Fatalf("NormalizeScore: %v", s)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("normalized scores (-want +got):\n%s", diff)
			}
		})
	}
}

func TestScoreWithoutPreScoreIsAnError(t *testing.T) {
	pl := newPlugin(t)
	_, s := pl.Score(context.Background(), schedcore.NewCycleState(), podWithTolerations(), nodeInfo(nodeWithTaints("n")))
	want := schedcore.NewStatus(schedcore.Error, `reading "PreScoreTaintToleration" from cycleState: not found`)
	if diff := cmp.Diff(want, s); diff != "" {
		t.Errorf("status (-want +got):\n%s", diff)
	}
}

func TestEventsToRegister(t *testing.T) {
	events, err := newPlugin(t).EventsToRegister(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var got []schedcore.ClusterEvent
	for _, e := range events {
		if e.QueueingHintFn == nil {
			t.Errorf("event %v has no hint", e.Event.Label())
		}
		got = append(got, e.Event)
	}
	want := []schedcore.ClusterEvent{
		{Resource: schedcore.Node, ActionType: schedcore.Add | schedcore.UpdateNodeTaint},
		{Resource: schedcore.TargetPod, ActionType: schedcore.UpdatePodToleration},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
}

func TestIsSchedulableAfterNodeChange(t *testing.T) {
	pod := podWithTolerations(v1.Toleration{Key: "dedicated", Operator: v1.TolerationOpEqual, Value: "user2", Effect: v1.TaintEffectNoSchedule})
	tests := []struct {
		name           string
		oldObj, newObj any
		want           schedcore.QueueingHint
		wantErr        bool
	}{
		{name: "a new object that is not a node queues with an error", newObj: "not-a-node", want: schedcore.Queue, wantErr: true},
		{
			name:   "an old object that is not a node queues with an error",
			oldObj: "not-a-node", newObj: nodeWithTaints("n", v1.Taint{Key: "dedicated", Value: "user1", Effect: v1.TaintEffectNoSchedule}),
			want: schedcore.Queue, wantErr: true,
		},
		{
			name:   "an added node with an untolerated taint is skipped",
			newObj: nodeWithTaints("n", v1.Taint{Key: "dedicated", Value: "user1", Effect: v1.TaintEffectNoSchedule}),
			want:   schedcore.QueueSkip,
		},
		{
			name:   "an added node whose taints are tolerated queues",
			newObj: nodeWithTaints("n", v1.Taint{Key: "dedicated", Value: "user2", Effect: v1.TaintEffectNoSchedule}),
			want:   schedcore.Queue,
		},
		{
			name:   "an update that keeps an untolerated taint is skipped",
			oldObj: nodeWithTaints("n", v1.Taint{Key: "dedicated", Value: "user1", Effect: v1.TaintEffectNoSchedule}),
			newObj: nodeWithTaints("n", v1.Taint{Key: "dedicated", Value: "user1", Effect: v1.TaintEffectNoSchedule}, v1.Taint{Key: "dedicated", Value: "user3", Effect: v1.TaintEffectNoSchedule}),
			want:   schedcore.QueueSkip,
		},
		{
			name:   "an update that makes the taints tolerated queues",
			oldObj: nodeWithTaints("n", v1.Taint{Key: "dedicated", Value: "user1", Effect: v1.TaintEffectNoSchedule}),
			newObj: nodeWithTaints("n", v1.Taint{Key: "dedicated", Value: "user2", Effect: v1.TaintEffectNoSchedule}),
			want:   schedcore.Queue,
		},
		{
			name:   "an update of a node that was already tolerated is skipped",
			oldObj: nodeWithTaints("n"),
			newObj: nodeWithTaints("n", v1.Taint{Key: "x", Effect: v1.TaintEffectPreferNoSchedule}),
			want:   schedcore.QueueSkip,
		},
	}
	pl := newPlugin(t)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := pl.isSchedulableAfterNodeChange(logr.Discard(), pod, tc.oldObj, tc.newObj)
			if (err != nil) != tc.wantErr {
				t.Errorf("error = %v, wantErr %v", err, tc.wantErr)
			}
			if got != tc.want {
				t.Errorf("hint = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestIsSchedulableAfterTargetPodTolerationChange(t *testing.T) {
	old := podWithTolerations()
	updated := podWithTolerations(v1.Toleration{Key: "foo", Effect: v1.TaintEffectNoSchedule})
	got, err := newPlugin(t).isSchedulableAfterTargetPodTolerationChange(logr.Discard(), updated, old, updated)
	if err != nil || got != schedcore.Queue {
		t.Errorf("hint = %v, %v; want Queue, nil", got, err)
	}
}

func TestComparisonOperatorsFollowTheFeatureGate(t *testing.T) {
	node := &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n"}, Spec: v1.NodeSpec{Taints: []v1.Taint{{Key: "tier", Value: "5", Effect: v1.TaintEffectNoSchedule}}}}
	pod := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p"}, Spec: v1.PodSpec{Tolerations: []v1.Toleration{{Key: "tier", Operator: "Gt", Value: "3", Effect: v1.TaintEffectNoSchedule}}}}
	for _, on := range []bool{false, true} {
		f := schedcore.DefaultFeatures
		f.TaintTolerationComparisonOperators = on
		h := schedcore.NewHandle(nil, 0, schedcore.WithFeatures(f))
		p, err := New(context.Background(), nil, h)
		if err != nil {
			t.Fatal(err)
		}
		ni := schedcore.NewNodeInfo()
		ni.SetNode(node)
		st := p.(*TaintToleration).Filter(context.Background(), schedcore.NewCycleState(), pod, ni)
		// kube v1.37 has the gate off: a Gt toleration tolerates nothing.
		if st.IsSuccess() != on {
			t.Errorf("gate %v: Filter = %v", on, st)
		}
	}
}

// TestExplainFilterNamesEveryUntoleratedTaint checks the explanation of a
// rejection: every NoSchedule and NoExecute taint no toleration tolerates,
// under the same comparison-operator gate the Filter reads.
func TestExplainFilterNamesEveryUntoleratedTaint(t *testing.T) {
	taints := []v1.Taint{
		{Key: "dedicated", Value: "gpu", Effect: v1.TaintEffectNoSchedule},
		{Key: "soft", Value: "x", Effect: v1.TaintEffectPreferNoSchedule},
		{Key: "tier", Value: "5", Effect: v1.TaintEffectNoExecute},
	}
	gt := v1.Toleration{Key: "tier", Operator: "Gt", Value: "3", Effect: v1.TaintEffectNoExecute}
	tests := []struct {
		name string
		gate bool
		tols []v1.Toleration
		want *schedcore.FilterExplanation
	}{
		{"every hard taint untolerated is named, PreferNoSchedule is not", false, nil,
			schedcore.NewFilterExplanation(1, "taint dedicated=gpu:NoSchedule not tolerated", "taint tier=5:NoExecute not tolerated")},
		{"a Gt toleration tolerates nothing with the gate off", false, []v1.Toleration{gt},
			schedcore.NewFilterExplanation(1, "taint dedicated=gpu:NoSchedule not tolerated", "taint tier=5:NoExecute not tolerated")},
		{"with the gate on it tolerates tier=5", true, []v1.Toleration{gt},
			schedcore.NewFilterExplanation(1, "taint dedicated=gpu:NoSchedule not tolerated")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := schedcore.DefaultFeatures
			f.TaintTolerationComparisonOperators = tt.gate
			p, err := New(context.Background(), nil, schedcore.NewHandle(nil, 0, schedcore.WithFeatures(f)))
			if err != nil {
				t.Fatal(err)
			}
			pl := p.(*TaintToleration)
			pod, ni := podWithTolerations(tt.tols...), nodeInfo(nodeWithTaints("n", taints...))
			st := pl.Filter(context.Background(), schedcore.NewCycleState(), pod, ni)
			if st.IsSuccess() {
				t.Fatal("Filter passed the node")
			}
			if d := cmp.Diff(tt.want, pl.ExplainFilter(context.Background(), schedcore.NewCycleState(), pod, ni, st)); d != "" {
				t.Errorf("ExplainFilter (-want +got):\n%s", d)
			}
		})
	}
}
