package engine

import (
	"context"

	schedulingv1beta1 "k8s.io/api/scheduling/v1beta1"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/kubectl-sched/kubectl-sched/internal/snapshot"
	"github.com/kubectl-sched/kubectl-sched/schedcore"
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
	c, d, vb := newOffline(cl, e.DRA, obs, e.Options)
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

// newOffline is an offline cluster of cl without its engine, the driver
// to build the engine with over the DRA manager m, and the driver's volume
// binder, whose storage state is the engine's once it is loaded.
func newOffline(cl *snapshot.Cluster, m *schedcore.DRAManager, obs Observer, o Options) (*Offline, Driver, *volumeBinder) {
	c := &Offline{Clock: clocktesting.NewFakeClock(Epoch), store: newStore(), obs: obs}
	c.objects = NewObjects(c.store.list, cl.Others)
	c.objects.AddWorkloads(cl.Workloads)
	c.podGroups = map[string]*schedulingv1beta1.PodGroup{}
	for _, pg := range cl.Workloads.PodGroups {
		k := pg.Namespace + "/" + pg.Name
		c.podGroups[k] = pg
		c.pgOrder = append(c.pgOrder, k)
	}
	c.newDRA(m, cl.DRA.ResourceClaimTemplates)
	vb := &volumeBinder{}
	hooks := schedcore.PreemptionHooks{PDBs: PDBsOf(cl.PDBs), Evictor: evictor{c}}
	if o.UseSeed {
		hooks.Offset = c.seededOffsets(o.Seed)
	}
	return c, Driver{
		Binder:       binder{c.store},
		VolumeBinder: vb,
		DRA:          m,
		ClaimWriter:  c.dra.writer,
		Preemption:   hooks,
		Objects:      c.objects,
		Pod:          c.store.get,
		Clock:        c.Clock,
		SyncBinding:  true,
		// Observer.Placed's result: its users read names and totals.
		ScoreTotalsOnly: true,
		Scheduled:       c.scheduled,
		Failed:          c.failed,
		PodGroupStatus:  c.podGroupStatus,
	}, vb
}
