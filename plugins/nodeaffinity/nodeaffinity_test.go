package nodeaffinity

import (
	"context"
	"testing"

	"github.com/go-logr/logr"
	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	configv1 "k8s.io/kube-scheduler/config/v1"

	"github.com/kubectl-sched/kubectl-sched/schedcore"
	"github.com/kubectl-sched/kubectl-sched/schedcore/plugintest"
	"github.com/kubectl-sched/kubectl-sched/schedcore/schedtest"
)

func req(key string, op v1.NodeSelectorOperator, values ...string) v1.NodeSelectorRequirement {
	return v1.NodeSelectorRequirement{Key: key, Operator: op, Values: values}
}

func exprTerm(reqs ...v1.NodeSelectorRequirement) v1.NodeSelectorTerm {
	return v1.NodeSelectorTerm{MatchExpressions: reqs}
}

func nameTerm(names ...string) v1.NodeSelectorTerm {
	return v1.NodeSelectorTerm{MatchFields: []v1.NodeSelectorRequirement{req(metav1.ObjectNameField, v1.NodeSelectorOpIn, names...)}}
}

func requiredPod(terms ...v1.NodeSelectorTerm) *v1.Pod {
	p := schedtest.MakePod("p").Obj()
	p.Spec.Affinity = &v1.Affinity{NodeAffinity: &v1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &v1.NodeSelector{NodeSelectorTerms: terms}}}
	return p
}

func preferredPod(terms ...v1.PreferredSchedulingTerm) *v1.Pod {
	p := schedtest.MakePod("p").Obj()
	p.Spec.Affinity = &v1.Affinity{NodeAffinity: &v1.NodeAffinity{PreferredDuringSchedulingIgnoredDuringExecution: terms}}
	return p
}

func selectorPod(sel map[string]string) *v1.Pod {
	p := schedtest.MakePod("p").Obj()
	p.Spec.NodeSelector = sel
	return p
}

func pref(weight int32, reqs ...v1.NodeSelectorRequirement) v1.PreferredSchedulingTerm {
	return v1.PreferredSchedulingTerm{Weight: weight, Preference: exprTerm(reqs...)}
}

func makeNode(name string, labels map[string]string) *v1.Node {
	return &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}}
}

func nodeInfo(n *v1.Node) *schedcore.NodeInfo {
	ni := schedcore.NewNodeInfo()
	ni.SetNode(n)
	return ni
}

func newPlugin(t *testing.T, args *configv1.NodeAffinityArgs) *NodeAffinity {
	t.Helper()
	var obj = NewArgs()
	if args != nil {
		obj = args
	}
	p, err := New(context.Background(), obj, schedcore.NewHandle(nil, 0))
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return p.(*NodeAffinity)
}

func addedRequired(terms ...v1.NodeSelectorTerm) *configv1.NodeAffinityArgs {
	return &configv1.NodeAffinityArgs{AddedAffinity: &v1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &v1.NodeSelector{NodeSelectorTerms: terms}}}
}

