package helper

import (
	"reflect"
	"slices"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/kubectl-sched/kubectl-sched/schedcore"
)

// The parsed node constraints of the pods' spec objects, shared by the
// pods of one template (see schedcore.SpecCache): NodeAffinity and
// PodTopologySpread parse them in every cycle.
const specCacheSize = 4096

// requiredTerms is a required node affinity's terms parsed as label
// selectors; ok is false when they are matched by component-helpers (a
// term with matchFields or one that does not parse).
type requiredTerms struct {
	terms []labels.Selector
	ok    bool
}

var (
	requiredCache  = schedcore.NewSpecCache[*v1.NodeSelector, *v1.NodeSelector, requiredTerms](specCacheSize)
	preferredTerms = schedcore.NewSpecCache[*v1.PreferredSchedulingTerm, []v1.PreferredSchedulingTerm, *PreferredSchedulingTerms](specCacheSize)
	// nodeSelectors is keyed by the map's address, which does not keep
	// it alive: a new map at a reused address is told apart by content.
	nodeSelectors = schedcore.NewSpecCache[uintptr, map[string]string, labels.Selector](specCacheSize)
)

// parseRequiredTerms parses ns's terms, each distinct object once.
func parseRequiredTerms(ns *v1.NodeSelector) ([]labels.Selector, bool) {
	r, _ := requiredCache.Get(ns,
		func(old *v1.NodeSelector) bool {
			return equalNodeSelectorTerms(old.NodeSelectorTerms, ns.NodeSelectorTerms)
		},
		func() (*v1.NodeSelector, requiredTerms, error) {
			return ns.DeepCopy(), parseRequiredTermsUncached(ns), nil
		})
	return r.terms, r.ok
}

func parseRequiredTermsUncached(ns *v1.NodeSelector) requiredTerms {
	var r requiredTerms
	for i := range ns.NodeSelectorTerms {
		t := &ns.NodeSelectorTerms[i]
		if len(t.MatchExpressions) == 0 && len(t.MatchFields) == 0 {
			continue // an empty term selects nothing
		}
		if len(t.MatchFields) > 0 {
			return requiredTerms{}
		}
		sel, ok := requirementsAsSelector(t.MatchExpressions)
		if !ok {
			return requiredTerms{}
		}
		r.terms = append(r.terms, sel)
	}
	r.ok = true
	return r
}

// nodeSelectorAsSelector is labels.SelectorFromSet(m), each distinct map
// once.
func nodeSelectorAsSelector(m map[string]string) labels.Selector {
	sel, _ := nodeSelectors.Get(uintptr(reflect.ValueOf(m).UnsafePointer()),
		func(old map[string]string) bool { return schedcore.EqualStringMaps(old, m) },
		func() (map[string]string, labels.Selector, error) {
			c := make(map[string]string, len(m))
			for k, v := range m {
				c[k] = v
			}
			return c, labels.SelectorFromSet(m), nil
		})
	return sel
}

func equalNodeSelectorTerms(a, b []v1.NodeSelectorTerm) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !equalRequirements(a[i].MatchExpressions, b[i].MatchExpressions) || !equalRequirements(a[i].MatchFields, b[i].MatchFields) {
			return false
		}
	}
	return true
}

func equalRequirements(a, b []v1.NodeSelectorRequirement) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Key != b[i].Key || a[i].Operator != b[i].Operator || !slices.Equal(a[i].Values, b[i].Values) {
			return false
		}
	}
	return true
}

func equalPreferredTerms(a, b []v1.PreferredSchedulingTerm) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Weight != b[i].Weight ||
			!equalRequirements(a[i].Preference.MatchExpressions, b[i].Preference.MatchExpressions) ||
			!equalRequirements(a[i].Preference.MatchFields, b[i].Preference.MatchFields) {
			return false
		}
	}
	return true
}

func copyPreferredTerms(terms []v1.PreferredSchedulingTerm) []v1.PreferredSchedulingTerm {
	c := make([]v1.PreferredSchedulingTerm, len(terms))
	for i := range terms {
		terms[i].DeepCopyInto(&c[i])
	}
	return c
}
