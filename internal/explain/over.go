package explain

import (
	"github.com/kubectl-sched/kubectl-sched/internal/engine"
	"github.com/kubectl-sched/kubectl-sched/internal/snapshot"
	"github.com/kubectl-sched/kubectl-sched/schedcore"
)

// NewStateOver explains against an engine a driver has already loaded (a
// what-if simulation after placing its copies) instead of loading the
// cluster again: cache, snap and profiles are used as they are, and cl
// lists the pods in them (for finding a pod of the same name). No pod is
// taken as nominated. The driver must not use the engine while the state
// explains.
func NewStateOver(cl *snapshot.Cluster, cache *schedcore.Cache, snap *schedcore.Snapshot, profiles *engine.Profiles, o Options) *State {
	if o.Features == (schedcore.Features{}) {
		o.Features = schedcore.DefaultFeatures
	}
	return &State{o: o, cluster: cl, cache: cache, snap: snap, profiles: profiles,
		nominated: &nominator{byNode: map[string][]*schedcore.PodInfo{}}}
}
