package engine

import (
	"context"

	"github.com/kubectl-sched/kubectl-sched/internal/snapshot"
)

// OfflineFrom makes an offline cluster of e, an engine cl was loaded into
// (New, then Load(cl)) that has scheduled nothing: it keeps e's cache,
// snapshot and DRA objects and rewires the rest (Engine.Rewire), so that a
// driver that explained pods on the loaded state can go on to simulate it
// without loading it again (explain's turn check: at 100,000 nodes the
// load is most of the engine's time). The store holds cl's pods as they
// are (they are never changed in place); the pending pods Load returned
// are not queued (Submit queues them). e must not be used afterwards.
func OfflineFrom(ctx context.Context, e *Engine, cl *snapshot.Cluster, obs Observer) (*Offline, error) {
	c, d, vb := newOffline(cl, e.DRA, obs)
	ne, err := e.Rewire(ctx, d)
	if err != nil {
		return nil, err
	}
	c.Engine = ne
	// As Load does for a new engine's queue.
	for _, pg := range cl.Workloads.PodGroups {
		ne.Queue.AddPodGroup(ne.Options.Logger, pg)
	}
	for _, p := range cl.Pods {
		c.store.put(p)
	}
	vb.state = ne.Snapshot.Storage
	return c, nil
}