func TestFilter(t *testing.T) {
	reasonPod := schedcore.NewStatus(schedcore.UnschedulableAndUnresolvable, ErrReasonPod)
	tests := []struct {
		name             string
		args             *configv1.NodeAffinityArgs
		pod              *v1.Pod
		nodeName         string
		labels           map[string]string
		skipPreFilter    bool
		wantPreFilter    *schedcore.Status
		wantPreFilterRes *schedcore.PreFilterResult
		want             *schedcore.Status
	}{
		{
			name:   "a node missing the nodeSelector's labels does not match",
			pod:    selectorPod(map[string]string{"foo": "bar"}),
			want:   reasonPod,
			labels: nil,
		},
		{
			name:   "a node with the nodeSelector's labels matches",
			pod:    selectorPod(map[string]string{"foo": "bar"}),
			labels: map[string]string{"foo": "bar"},
		},
		{
			name:   "a node whose labels are a superset of the nodeSelector matches",
			pod:    selectorPod(map[string]string{"foo": "bar"}),
			labels: map[string]string{"foo": "bar", "baz": "blah"},
		},
		{
			name:   "a node whose labels are a subset of the nodeSelector does not match",
			pod:    selectorPod(map[string]string{"foo": "bar", "baz": "blah"}),
			labels: map[string]string{"foo": "bar"},
			want:   reasonPod,
		},
		{
			name:   "an empty but set nodeSelector is not skipped and matches every node",
			pod:    selectorPod(map[string]string{}),
			labels: map[string]string{"foo": "bar"},
		},
		{
			name:   "an In expression matching the node's label matches",
			pod:    requiredPod(exprTerm(req("foo", v1.NodeSelectorOpIn, "value1", "value2"))),
			labels: map[string]string{"foo": "value2"},
		},
		{
			name:   "a Gt expression below the node's value matches",
			pod:    requiredPod(exprTerm(req("kernel-version", v1.NodeSelectorOpGt, "0204"))),
			labels: map[string]string{"kernel-version": "0206"},
		},
		{
			name:   "a NotIn expression not listing the node's value matches",
			pod:    requiredPod(exprTerm(req("mem-type", v1.NodeSelectorOpNotIn, "DDR", "DDR2"))),
			labels: map[string]string{"mem-type": "DDR3"},
		},
		{
			name:   "an Exists expression on a present label matches",
			pod:    requiredPod(exprTerm(req("GPU", v1.NodeSelectorOpExists))),
			labels: map[string]string{"GPU": "NVIDIA-GRID-K1"},
		},
		{
			name:   "an expression that does not match the node's labels rejects it",
			pod:    requiredPod(exprTerm(req("foo", v1.NodeSelectorOpIn, "value1", "value2"))),
			labels: map[string]string{"foo": "bar"},
			want:   reasonPod,
		},
		{
			name:   "an empty term matches no node",
			pod:    requiredPod(v1.NodeSelectorTerm{}),
			labels: map[string]string{"foo": "bar"},
			want:   reasonPod,
		},
		{
			name:   "required affinity without terms matches no node",
			pod:    requiredPod(),
			labels: map[string]string{"foo": "bar"},
			want:   reasonPod,
		},
		{
			name:          "a pod without affinity or nodeSelector is skipped in PreFilter",
			pod:           schedtest.MakePod("p").Obj(),
			labels:        map[string]string{"foo": "bar"},
			wantPreFilter: schedcore.NewStatus(schedcore.Skip),
		},
		{
			name: "a pod with only preferred node affinity is skipped in PreFilter",
			pod:  preferredPod(pref(1, req("foo", v1.NodeSelectorOpIn, "bar"))),
			labels: map[string]string{
				"foo": "bar",
			},
			wantPreFilter: schedcore.NewStatus(schedcore.Skip),
		},
		{
			name:   "ANDed expressions all matching match",
			pod:    requiredPod(exprTerm(req("GPU", v1.NodeSelectorOpExists), req("GPU", v1.NodeSelectorOpNotIn, "AMD", "INTER"))),
			labels: map[string]string{"GPU": "NVIDIA-GRID-K1"},
		},
		{
			name:   "ANDed expressions with one failing do not match",
			pod:    requiredPod(exprTerm(req("GPU", v1.NodeSelectorOpExists), req("GPU", v1.NodeSelectorOpIn, "AMD", "INTER"))),
			labels: map[string]string{"GPU": "NVIDIA-GRID-K1"},
			want:   reasonPod,
		},
		{
			name:   "ORed terms match when one term matches",
			pod:    requiredPod(exprTerm(req("foo", v1.NodeSelectorOpIn, "bar", "value2")), exprTerm(req("diffkey", v1.NodeSelectorOpIn, "wrong", "value2"))),
			labels: map[string]string{"foo": "bar"},
		},
		{
			name: "affinity and nodeSelector both matching match",
			pod: func() *v1.Pod {
				p := requiredPod(exprTerm(req("foo", v1.NodeSelectorOpExists)))
				p.Spec.NodeSelector = map[string]string{"foo": "bar"}
				return p
			}(),
			labels: map[string]string{"foo": "bar"},
		},
		{
			name: "matching affinity but a failing nodeSelector does not match",
			pod: func() *v1.Pod {
				p := requiredPod(exprTerm(req("foo", v1.NodeSelectorOpExists)))
				p.Spec.NodeSelector = map[string]string{"foo": "bar"}
				return p
			}(),
			labels: map[string]string{"foo": "barrrrrr"},
			want:   reasonPod,
		},
		{
			name:   "an invalid value in a term makes it match nothing",
			pod:    requiredPod(exprTerm(req("foo", v1.NodeSelectorOpNotIn, "invalid value: ___@#$%^"))),
			labels: map[string]string{"foo": "bar"},
			want:   reasonPod,
		},
		{
			name:             "a metadata.name In matchField pins the pod to that node",
			pod:              requiredPod(nameTerm("node1")),
			nodeName:         "node1",
			wantPreFilterRes: &schedcore.PreFilterResult{NodeNames: sets.New("node1")},
		},
		{
			name:             "a metadata.name matchField rejects other nodes",
			pod:              requiredPod(nameTerm("node1")),
			nodeName:         "node2",
			wantPreFilterRes: &schedcore.PreFilterResult{NodeNames: sets.New("node1")},
			want:             reasonPod,
		},
		{
			name:     "a term without matchFields lifts the node restriction",
			pod:      requiredPod(nameTerm("node1"), exprTerm(req("foo", v1.NodeSelectorOpIn, "bar"))),
			nodeName: "node2",
			labels:   map[string]string{"foo": "bar"},
		},
		{
			name: "matchFields and matchExpressions in one term are ANDed",
			pod: requiredPod(v1.NodeSelectorTerm{
				MatchExpressions: []v1.NodeSelectorRequirement{req("foo", v1.NodeSelectorOpIn, "bar")},
				MatchFields:      []v1.NodeSelectorRequirement{req(metav1.ObjectNameField, v1.NodeSelectorOpIn, "node1")},
			}),
			nodeName:         "node2",
			labels:           map[string]string{"foo": "bar"},
			wantPreFilterRes: &schedcore.PreFilterResult{NodeNames: sets.New("node1")},
			want:             reasonPod,
		},
		{
			name: "matchFields and matchExpressions in one term both matching match",
			pod: requiredPod(v1.NodeSelectorTerm{
				MatchExpressions: []v1.NodeSelectorRequirement{req("foo", v1.NodeSelectorOpIn, "bar")},
				MatchFields:      []v1.NodeSelectorRequirement{req(metav1.ObjectNameField, v1.NodeSelectorOpIn, "node1")},
			}),
			nodeName:         "node1",
			labels:           map[string]string{"foo": "bar"},
			wantPreFilterRes: &schedcore.PreFilterResult{NodeNames: sets.New("node1")},
		},
		{
			name:             "two name terms give the union of their nodes",
			pod:              requiredPod(nameTerm("node1"), nameTerm("node2")),
			nodeName:         "node2",
			wantPreFilterRes: &schedcore.PreFilterResult{NodeNames: sets.New("node1", "node2")},
		},
		{
			// A metadata.name requirement must have one value to parse, so
			// the node is still rejected by Filter, as in kube.
			name:             "name requirements in one term are intersected but multi-value ones never match",
			pod:              requiredPod(v1.NodeSelectorTerm{MatchFields: []v1.NodeSelectorRequirement{req(metav1.ObjectNameField, v1.NodeSelectorOpIn, "node1", "node2"), req(metav1.ObjectNameField, v1.NodeSelectorOpIn, "node2", "node3")}}),
			nodeName:         "node2",
			wantPreFilterRes: &schedcore.PreFilterResult{NodeNames: sets.New("node2")},
			want:             reasonPod,
		},
		{
			name:     "a metadata.name NotIn matchField does not restrict nodes",
			pod:      requiredPod(v1.NodeSelectorTerm{MatchFields: []v1.NodeSelectorRequirement{req(metav1.ObjectNameField, v1.NodeSelectorOpNotIn, "node1")}}),
			nodeName: "node2",
		},
		{
			name:          "conflicting name requirements reject the pod in PreFilter",
			pod:           requiredPod(v1.NodeSelectorTerm{MatchFields: []v1.NodeSelectorRequirement{req(metav1.ObjectNameField, v1.NodeSelectorOpIn, "node1"), req(metav1.ObjectNameField, v1.NodeSelectorOpIn, "node2")}}),
			nodeName:      "node2",
			labels:        map[string]string{"foo": "bar"},
			wantPreFilter: schedcore.NewStatus(schedcore.UnschedulableAndUnresolvable, ErrReasonConflict),
			want:          reasonPod,
		},
		{
			name:     "a node matching the added affinity and the pod's affinity fits",
			args:     addedRequired(exprTerm(req("zone", v1.NodeSelectorOpIn, "foo"))),
			pod:      requiredPod(exprTerm(req("foo", v1.NodeSelectorOpIn, "bar"))),
			nodeName: "node1",
			labels:   map[string]string{"foo": "bar", "zone": "foo"},
		},
		{
			name:     "a node matching the added affinity but not the pod's is rejected for the pod",
			args:     addedRequired(exprTerm(req("zone", v1.NodeSelectorOpIn, "foo"))),
			pod:      requiredPod(exprTerm(req("foo", v1.NodeSelectorOpIn, "bar"))),
			nodeName: "node1",
			labels:   map[string]string{"zone": "foo"},
			want:     reasonPod,
		},
		{
			name:     "a node not matching the added affinity is rejected with the enforced reason first",
			args:     addedRequired(exprTerm(req("zone", v1.NodeSelectorOpIn, "foo")), exprTerm(req("zone", v1.NodeSelectorOpIn, "bar"))),
			pod:      requiredPod(exprTerm(req("foo", v1.NodeSelectorOpIn, "bar"))),
			nodeName: "node1",
			labels:   map[string]string{"zone": "baz"},
			want:     schedcore.NewStatus(schedcore.UnschedulableAndUnresolvable, ErrReasonEnforced),
		},
		{
			name:     "added affinity alone keeps a pod without affinity from being skipped",
			args:     addedRequired(exprTerm(req("zone", v1.NodeSelectorOpIn, "foo"))),
			pod:      schedtest.MakePod("p").Obj(),
			nodeName: "node1",
			labels:   map[string]string{"zone": "bar"},
			want:     schedcore.NewStatus(schedcore.UnschedulableAndUnresolvable, ErrReasonEnforced),
		},
		{
			name:          "the nodeSelector is checked even if PreFilter did not run",
			pod:           selectorPod(map[string]string{"foo": "bar"}),
			labels:        map[string]string{"foo": "baz"},
			skipPreFilter: true,
			want:          reasonPod,
		},
		{
			name:          "node affinity is checked even if PreFilter did not run",
			pod:           requiredPod(exprTerm(req("GPU", v1.NodeSelectorOpExists), req("GPU", v1.NodeSelectorOpNotIn, "AMD", "INTER"))),
			labels:        map[string]string{"GPU": "NVIDIA-GRID-K1"},
			skipPreFilter: true,
		},
	}
	ctx := context.Background()
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			pl := newPlugin(t, tc.args)
			state := schedcore.NewCycleState()
			if !tc.skipPreFilter {
				res, s := pl.PreFilter(ctx, state, tc.pod, nil)
				if diff := cmp.Diff(tc.wantPreFilter, s); diff != "" {
					t.Errorf("PreFilter status (-want +got):\n%s", diff)
				}
				if diff := cmp.Diff(tc.wantPreFilterRes, res); diff != "" {
					t.Errorf("PreFilter result (-want +got):\n%s", diff)
				}
			}
			got := pl.Filter(ctx, state, tc.pod, nodeInfo(makeNode(tc.nodeName, tc.labels)))
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Filter (-want +got):\n%s", diff)
			}
		})
	}
}

