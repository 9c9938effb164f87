package helper

import v1 "k8s.io/api/core/v1"

// DoNotScheduleTaints keeps the taints that matter for scheduling: those
// with effect NoSchedule or NoExecute (kube's DoNotScheduleTaintsFilterFunc,
// as a taint filter for component-helpers' FindMatchingUntoleratedTaint).
func DoNotScheduleTaints(t *v1.Taint) bool {
	return t.Effect == v1.TaintEffectNoSchedule || t.Effect == v1.TaintEffectNoExecute
}
