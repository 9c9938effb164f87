package podtopologyspread

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/sets"
	configv1 "k8s.io/kube-scheduler/config/v1"

	"github.com/kubectl-sched/kubectl-sched/schedcore"
	"github.com/kubectl-sched/kubectl-sched/schedcore/schedtest"
)

// Fixtures shaped after kube's tests: "node" and "zone" are the topology
// keys most cases use; fooSelector/barSelector select pods having the label.
const (
	dns = v1.DoNotSchedule
	sa  = v1.ScheduleAnyway
)

var (
	fooSelector = &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "foo", Operator: metav1.LabelSelectorOpExists}}}
	barSelector = &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "bar", Operator: metav1.LabelSelectorOpExists}}}
	honor       = v1.NodeInclusionPolicyHonor
	ignore      = v1.NodeInclusionPolicyIgnore
	// unschedulableTaint is what kube's tests taint nodes with.
	unschedulableTaint = v1.Taint{Key: v1.TaintNodeUnschedulable, Effect: v1.TaintEffectNoSchedule}
)

// matchLabels is a selector of exact labels.
func matchLabels(kv ...string) *metav1.LabelSelector {
	m := map[string]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return &metav1.LabelSelector{MatchLabels: m}
}

// tsc builds a v1.TopologySpreadConstraint; opts set the optional fields.
func tsc(maxSkew int32, key string, when v1.UnsatisfiableConstraintAction, sel *metav1.LabelSelector, opts ...func(*v1.TopologySpreadConstraint)) v1.TopologySpreadConstraint {
	c := v1.TopologySpreadConstraint{MaxSkew: maxSkew, TopologyKey: key, WhenUnsatisfiable: when, LabelSelector: sel}
	for _, o := range opts {
		o(&c)
	}
	return c
}

func minDomains(n int32) func(*v1.TopologySpreadConstraint) {
	return func(c *v1.TopologySpreadConstraint) { c.MinDomains = &n }
}

func affinityPolicy(p v1.NodeInclusionPolicy) func(*v1.TopologySpreadConstraint) {
	return func(c *v1.TopologySpreadConstraint) { c.NodeAffinityPolicy = &p }
}

func taintsPolicy(p v1.NodeInclusionPolicy) func(*v1.TopologySpreadConstraint) {
	return func(c *v1.TopologySpreadConstraint) { c.NodeTaintsPolicy = &p }
}

func matchLabelKeys(keys ...string) func(*v1.TopologySpreadConstraint) {
	return func(c *v1.TopologySpreadConstraint) { c.MatchLabelKeys = keys }
}

// podB chains what kube's st.MakePod offers on top of schedtest's builder.
type podB struct{ w *schedtest.PodWrapper }

// mkPod starts a pod in "default" with the given label pairs.
func mkPod(name string, kv ...string) *podB {
	w := schedtest.MakePod(name)
	for i := 0; i+1 < len(kv); i += 2 {
		w.Label(kv[i], kv[i+1])
	}
	return &podB{w}
}

func (b *podB) spread(maxSkew int32, key string, when v1.UnsatisfiableConstraintAction, sel *metav1.LabelSelector, opts ...func(*v1.TopologySpreadConstraint)) *podB {
	b.w.Spec.TopologySpreadConstraints = append(b.w.Spec.TopologySpreadConstraints, tsc(maxSkew, key, when, sel, opts...))
	return b
}

func (b *podB) nodeSelector(k, v string) *podB { b.w.NodeSelector(k, v); return b }

func (b *podB) affinityIn(key string, values ...string) *podB {
	b.w.NodeAffinityIn(key, values...)
	return b
}

// affinityNotIn adds a required node affinity term "key NotIn values".
func (b *podB) affinityNotIn(key string, values ...string) *podB {
	b.w.NodeAffinityIn(key, values...)
	terms := b.w.Spec.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms
	terms[len(terms)-1].MatchExpressions[0].Operator = v1.NodeSelectorOpNotIn
	return b
}

func (b *podB) tolerate(key string) *podB {
	b.w.Toleration(key, v1.TolerationOpExists, "", "")
	return b
}

func (b *podB) namespace(ns string) *podB { b.w.Namespace(ns); return b }

func (b *podB) ownedBy(name string, gvk schema.GroupVersionKind) *podB {
	b.w.OwnerReferences = append(b.w.OwnerReferences, metav1.OwnerReference{
		APIVersion: gvk.GroupVersion().String(), Kind: gvk.Kind, Name: name, Controller: ptrTo(true),
	})
	return b
}

func (b *podB) obj() *v1.Pod { return b.w.Obj() }

func ptrTo[T any](v T) *T { return &v }

var rsKind = appsv1.SchemeGroupVersion.WithKind("ReplicaSet")

// terminating marks a pod as being deleted.
func terminating(p *v1.Pod) *v1.Pod {
	now := metav1.Now()
	p.DeletionTimestamp = &now
	return p
}

func tainted(n *v1.Node, taints ...v1.Taint) *v1.Node {
	n.Spec.Taints = append(n.Spec.Taints, taints...)
	return n
}

// listArgs are args with defaultingType List and the given constraints.
func listArgs(cs ...v1.TopologySpreadConstraint) *configv1.PodTopologySpreadArgs {
	return &configv1.PodTopologySpreadArgs{DefaultingType: configv1.ListDefaulting, DefaultConstraints: cs}
}