func TestScore(t *testing.T) {
	label1 := map[string]string{"foo": "bar"}
	label2 := map[string]string{"key": "value"}
	label3 := map[string]string{"az": "az1"}
	label5 := map[string]string{"foo": "bar", "key": "value", "az": "az1"}
	affinity1 := []v1.PreferredSchedulingTerm{pref(2, req("foo", v1.NodeSelectorOpIn, "bar"))}
	affinity2 := []v1.PreferredSchedulingTerm{
		pref(2, req("foo", v1.NodeSelectorOpIn, "bar")),
		pref(4, req("key", v1.NodeSelectorOpIn, "value")),
		pref(5, req("foo", v1.NodeSelectorOpIn, "bar"), req("key", v1.NodeSelectorOpIn, "value"), req("az", v1.NodeSelectorOpIn, "az1")),
	}
	tests := []struct {
		name         string
		args         *configv1.NodeAffinityArgs
		pod          *v1.Pod
		nodes        []*v1.Node
		skipPreScore bool
		wantPreScore *schedcore.Status
		raw          []int64
		want         schedcore.NodeScoreList
	}{
		{
			name:         "a pod without preferred affinity is skipped in PreScore",
			pod:          schedtest.MakePod("p").Obj(),
			nodes:        []*v1.Node{makeNode("node1", label1)},
			wantPreScore: schedcore.NewStatus(schedcore.Skip),
		},
		{
			name:  "an empty preferred list is scored, all zero",
			pod:   preferredPod([]v1.PreferredSchedulingTerm{}...),
			nodes: []*v1.Node{makeNode("node1", label1), makeNode("node2", label2)},
			raw:   []int64{0, 0},
			want:  schedcore.NodeScoreList{{Name: "node1", Score: 0}, {Name: "node2", Score: 0}},
		},
		{
			name:         "an invalid preferred term is an error in PreScore",
			pod:          preferredPod(pref(2, req("invalid key", v1.NodeSelectorOpIn, "bar"))),
			nodes:        []*v1.Node{makeNode("node1", label1)},
			wantPreScore: schedcore.NewStatus(schedcore.Error, `[0].matchExpressions[0].key: Invalid value: "invalid key": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')`),
		},
		{
			name:  "no node matches the preferred terms so all score zero",
			pod:   preferredPod(affinity1...),
			nodes: []*v1.Node{makeNode("node1", label3), makeNode("node2", label2), makeNode("node3", nil)},
			raw:   []int64{0, 0, 0},
			want:  schedcore.NodeScoreList{{Name: "node1", Score: 0}, {Name: "node2", Score: 0}, {Name: "node3", Score: 0}},
		},
		{
			name:  "only the matching node gets the maximum",
			pod:   preferredPod(affinity1...),
			nodes: []*v1.Node{makeNode("node1", label1), makeNode("node2", label2), makeNode("node3", label3)},
			raw:   []int64{2, 0, 0},
			want:  schedcore.NodeScoreList{{Name: "node1", Score: 100}, {Name: "node2", Score: 0}, {Name: "node3", Score: 0}},
		},
		{
			name:  "weights of matching terms add up and normalize by the highest",
			pod:   preferredPod(affinity2...),
			nodes: []*v1.Node{makeNode("node1", label1), makeNode("node5", label5), makeNode("node2", label2)},
			raw:   []int64{2, 11, 4},
			want:  schedcore.NodeScoreList{{Name: "node1", Score: 18}, {Name: "node5", Score: 100}, {Name: "node2", Score: 36}},
		},
		{
			name:         "scores are right even if PreScore did not run",
			pod:          preferredPod(affinity2...),
			nodes:        []*v1.Node{makeNode("node1", label1), makeNode("node5", label5), makeNode("node2", label2)},
			skipPreScore: true,
			raw:          []int64{2, 11, 4},
			want:         schedcore.NodeScoreList{{Name: "node1", Score: 18}, {Name: "node5", Score: 100}, {Name: "node2", Score: 36}},
		},
		{
			name:  "a zero-weight term is ignored",
			pod:   preferredPod(pref(0, req("foo", v1.NodeSelectorOpIn, "bar")), pref(1, req("key", v1.NodeSelectorOpIn, "value"))),
			nodes: []*v1.Node{makeNode("node1", label1), makeNode("node2", label2)},
			raw:   []int64{0, 1},
			want:  schedcore.NodeScoreList{{Name: "node1", Score: 0}, {Name: "node2", Score: 100}},
		},
		{
			name:  "added preferred affinity scores a pod without its own",
			args:  &configv1.NodeAffinityArgs{AddedAffinity: &v1.NodeAffinity{PreferredDuringSchedulingIgnoredDuringExecution: affinity1}},
			pod:   schedtest.MakePod("p").Obj(),
			nodes: []*v1.Node{makeNode("node1", label1), makeNode("node2", label2)},
			raw:   []int64{2, 0},
			want:  schedcore.NodeScoreList{{Name: "node1", Score: 100}, {Name: "node2", Score: 0}},
		},
		{
			name: "added and pod preferred affinity add up",
			args: &configv1.NodeAffinityArgs{AddedAffinity: &v1.NodeAffinity{PreferredDuringSchedulingIgnoredDuringExecution: []v1.PreferredSchedulingTerm{
				pref(3, req("key", v1.NodeSelectorOpIn, "value")),
			}}},
			pod:   preferredPod(affinity1...),
			nodes: []*v1.Node{makeNode("node1", label1), makeNode("node2", label2), makeNode("node3", label5)},
			raw:   []int64{2, 3, 5},
			want:  schedcore.NodeScoreList{{Name: "node1", Score: 40}, {Name: "node2", Score: 60}, {Name: "node3", Score: 100}},
		},
	}
	ctx := context.Background()
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			pl := newPlugin(t, tc.args)
			state := schedcore.NewCycleState()
			nodes := make([]*schedcore.NodeInfo, len(tc.nodes))
			for i, n := range tc.nodes {
				nodes[i] = nodeInfo(n)
			}
			if !tc.skipPreScore {
				s := pl.PreScore(ctx, state, tc.pod, nodes)
				if diff := cmp.Diff(tc.wantPreScore, s); diff != "" {
					t.Fatalf("PreScore (-want +got):\n%s", diff)
				}
				if !s.IsSuccess() {
					return
				}
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

func TestNewArgs(t *testing.T) {
	tests := []struct {
		name    string
		args    any
		wantErr string
	}{
		{name: "nil args mean no added affinity", args: nil},
		{name: "empty args are valid", args: &configv1.NodeAffinityArgs{}},
		{name: "args of another type are rejected", args: &configv1.NodeResourcesFitArgs{}, wantErr: "args are not of type NodeAffinityArgs, got *v1.NodeResourcesFitArgs"},
		{
			name:    "an invalid required term names its field",
			args:    addedRequired(exprTerm(req("invalid key", v1.NodeSelectorOpIn, "a"))),
			wantErr: `addedAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchExpressions[0].key: Invalid value: "invalid key": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')`,
		},
		{
			name: "invalid required and preferred terms are both reported",
			args: &configv1.NodeAffinityArgs{AddedAffinity: &v1.NodeAffinity{
				RequiredDuringSchedulingIgnoredDuringExecution:  &v1.NodeSelector{NodeSelectorTerms: []v1.NodeSelectorTerm{{MatchFields: []v1.NodeSelectorRequirement{req("metadata.name", v1.NodeSelectorOpIn, "a", "b")}}}},
				PreferredDuringSchedulingIgnoredDuringExecution: []v1.PreferredSchedulingTerm{pref(1, req("foo", v1.NodeSelectorOpExists, "bar"))},
			}},
			wantErr: `[addedAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchFields[0].values: Invalid value: ["a","b"]: must have one element, addedAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].matchExpressions[0].values: Invalid value: ["bar"]: values set must be empty for exists and does not exist]`,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var err error
			switch a := tc.args.(type) {
			case nil:
				_, err = New(context.Background(), nil, schedcore.NewHandle(nil, 0))
			case *configv1.NodeAffinityArgs:
				_, err = New(context.Background(), a, schedcore.NewHandle(nil, 0))
			case *configv1.NodeResourcesFitArgs:
				_, err = New(context.Background(), a, schedcore.NewHandle(nil, 0))
			}
			got := ""
			if err != nil {
				got = err.Error()
			}
			if diff := cmp.Diff(tc.wantErr, got); diff != "" {
				t.Errorf("error (-want +got):\n%s", diff)
			}
		})
	}
}

func TestEventsToRegister(t *testing.T) {
	events, err := newPlugin(t, nil).EventsToRegister(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(events) != 1 || events[0].QueueingHintFn == nil {
		t.Fatalf("events = %+v, want one with a hint", events)
	}
	want := schedcore.ClusterEvent{Resource: schedcore.Node, ActionType: schedcore.Add | schedcore.UpdateNodeLabel}
	if diff := cmp.Diff(want, events[0].Event); diff != "" {
		t.Errorf("event (-want +got):\n%s", diff)
	}
}

func TestIsSchedulableAfterNodeChange(t *testing.T) {
	pod := requiredPod(exprTerm(req("foo", v1.NodeSelectorOpIn, "bar")))
	plain := func() *v1.Node { return makeNode("n", nil) }
	labelled := func(kv ...string) *v1.Node {
		l := map[string]string{}
		for i := 0; i+1 < len(kv); i += 2 {
			l[kv[i]] = kv[i+1]
		}
		return makeNode("n", l)
	}
	withCapacity := func(n *v1.Node) *v1.Node {
		n.Status.Capacity = schedtest.ResourceList("cpu", "1")
		return n
	}
	enforced := addedRequired(exprTerm(req("foo", v1.NodeSelectorOpIn, "bar")))
	tests := []struct {
		name           string
		args           *configv1.NodeAffinityArgs
		oldObj, newObj any
		want           schedcore.QueueingHint
		wantErr        bool
	}{
		{name: "a new object that is not a node queues with an error", newObj: "not-a-node", want: schedcore.Queue, wantErr: true},
		{name: "an old object that is not a node queues with an error", oldObj: "not-a-node", newObj: plain(), want: schedcore.Queue, wantErr: true},
		{name: "an added node that does not match is skipped", newObj: plain(), want: schedcore.QueueSkip},
		{name: "an added node that matches queues", newObj: labelled("foo", "bar"), want: schedcore.Queue},
		{name: "an unrelated update is skipped", oldObj: plain(), newObj: withCapacity(plain()), want: schedcore.QueueSkip},
		{name: "an unrelated label change is skipped", oldObj: plain(), newObj: labelled("k", "v"), want: schedcore.QueueSkip},
		{name: "a node going from matching to not matching is skipped", oldObj: labelled("foo", "bar"), newObj: labelled("k", "v"), want: schedcore.QueueSkip},
		{name: "a label change that makes the node match queues", oldObj: plain(), newObj: labelled("foo", "bar"), want: schedcore.Queue},
		{name: "an update of a node that already matched is skipped", oldObj: labelled("foo", "bar"), newObj: withCapacity(labelled("foo", "bar")), want: schedcore.QueueSkip},
		{name: "an added node outside the added affinity is skipped", args: enforced, newObj: plain(), want: schedcore.QueueSkip},
		{name: "an added node inside the added affinity and the pod's queues", args: enforced, newObj: labelled("foo", "bar"), want: schedcore.Queue},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			pl := newPlugin(t, tc.args)
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
