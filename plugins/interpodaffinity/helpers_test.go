package interpodaffinity

import (
	"context"
	"fmt"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	configv1 "k8s.io/kube-scheduler/config/v1"

	"github.com/kubectl-sched/kubectl-sched/schedcore"
)

// podWrapper mirrors the builder kube's tests use (st.MakePod): namespace ""
// by default and required (anti-)affinity terms with one match expression,
// so the ported cases read like the originals.
type podWrapper struct{ v1.Pod }

func makePod() *podWrapper { return &podWrapper{} }

func (p *podWrapper) Obj() *v1.Pod                        { return &p.Pod }
func (p *podWrapper) Name(n string) *podWrapper           { p.Pod.Name = n; return p }
func (p *podWrapper) UID(u string) *podWrapper            { p.Pod.UID = types.UID(u); return p }
func (p *podWrapper) Namespace(ns string) *podWrapper     { p.Pod.Namespace = ns; return p }
func (p *podWrapper) Node(n string) *podWrapper           { p.Spec.NodeName = n; return p }
func (p *podWrapper) Nominated(n string) *podWrapper      { p.Status.NominatedNodeName = n; return p }
func (p *podWrapper) Affinity(a *v1.Affinity) *podWrapper { p.Spec.Affinity = a; return p }

func (p *podWrapper) Label(k, v string) *podWrapper {
	if p.Pod.Labels == nil {
		p.Pod.Labels = map[string]string{}
	}
	p.Pod.Labels[k] = v
	return p
}

func (p *podWrapper) Labels(m map[string]string) *podWrapper {
	for k, v := range m {
		p.Label(k, v)
	}
	return p
}

func (p *podWrapper) addTerm(anti bool, t v1.PodAffinityTerm) *podWrapper {
	if p.Spec.Affinity == nil {
		p.Spec.Affinity = &v1.Affinity{}
	}
	a := p.Spec.Affinity
	if anti {
		if a.PodAntiAffinity == nil {
			a.PodAntiAffinity = &v1.PodAntiAffinity{}
		}
		a.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution = append(a.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution, t)
	} else {
		if a.PodAffinity == nil {
			a.PodAffinity = &v1.PodAffinity{}
		}
		a.PodAffinity.RequiredDuringSchedulingIgnoredDuringExecution = append(a.PodAffinity.RequiredDuringSchedulingIgnoredDuringExecution, t)
	}
	return p
}

func exprTerm(key string, op metav1.LabelSelectorOperator, vals []string, topologyKey string) v1.PodAffinityTerm {
	return v1.PodAffinityTerm{
		LabelSelector: &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: key, Operator: op, Values: vals}}},
		TopologyKey:   topologyKey,
	}
}

func (p *podWrapper) PodAffinityIn(key, topologyKey string, vals []string) *podWrapper {
	return p.addTerm(false, exprTerm(key, metav1.LabelSelectorOpIn, vals, topologyKey))
}
func (p *podWrapper) PodAffinityNotIn(key, topologyKey string, vals []string) *podWrapper {
	return p.addTerm(false, exprTerm(key, metav1.LabelSelectorOpNotIn, vals, topologyKey))
}
func (p *podWrapper) PodAffinityExists(key, topologyKey string) *podWrapper {
	return p.addTerm(false, exprTerm(key, metav1.LabelSelectorOpExists, nil, topologyKey))
}
func (p *podWrapper) PodAntiAffinityIn(key, topologyKey string, vals []string) *podWrapper {
	return p.addTerm(true, exprTerm(key, metav1.LabelSelectorOpIn, vals, topologyKey))
}
func (p *podWrapper) PodAntiAffinityNotIn(key, topologyKey string, vals []string) *podWrapper {
	return p.addTerm(true, exprTerm(key, metav1.LabelSelectorOpNotIn, vals, topologyKey))
}
func (p *podWrapper) PodAntiAffinityExists(key, topologyKey string) *podWrapper {
	return p.addTerm(true, exprTerm(key, metav1.LabelSelectorOpExists, nil, topologyKey))
}
func (p *podWrapper) PodAntiAffinity(topologyKey string, sel *metav1.LabelSelector) *podWrapper {
	return p.addTerm(true, v1.PodAffinityTerm{LabelSelector: sel, TopologyKey: topologyKey})
}

