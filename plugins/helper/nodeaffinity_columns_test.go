package helper

import (
	"fmt"
	"math/rand/v2"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/component-helpers/scheduling/corev1/nodeaffinity"

	"github.com/kubectl-sched/kubectl-sched/schedcore"
)

// columnsCase is a pod's required node constraints.
type columnsCase struct {
	name string
	pod  *v1.Pod
	// bound is whether Bind binds the constraints to the columns (not
	// when component-helpers matches them, nor when there are none).
	bound bool
}

func columnsCases() []columnsCase {
	req := func(key string, op v1.NodeSelectorOperator, vals ...string) v1.NodeSelectorRequirement {
		return v1.NodeSelectorRequirement{Key: key, Operator: op, Values: vals}
	}
	term := func(reqs ...v1.NodeSelectorRequirement) v1.NodeSelectorTerm {
		return v1.NodeSelectorTerm{MatchExpressions: reqs}
	}
	pod := func(sel map[string]string, terms ...v1.NodeSelectorTerm) *v1.Pod {
		p := &v1.Pod{Spec: v1.PodSpec{NodeSelector: sel}}
		if terms != nil {
			p.Spec.Affinity = &v1.Affinity{NodeAffinity: &v1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &v1.NodeSelector{NodeSelectorTerms: terms}}}
		}
		return p
	}
	return []columnsCase{
		{"nothing", pod(nil), false},
		{"node selector", pod(map[string]string{"zone": "a"}), true},
		{"node selector, two labels", pod(map[string]string{"zone": "a", "gpu": "true"}), true},
		{"node selector, a value no node has", pod(map[string]string{"zone": "nowhere"}), true},
		{"in", pod(nil, term(req("zone", v1.NodeSelectorOpIn, "a", "b"))), true},
		{"in, a value no node has", pod(nil, term(req("zone", v1.NodeSelectorOpIn, "nowhere"))), true},
		{"not in", pod(nil, term(req("zone", v1.NodeSelectorOpNotIn, "b", "nowhere"))), true},
		{"exists", pod(nil, term(req("gpu", v1.NodeSelectorOpExists))), true},
		{"does not exist", pod(nil, term(req("gpu", v1.NodeSelectorOpDoesNotExist))), true},
		{"gt", pod(nil, term(req("cores", v1.NodeSelectorOpGt, "8"))), true},
		{"lt", pod(nil, term(req("cores", v1.NodeSelectorOpLt, "64"))), true},
		{"gt and lt", pod(nil, term(req("cores", v1.NodeSelectorOpGt, "4"), req("cores", v1.NodeSelectorOpLt, "64"))), true},
		{"terms are ORed", pod(nil, term(req("zone", v1.NodeSelectorOpIn, "c")), term(req("gpu", v1.NodeSelectorOpExists))), true},
		{"selector and terms", pod(map[string]string{"gpu": "true"}, term(req("zone", v1.NodeSelectorOpIn, "a"))), true},
		{"only empty terms", pod(nil, v1.NodeSelectorTerm{}), true},
		{"no terms", pod(nil, []v1.NodeSelectorTerm{}...), true},
		{"match fields", pod(nil, v1.NodeSelectorTerm{MatchFields: []v1.NodeSelectorRequirement{req("metadata.name", v1.NodeSelectorOpIn, "n1")}}), false},
		{"bad operator", pod(nil, term(req("zone", "Near", "a"))), false},
		{"bad value for gt", pod(nil, term(req("cores", v1.NodeSelectorOpGt, "many"))), false},
	}
}

// columnsNode is a node with random labels among a few values: a
// non-integer "cores" and missing labels included.
func columnsNode(rng *rand.Rand, name string) *v1.Node {
	n := &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{}}}
	if v := rng.IntN(4); v < 3 {
		n.Labels["zone"] = []string{"a", "b", "c"}[v]
	}
	if rng.IntN(2) == 0 {
		n.Labels["gpu"] = []string{"true", "false"}[rng.IntN(2)]
	}
	if v := rng.IntN(5); v < 4 {
		n.Labels["cores"] = []string{"4", "8", "64", "lots"}[v]
	}
	return n
}

// Matching a listed node through the label columns answers as
// component-helpers does on the node's labels, for every operator, and
// keeps doing so when the nodes are relabelled after Bind: a node whose
// object is not the one the columns read is matched on its labels. The
// relabels change the answers, so a stale column read shows.
func TestBoundRequiredNodeAffinityAgreesWithComponentHelpers(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 19))
	c := schedcore.NewCache(schedcore.DefaultFeatures)
	const numNodes = 40
	for i := range numNodes {
		c.AddNode(columnsNode(rng, fmt.Sprint("n", i)))
	}
	s := schedcore.NewEmptySnapshot()
	c.UpdateSnapshot(s)
	cases := columnsCases()
	bound := make([]RequiredNodeAffinity, len(cases))
	for round := range 30 {
		if round%3 == 0 {
			for i := range cases {
				bound[i] = GetRequiredNodeAffinity(cases[i].pod)
				bound[i].Bind(s)
				if got := bound[i].bound != nil; got != cases[i].bound {
					t.Fatalf("%s: bound %v, want %v", cases[i].name, got, cases[i].bound)
				}
			}
		} else {
			// Relabel some nodes: the columns bound earlier are stale for them.
			for range 1 + rng.IntN(numNodes) {
				c.AddNode(columnsNode(rng, fmt.Sprint("n", rng.IntN(numNodes))))
			}
			c.UpdateSnapshot(s)
		}
		for i, tc := range cases {
			want := nodeaffinity.GetRequiredNodeAffinity(tc.pod)
			for _, ni := range s.List() {
				w, _ := want.Match(ni.Node())
				if got, _ := bound[i].MatchNodeInfo(ni); got != w {
					t.Fatalf("round %d, %s: node %s %v: matched %v, want %v", round, tc.name, ni.Name(), ni.Node().Labels, got, w)
				}
				// A node from outside the snapshot is matched on its labels.
				other := ni.Clone()
				other.SetNode(columnsNode(rng, ni.Name()))
				w, _ = want.Match(other.Node())
				if got, _ := bound[i].MatchNodeInfo(other); got != w {
					t.Fatalf("round %d, %s: unlisted copy of %s %v: matched %v, want %v", round, tc.name, ni.Name(), other.Node().Labels, got, w)
				}
			}
		}
	}
}

// A listed node is matched through the columns, not its labels, when the
// columns were read from it.
func TestBoundRequiredNodeAffinityReadsTheColumns(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 1))
	c := schedcore.NewCache(schedcore.DefaultFeatures)
	for i := range 10 {
		c.AddNode(columnsNode(rng, fmt.Sprint("n", i)))
	}
	s := schedcore.NewEmptySnapshot()
	c.UpdateSnapshot(s)
	for _, tc := range columnsCases() {
		if !tc.bound {
			continue
		}
		r := GetRequiredNodeAffinity(tc.pod)
		r.Bind(s)
		for _, ni := range s.List() {
			if _, ok := r.bound.match(ni, r.hasRequired); !ok {
				t.Fatalf("%s: node %s not matched through the columns", tc.name, ni.Name())
			}
		}
	}
}