// newPlugin builds the plugin through New over a snapshot of pods and nodes.
func newPlugin(t *testing.T, args *configv1.PodTopologySpreadArgs, pods []*v1.Pod, nodes []*v1.Node, sel *schedcore.SelectorSources) (*PodTopologySpread, *schedcore.Snapshot) {
	t.Helper()
	snap := schedcore.NewSnapshot(pods, nodes)
	snap.Selectors = sel
	h := schedcore.NewHandle(snap, 4)
	pl, err := New(context.Background(), args, h)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return pl.(*PodTopologySpread), snap
}

func mustSel(t *testing.T, ls *metav1.LabelSelector) labels.Selector {
	t.Helper()
	s, err := metav1.LabelSelectorAsSelector(ls)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// want builds an expected internal constraint with kube's defaults
// (minDomains 1, nodeAffinityPolicy Honor, nodeTaintsPolicy Ignore).
func want(maxSkew int32, key string, sel labels.Selector) topologySpreadConstraint {
	return topologySpreadConstraint{MaxSkew: maxSkew, TopologyKey: key, Selector: sel, MinDomains: 1,
		NodeAffinityPolicy: v1.NodeInclusionPolicyHonor, NodeTaintsPolicy: v1.NodeInclusionPolicyIgnore}
}

func (c topologySpreadConstraint) policies(na, nt v1.NodeInclusionPolicy) topologySpreadConstraint {
	c.NodeAffinityPolicy, c.NodeTaintsPolicy = na, nt
	return c
}

// filterView is a preFilterState as kube's tests see it: the match
// numbers and the critical paths by topology value.
type filterView struct {
	Constraints       []topologySpreadConstraint
	CriticalPaths     []*pathsView
	TpValueToMatchNum []map[string]int
}

// pathsView is criticalPaths by topology value.
type pathsView [2]struct {
	TopologyValue string
	MatchNum      int
}

func filterViewOf(s *preFilterState) *filterView {
	v := &filterView{Constraints: s.Constraints}
	for i, p := range s.CriticalPaths {
		pv := &pathsView{}
		for j := range p {
			pv[j].MatchNum = p[j].MatchNum
			if p[j].Domain != schedcore.NoDomain {
				pv[j].TopologyValue = s.counts.Value(i, p[j].Domain)
			}
		}
		v.CriticalPaths = append(v.CriticalPaths, pv)
	}
	for i := range s.Constraints {
		m := map[string]int{}
		s.counts.ForEach(i, func(dom schedcore.Domain, n int64) { m[s.counts.Value(i, dom)] = int(n) })
		v.TpValueToMatchNum = append(v.TpValueToMatchNum, m)
	}
	return v
}

// preFilterView reads the PreFilter state of cs as a filterView.
func preFilterView(t *testing.T, cs *schedcore.CycleState) *filterView {
	t.Helper()
	s, err := schedcore.ReadAs[*preFilterState](cs, preFilterStateKey)
	if err != nil {
		t.Fatal(err)
	}
	return filterViewOf(s)
}

// scoreView is a preScoreState as kube's tests see it: the matching pods
// per topology value (none for hostname constraints, counted in Score).
type scoreView struct {
	Constraints               []topologySpreadConstraint
	IgnoredNodes              sets.Set[string]
	TopologyValueToPodCounts  []map[string]*int64
	TopologyNormalizingWeight []float64
}

// preScoreView reads the PreScore state of cs, made over the feasible
// nodes, as a scoreView.
func preScoreView(t *testing.T, cs *schedcore.CycleState, feasible []*schedcore.NodeInfo) *scoreView {
	t.Helper()
	s, err := schedcore.ReadAs[*preScoreState](cs, preScoreStateKey)
	if err != nil {
		t.Fatal(err)
	}
	v := &scoreView{Constraints: s.Constraints, IgnoredNodes: sets.New[string](), TopologyNormalizingWeight: s.TopologyNormalizingWeight}
	for k, ignored := range s.ignored {
		if ignored {
			v.IgnoredNodes.Insert(feasible[k].Name())
		}
	}
	for i := range s.Constraints {
		m := map[string]*int64{}
		s.counts.ForEach(i, func(dom schedcore.Domain, n int64) { m[s.counts.Value(i, dom)] = &n })
		v.TopologyValueToPodCounts = append(v.TopologyValueToPodCounts, m)
	}
	return v
}

// paths builds critical paths from two (value, num) pairs.
func paths(v0 string, n0 int, v1 string, n1 int) *pathsView {
	p := pathsView{}
	p[0].TopologyValue, p[0].MatchNum = v0, n0
	p[1].TopologyValue, p[1].MatchNum = v1, n1
	return &p
}

// stateCmpOpts compare selectors by their string and emptiness, treat
// critical paths with equal counts in either order as equal (kube's rule:
// the map iteration order decides them), and ignore the unexported caches.
var stateCmpOpts = []cmp.Option{
	cmp.Comparer(func(a, b labels.Selector) bool {
		if a == nil || b == nil {
			return a == nil && b == nil
		}
		return a.String() == b.String() && a.Empty() == b.Empty()
	}),
	cmp.Comparer(func(p1, p2 pathsView) bool {
		p1.sort()
		p2.sort()
		return p1[0] == p2[0] && p1[1] == p2[1]
	}),
	cmpopts.EquateEmpty(),
}

func (p *pathsView) sort() {
	if p[0].MatchNum == p[1].MatchNum && p[0].TopologyValue > p[1].TopologyValue {
		p[0].TopologyValue, p[1].TopologyValue = p[1].TopologyValue, p[0].TopologyValue
	}
}

// service is a Service in ns selecting the label pairs.
func service(ns string, kv ...string) *v1.Service {
	s := &v1.Service{ObjectMeta: metav1.ObjectMeta{Name: "svc-" + strings.Join(kv, "-"), Namespace: ns}}
	s.Spec.Selector = matchLabels(kv...).MatchLabels
	return s
}
