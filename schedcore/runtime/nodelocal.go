package runtime

import (
	v1 "k8s.io/api/core/v1"

	"github.com/kubectl-sched/kubectl-sched/schedcore"
)

// NodeLocal reports whether every plugin of the profile that can reject pod
// in the scheduling cycle says, for pod, that it is node-local
// (NodeLocalPlugin). Score plugins do not matter: they choose among the
// feasible nodes, never make one infeasible.
func (f *Framework) NodeLocal(pod *v1.Pod) bool {
	return allNodeLocal(f.preFilter, pod) && allNodeLocal(f.filter, pod) && allNodeLocal(f.reserve, pod) &&
		allNodeLocal(f.permit, pod) && allNodeLocal(f.preBind, pod)
}

func allNodeLocal[P schedcore.Plugin](plugins []P, pod *v1.Pod) bool {
	for _, p := range plugins {
		nl, ok := any(p).(schedcore.NodeLocalPlugin)
		if !ok || !nl.NodeLocal(pod) {
			return false
		}
	}
	return true
}
