package engine

import (
	"github.com/kubectl-sched/kubectl-sched/internal/share"
	"github.com/kubectl-sched/kubectl-sched/internal/snapshot"
)

// Intern makes cl's pods and nodes share their equal parts (labels,
// resource lists, containers, tolerations, affinity, spread constraints,
// owners, image names), in place, as NewOffline does with
// Options.InPlace: for a caller that owns cl and, like the engine, never
// changes those parts in place (the replay's trace, whose pods arrive
// through Offline.Add sharing them). The content of every object is kept.
// At 10,000 nodes the decoded dump's own copies of these parts were half
// of a replay's live heap.
func Intern(cl *snapshot.Cluster) {
	s := share.New()
	for _, n := range cl.Nodes {
		s.Node(n)
	}
	for _, p := range cl.Pods {
		s.Pod(p)
	}
}
