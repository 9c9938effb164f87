package helper

import (
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-sched/kubectl-sched/schedcore"
)

// What a PreparePlugin asks of the snapshot's pod index
// (Snapshot.PrepareLabelIndex): the label keys its selectors' equality
// requirements will ask for (as schedcore.IndexedKeys finds them in a
// parsed selector), read off the API objects without parsing them.

// AppendNew appends to list the strings of s it lacks.
func AppendNew(list []string, s ...string) []string {
	for _, v := range s {
		if !slices.Contains(list, v) {
			list = append(list, v)
		}
	}
	return list
}

// LabelSelectorKeys appends to keys the label keys of sel's matchLabels and
// of its single-valued In expressions that keys lacks; nil selects nothing.
func LabelSelectorKeys(keys []string, sel *metav1.LabelSelector) []string {
	if sel == nil {
		return keys
	}
	for k := range sel.MatchLabels {
		keys = AppendNew(keys, k)
	}
	for _, r := range sel.MatchExpressions {
		if r.Operator == metav1.LabelSelectorOpIn && len(r.Values) == 1 {
			keys = AppendNew(keys, r.Key)
		}
	}
	return keys
}

// DefaultSelectorKeys appends to keys the label keys of the selectors
// DefaultSelector draws from src (every Service, ReplicationController,
// ReplicaSet and StatefulSet) that keys lacks.
func DefaultSelectorKeys(keys []string, src *schedcore.SelectorSources) []string {
	if src == nil {
		return keys
	}
	for _, s := range src.Services {
		keys = LabelSelectorKeys(keys, &metav1.LabelSelector{MatchLabels: s.Spec.Selector})
	}
	for _, rc := range src.ReplicationControllers {
		keys = LabelSelectorKeys(keys, &metav1.LabelSelector{MatchLabels: rc.Spec.Selector})
	}
	for _, rs := range src.ReplicaSets {
		keys = LabelSelectorKeys(keys, rs.Spec.Selector)
	}
	for _, ss := range src.StatefulSets {
		keys = LabelSelectorKeys(keys, ss.Spec.Selector)
	}
	return keys
}
