package helper

import (
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
	"k8s.io/component-helpers/scheduling/corev1/nodeaffinity"
)

// RequiredNodeAffinity is component-helpers' nodeaffinity.RequiredNodeAffinity
// (a pod's nodeSelector ANDed with its required node affinity terms, ORed)
// with the same answers, minus its per-call allocation: component-helpers
// builds a fields map for every node it matches. When no term uses
// matchFields and every term parses, terms are matched on labels alone;
// otherwise matching falls back to component-helpers, errors included.
type RequiredNodeAffinity struct {
	// fallback matches when the terms are not matched on labels alone.
	fallback    *nodeaffinity.RequiredNodeAffinity
	selector    labels.Selector
	hasRequired bool
	terms       []labels.Selector
	// bound are selector and terms bound to a snapshot's label columns
	// (Bind), nil when not bound.
	bound *boundAffinity
}

// GetRequiredNodeAffinity parses the pod's nodeSelector and required node
// affinity, as component-helpers' function of the same name. Both are
// parsed once per distinct object (see schedcore.SpecCache).
func GetRequiredNodeAffinity(pod *v1.Pod) RequiredNodeAffinity {
	var r RequiredNodeAffinity
	a := pod.Spec.Affinity
	if a != nil && a.NodeAffinity != nil && a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution != nil {
		terms, ok := parseRequiredTerms(a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution)
		if !ok {
			fb := nodeaffinity.GetRequiredNodeAffinity(pod)
			return RequiredNodeAffinity{fallback: &fb}
		}
		r.hasRequired, r.terms = true, terms
	}
	if len(pod.Spec.NodeSelector) > 0 {
		r.selector = nodeSelectorAsSelector(pod.Spec.NodeSelector)
	}
	return r
}

// Match reports whether the node satisfies the pod's nodeSelector and
// required node affinity.
func (r *RequiredNodeAffinity) Match(node *v1.Node) (bool, error) {
	if r.fallback != nil {
		return r.fallback.Match(node)
	}
	ls := labels.Set(node.Labels)
	if r.selector != nil && !r.selector.Matches(ls) {
		return false, nil
	}
	if !r.hasRequired {
		return true, nil
	}
	for _, t := range r.terms {
		if t.Matches(ls) {
			return true, nil
		}
	}
	return false, nil
}

func requirementsAsSelector(nsm []v1.NodeSelectorRequirement) (labels.Selector, bool) {
	sel := labels.NewSelector()
	for _, expr := range nsm {
		var op selection.Operator
		switch expr.Operator {
		case v1.NodeSelectorOpIn:
			op = selection.In
		case v1.NodeSelectorOpNotIn:
			op = selection.NotIn
		case v1.NodeSelectorOpExists:
			op = selection.Exists
		case v1.NodeSelectorOpDoesNotExist:
			op = selection.DoesNotExist
		case v1.NodeSelectorOpGt:
			op = selection.GreaterThan
		case v1.NodeSelectorOpLt:
			op = selection.LessThan
		default:
			return nil, false
		}
		req, err := labels.NewRequirement(expr.Key, op, expr.Values)
		if err != nil {
			return nil, false
		}
		sel = sel.Add(*req)
	}
	return sel, true
}

// PreferredSchedulingTerms is component-helpers' PreferredSchedulingTerms
// (the weighted preferred node affinity terms) with the same scores and
// without its per-node allocation; terms using matchFields fall back to it.
type PreferredSchedulingTerms struct {
	fallback *nodeaffinity.PreferredSchedulingTerms
	fast     bool
	terms    []labels.Selector
	weights  []int64
}

// NewPreferredSchedulingTerms parses the terms, returning component-helpers'
// error when one does not parse. Terms of weight 0 or empty are skipped.
// Each distinct list is parsed once (see schedcore.SpecCache): the result
// is shared and read-only.
func NewPreferredSchedulingTerms(terms []v1.PreferredSchedulingTerm) (*PreferredSchedulingTerms, error) {
	if len(terms) == 0 {
		return newPreferredSchedulingTerms(terms)
	}
	return preferredTerms.Get(&terms[0],
		func(old []v1.PreferredSchedulingTerm) bool { return equalPreferredTerms(old, terms) },
		func() ([]v1.PreferredSchedulingTerm, *PreferredSchedulingTerms, error) {
			p, err := newPreferredSchedulingTerms(terms)
			return copyPreferredTerms(terms), p, err
		})
}

func newPreferredSchedulingTerms(terms []v1.PreferredSchedulingTerm) (*PreferredSchedulingTerms, error) {
	fb, err := nodeaffinity.NewPreferredSchedulingTerms(terms)
	if err != nil {
		return nil, err
	}
	p := &PreferredSchedulingTerms{fallback: fb, fast: true}
	for i := range terms {
		t := &terms[i]
		if t.Weight == 0 || len(t.Preference.MatchExpressions) == 0 && len(t.Preference.MatchFields) == 0 {
			continue
		}
		if len(t.Preference.MatchFields) > 0 {
			p.fast = false
			return p, nil
		}
		sel, ok := requirementsAsSelector(t.Preference.MatchExpressions)
		if !ok {
			p.fast = false
			return p, nil
		}
		p.terms = append(p.terms, sel)
		p.weights = append(p.weights, int64(t.Weight))
	}
	return p, nil
}

// Selectors returns the parsed terms and their weights, in order: Score
// is the sum of the weights of the selectors a node's labels match. ok is
// false when the terms are matched by component-helpers instead (a term
// with matchFields, or one that does not parse as a label selector).
func (p *PreferredSchedulingTerms) Selectors() (terms []labels.Selector, weights []int64, ok bool) {
	return p.terms, p.weights, p.fast
}

// Score sums the weights of the terms the node matches.
func (p *PreferredSchedulingTerms) Score(node *v1.Node) int64 {
	if !p.fast {
		return p.fallback.Score(node)
	}
	ls := labels.Set(node.Labels)
	var score int64
	for i, t := range p.terms {
		if t.Matches(ls) {
			score += p.weights[i]
		}
	}
	return score
}