// podWithTerms is kube's createPodWithAffinityTerms.
func podWithTerms(namespace, nodeName string, labels map[string]string, affinity, antiAffinity []v1.PodAffinityTerm) *v1.Pod {
	return &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Labels: labels, Namespace: namespace},
		Spec: v1.PodSpec{
			NodeName: nodeName,
			Affinity: &v1.Affinity{
				PodAffinity:     &v1.PodAffinity{RequiredDuringSchedulingIgnoredDuringExecution: affinity},
				PodAntiAffinity: &v1.PodAntiAffinity{RequiredDuringSchedulingIgnoredDuringExecution: antiAffinity},
			},
		},
	}
}

func node(name string, labels map[string]string) *v1.Node {
	return &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}}
}

func namespace(name string, labels map[string]string) *v1.Namespace {
	return &v1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}}
}

var (
	nsLabelT1 = map[string]string{"team": "team1"}
	nsLabelT2 = map[string]string{"team": "team2"}
	// testNamespaces are kube's test namespaces.
	testNamespaces = []*v1.Namespace{
		namespace("subteam1.team1", nsLabelT1),
		namespace("subteam2.team1", nsLabelT1),
		namespace("subteam1.team2", nsLabelT2),
		namespace("subteam2.team2", nsLabelT2),
	}
)

// newSnapshot builds a snapshot through the cache. Kube's test snapshots do
// not key pods, ours do: pods without name and UID get a unique name.
func newSnapshot(pods []*v1.Pod, nodes []*v1.Node, namespaces []*v1.Namespace) *schedcore.Snapshot {
	c := schedcore.NewCache(schedcore.DefaultFeatures)
	for _, ns := range namespaces {
		c.AddNamespace(ns)
	}
	for _, n := range nodes {
		c.AddNode(n)
	}
	for i, p := range pods {
		if p.Spec.NodeName == "" {
			continue
		}
		if p.Name == "" && p.UID == "" {
			p = p.DeepCopy()
			p.Name = fmt.Sprintf("existing-%d", i)
		}
		if err := c.AddPod(p); err != nil {
			panic(err)
		}
	}
	s := schedcore.NewEmptySnapshot()
	c.UpdateSnapshot(s)
	return s
}

// newPlugin builds the plugin through New over snap.
func newPlugin(t *testing.T, args *configv1.InterPodAffinityArgs, snap *schedcore.Snapshot, fastPath bool) *InterPodAffinity {
	t.Helper()
	f := schedcore.DefaultFeatures
	f.InterPodAffinityHostnameFastPath = fastPath
	h := schedcore.NewHandle(snap, 4, schedcore.WithFeatures(f))
	pl, err := New(context.Background(), args, h)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return pl.(*InterPodAffinity)
}

// result is a Status in comparable form.
type result struct {
	Code    schedcore.Code
	Reasons []string
}

func res(s *schedcore.Status) result {
	return result{Code: s.Code(), Reasons: s.Reasons()}
}

func want(code schedcore.Code, reasons ...string) result {
	if len(reasons) == 0 {
		reasons = nil
	}
	return result{Code: code, Reasons: reasons}
}

var (
	ok          = result{}
	skip        = want(schedcore.Skip)
	affFail     = want(schedcore.UnschedulableAndUnresolvable, ErrReasonAffinityRulesNotMatch)
	antiFail    = want(schedcore.Unschedulable, ErrReasonAntiAffinityRulesNotMatch)
	existFail   = want(schedcore.Unschedulable, ErrReasonExistingAntiAffinityRulesNotMatch)
	fastPathOpt = []bool{false, true}
)

func fastPathName(name string, fp bool) string {
	if name == "" {
		return fmt.Sprintf("InterPodAffinityHostnameFastPath=%v", fp)
	}
	return fmt.Sprintf("%s/InterPodAffinityHostnameFastPath=%v", name, fp)
}
