package explain

import (
	"github.com/kubectl-sched/kubectl-sched/internal/engine"
	"github.com/kubectl-sched/kubectl-sched/internal/snapshot"
)

// NewStateOver explains against an engine a driver has already loaded (a
// what-if simulation after placing its copies) instead of loading the
// cluster again: the engine's cache and profiles are used as they are, and
// cl lists pods of it (a pod of the same name as the one explained is
// taken off its node for the cycle). The driver must not use the engine
// while the state explains.
func NewStateOver(cl *snapshot.Cluster, eng *engine.Engine, o Options) *State {
	return &State{o: o, cluster: cl, eng: eng}
}
