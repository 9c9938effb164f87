package engine

import (
	"context"
	"fmt"
	"slices"
	"time"

	v1 "k8s.io/api/core/v1"
	schedulingv1beta1 "k8s.io/api/scheduling/v1beta1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/kubectl-sched/kubectl-sched/internal/share"
	"github.com/kubectl-sched/kubectl-sched/internal/snapshot"
	"github.com/kubectl-sched/kubectl-sched/schedcore"
	schedruntime "github.com/kubectl-sched/kubectl-sched/schedcore/runtime"
)

// Epoch is where an offline cluster's clock starts; only differences
// matter.
var Epoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// Observer is told what happens in an offline cluster, as it happens. Nil
// functions are not called.
type Observer struct {
	// Placed: a pod was bound to node (after attempts scheduling attempts).
	// result.Scores hold names and totals, without per-plugin lists.
	Placed func(pod *v1.Pod, node string, attempts int, result schedruntime.ScheduleResult)
	// Failed: a scheduling attempt of pod failed.
	Failed func(pod *v1.Pod, f Failure)
	// Evicted: preemption evicted victim from node for preemptor.
	Evicted func(victim *v1.Pod, node string, preemptor *v1.Pod)
	// GroupEvicted: pod-group preemption evicted victim for the PodGroup
	// pg (kube's candidate is the whole cluster, no node).
	GroupEvicted func(victim *v1.Pod, pg *schedulingv1beta1.PodGroup)
	// Nominated: preemption nominated node for pod.
	Nominated func(pod *v1.Pod, node string)
	// Attempting: pod is about to go through a scheduling cycle (its
	// attempt number attempt, from 1) on the cluster as it is now: every
	// placement and eviction so far is in the cache. The engine is not to
	// be changed (explain --at-turn explains the pod here).
	Attempting func(ctx context.Context, pod *v1.Pod, attempt int)
}

// Failure is one failed scheduling attempt.
type Failure struct {
	// Reason is schedruntime.ReasonUnschedulable or ReasonSchedulerError.
	Reason string
	// Status carries the message (kube's FitError for unschedulable pods).
	Status *schedcore.Status
	// Plugins rejected the pod or left it pending, by name.
	Plugins []string
	// Attempts counts the pod's scheduling attempts so far.
	Attempts int
	// ForGroup is set when the pod was rejected for its group's sake (a
	// sibling failed, the group timed out or backs off), not its own fit.
	ForGroup bool
}

// Offline is an engine over an in-memory cluster, shared by the drivers
// that simulate (dryrun; replays, capacity and drain plans): the pods'
// API store, the cache, a binder that commits into the store, a volume
// binder, an evictor, and a fake clock. Changes (bindings, evictions,
// arrivals, departures) reach the queue as the informers would deliver
// them, so the queueing hints requeue pods as in a live scheduler. It is
// driven from one goroutine.
type Offline struct {
	*Engine
	// Clock is the cluster's clock; it moves only when Run waits for
	// backoffs and Permit timeouts, or when the driver moves it (Advance).
	Clock *clocktesting.FakeClock

	store   *store
	objects *Objects
	// podGroups are the cluster's PodGroups as they are now (their status
	// as the pod-group cycles wrote it), by namespace/name.
	podGroups map[string]*schedulingv1beta1.PodGroup
	pgOrder   []string
	obs       Observer
	placed    int
	dra       offlineDRA
	// changes counts the changes to the cluster made outside the pods'
	// store (nodes, objects, claims, PodGroups); see Changes.
	changes uint64
	// offsets are the preemption scan offsets drawn (seeded) since the
	// last TakeOffsets; redraw draws one again (see offline_changes.go).
	offsets       []int32
	recordOffsets bool
	redraw        func(n int32)
	// lastPlugins is the last failure's plugin list, pluginsBuf the
	// buffer the next one is made in (failedPlugins).
	lastPlugins, pluginsBuf []string
}

// NewOffline loads a copy of cl (its pods are not modified, unless
// o.InPlace: then missing UIDs are filled in) into a new
// engine and returns it with the cluster's pending pods in queue order,
// not yet queued (Submit queues them).
func NewOffline(ctx context.Context, cl *snapshot.Cluster, o Options, obs Observer) (*Offline, []*v1.Pod, error) {
	if len(cl.Nodes) == 0 {
		return nil, nil, ErrNoNodes
	}
	c, d, vb := newOffline(cl, schedcore.NewDRAManager(), obs, o)
	e, err := New(ctx, o, d)
	if err != nil {
		return nil, nil, err
	}
	c.Engine = e
	work := *cl
	work.Pods = make([]*v1.Pod, len(cl.Pods))
	// In place, the pods and nodes share their equal parts (the loader
	// shared them already when the cluster has a Sharer).
	var sh *share.Sharer
	if o.InPlace && cl.Sharer == nil {
		sh = share.New()
		for _, n := range cl.Nodes {
			sh.Node(n)
		}
	}
	for i, p := range cl.Pods {
		if o.InPlace {
			if sh != nil {
				sh.Pod(p)
			}
		} else {
			p = shallowCopy(p)
		}
		work.Pods[i] = p
	}
	pending, err := e.Load(&work)
	if err != nil {
		return nil, nil, err
	}
	for _, p := range work.Pods {
		c.store.put(p)
	}
	vb.state = e.Snapshot.Storage
	return c, pending, nil
}

// Submit queues pods already in the cluster (the pending pods NewOffline
// returned), in the given order: queue timestamps follow it, so pods of
// equal priority keep it.
func (c *Offline) Submit(pods ...*v1.Pod) {
	for _, p := range pods {
		c.Queue.Add(c.Options.Logger, p)
		if c.Options.Features.GenericWorkload {
			// kube's handler replays every unscheduled pod's Add to the
			// unschedulable pool: a member may complete its gated group.
			c.Queue.MoveAllToActiveOrBackoffQueue(c.Options.Logger, schedcore.ClusterEvent{Resource: schedcore.UnscheduledPod, ActionType: schedcore.Add}, nil, p, nil)
		}
		c.Clock.Step(time.Microsecond)
	}
}

// Add brings a new pod into the cluster (an arrival): a bound pod goes to
// the cache, a pending pod of one of the profiles to the queue, after the
// resourceclaim controller's work (its template claims are created). A
// pod without a UID gets SnapshotUID. It is an error if the pod exists.
// pod is not modified; the cluster's pod is a copy of its top-level fields
// (see shallowCopy) that shares its maps, slices and pointers, so the
// caller must not change those in place afterwards (a replay's trace pod,
// a capacity copy's spec): a deep copy per arrival was 135 of the 430 MB
// live in a 10,000-node replay.
func (c *Offline) Add(pod *v1.Pod) error { return c.AddOwned(shallowCopy(pod)) }

// AddOwned is Add for a pod object the caller gives away: p itself (its
// top-level struct) becomes the cluster's, which may write its fields, so
// the caller must not read or change it afterwards; its maps, slices and
// pointers are shared as Add shares them. A replay's arrival is a copy
// made for the cluster: copying it again kept two per running pod (1.5 KB
// each, 48 of a 10,000-node replay's 317 MB live).
func (c *Offline) AddOwned(p *v1.Pod) error {
	if p.UID == "" {
		p.UID = SnapshotUID(p.Namespace, p.Name)
	}
	if _, ok := c.store.get(p.Namespace, p.Name); ok {
		return fmt.Errorf("pod %s already exists", schedcore.PodName(p))
	}
	p = c.createTemplateClaims(context.Background(), p)
	c.store.put(p)
	switch {
	case p.Spec.NodeName != "":
		if err := c.Cache.AddPod(p); err != nil {
			return err
		}
		c.Queue.AssignedPodAdded(c.Options.Logger, p)
	case c.Framework(p) != nil:
		c.Cache.AddPodGroupMember(p)
		c.Submit(p)
	}
	return nil
}

// Delete removes a pod from the cluster (a departure or an eviction): a
// bound pod leaves the cache and wakes the pods its resources may help, a
// pending one leaves the queue; either releases its ResourceClaims (see
// releaseClaims). A pod that is not there is no error.
func (c *Offline) Delete(namespace, name string) {
	cur, ok := c.store.get(namespace, name)
	if !ok {
		return
	}
	c.store.delete(cur)
	c.releaseClaims(context.Background(), cur)
	if cur.Spec.NodeName != "" {
		c.Cache.RemovePod(cur)
		c.Queue.MoveAllToActiveOrBackoffQueue(c.Options.Logger, schedcore.EventAssignedPodDelete, cur, nil, nil)
		return
	}
	c.Cache.RemovePodGroupMember(cur)
	c.Queue.Delete(cur)
}

// UpdatePending replaces a pending pod (its scheduling gates removed, a
// label changed) and delivers the update as kube's handler for an
// unscheduled pod (updatePodInSchedulingQueue): the cache's pod-group
// member, then the queue. It is an error if the pod is not pending.
func (c *Offline) UpdatePending(pod *v1.Pod) error {
	cur, ok := c.store.get(pod.Namespace, pod.Name)
	if !ok || cur.Spec.NodeName != "" {
		return fmt.Errorf("pod %s is not pending", schedcore.PodName(pod))
	}
	upd := pod.DeepCopy()
	upd.UID = cur.UID
	upd.Spec.NodeName = ""
	c.store.put(upd)
	c.Cache.UpdatePodGroupMember(cur, upd)
	c.Queue.Update(c.Options.Logger, cur, upd)
	return nil
}

// AddCopy brings n copies of a pod into the cluster, bound to a node
// (pod.Spec.NodeName set), without a scheduling cycle: as the bindings of
// the copies capacity counts node by node are committed. The copy must
// differ from tmpl's pod only in name, UID and node: the cache shares
// tmpl's parsed terms and resources. With n > 1 the copies are one object,
// the store's pod (see schedcore.Cache.AddPodCopy). No pending pod waits
// for them, so the queue is not told.
func (c *Offline) AddCopy(pod *v1.Pod, tmpl *schedcore.PodInfo, n int) error {
	if pod.UID == "" {
		pod.UID = SnapshotUID(pod.Namespace, pod.Name)
	}
	if _, ok := c.store.get(pod.Namespace, pod.Name); ok {
		return fmt.Errorf("pod %s already exists", schedcore.PodName(pod))
	}
	c.store.put(pod)
	return c.Cache.AddPodCopy(pod, tmpl, n)
}

// AddObject adds (or replaces) an object the plugins read through
// Handle.Objects: a PodGroup of a gang's copy.
func (c *Offline) AddObject(u *unstructured.Unstructured) {
	c.changes++
	c.objects.Add(u)
}

// AddPVC adds a PersistentVolumeClaim (a StatefulSet's claim, created
// before its pod) as the claim informer would: the storage state the
// volume plugins read takes it and the queue gets PersistentVolumeClaim/Add.
func (c *Offline) AddPVC(pvc *v1.PersistentVolumeClaim) {
	c.changes++
	c.Current().Storage.PutPVC(pvc)
	c.Queue.MoveAllToActiveOrBackoffQueue(c.Options.Logger, schedcore.ClusterEvent{Resource: schedcore.PersistentVolumeClaim, ActionType: schedcore.Add}, nil, pvc, nil)
}

// Current brings the engine's snapshot up to date with the cache (the
// bindings, arrivals and departures so far) and returns it, as a
// scheduling cycle would see the cluster now. It is the engine's: read it,
// do not change it.
func (c *Offline) Current() *schedcore.Snapshot {
	c.Cache.UpdateSnapshot(c.Snapshot)
	return c.Snapshot
}

// Pod returns the cluster's current copy of a pod.
func (c *Offline) Pod(namespace, name string) (*v1.Pod, bool) { return c.store.get(namespace, name) }

// Pods lists a namespace's pods, bound and pending, in name order.
func (c *Offline) Pods(namespace string) []*v1.Pod { return c.store.list(namespace) }

// Placements counts the pods placed so far.
func (c *Offline) Placements() int { return c.placed }

// Advance moves the clock by d and runs the binding cycles whose Permit
// wait is decided by then.
func (c *Offline) Advance(ctx context.Context, d time.Duration) {
	c.Clock.Step(d)
	c.Scheduler.ResolveWaiting(ctx)
}

// Close stops the queue.
func (c *Offline) Close() { c.Queue.Close() }

func (c *Offline) scheduled(_ context.Context, _ *schedruntime.Framework, qpi *schedcore.QueuedPodInfo, node string, res schedruntime.ScheduleResult) {
	bound, _ := c.store.get(qpi.Pod.Namespace, qpi.Pod.Name)
	if err := c.Cache.AddPod(bound); err != nil {
		c.Options.Logger.Error(err, "confirming binding", "pod", schedcore.PodName(bound))
	}
	c.Queue.AssignedPodAdded(c.Options.Logger, bound)
	c.placed++
	if c.obs.Placed != nil {
		c.obs.Placed(bound, node, qpi.Attempts, res)
	}
}

func (c *Offline) failed(_ context.Context, _ *schedruntime.Framework, qpi *schedcore.QueuedPodInfo, reason string, status *schedcore.Status, nominating *schedcore.NominatingInfo) {
	if c.obs.Failed != nil {
		c.obs.Failed(qpi.Pod, Failure{
			Reason: reason, Status: status, Attempts: qpi.Attempts,
			Plugins:  c.failedPlugins(qpi),
			ForGroup: schedcore.RejectedForGroup(status),
		})
	}
	// kube patches the nomination into the pod's status (updatePod) when
	// it changes; the update reaches the queue like an informer event, so
	// the next attempt tries that node first.
	if nominating != nil && nominating.NominatingMode == schedcore.ModeOverride {
		if c.setNominatedNode(qpi.Pod, nominating.NominatedNodeName) && nominating.NominatedNodeName != "" && c.obs.Nominated != nil {
			c.obs.Nominated(qpi.Pod, nominating.NominatedNodeName)
		}
	}
}

// failedPlugins lists, in name order, the plugins that rejected qpi or
// left it pending. A list equal to the last one is that list, shared
// (Failure.Plugins is read, never written): the pods that never fit fail
// alike retry after retry, and a list made for each was most of a long
// replay's garbage.
func (c *Offline) failedPlugins(qpi *schedcore.QueuedPodInfo) []string {
	buf := c.pluginsBuf[:0]
	for p := range qpi.UnschedulablePlugins {
		buf = append(buf, p)
	}
	for p := range qpi.PendingPlugins {
		if !qpi.UnschedulablePlugins.Has(p) {
			buf = append(buf, p)
		}
	}
	slices.Sort(buf)
	c.pluginsBuf = buf
	if len(buf) == 0 {
		return nil
	}
	if !slices.Equal(buf, c.lastPlugins) {
		c.lastPlugins = slices.Clone(buf)
	}
	return c.lastPlugins
}

// setNominatedNode patches status.nominatedNodeName of a pending pod and
// delivers the update to the queue, as the informer would; it reports
// whether the pod changed.
func (c *Offline) setNominatedNode(p *v1.Pod, node string) bool {
	cur, ok := c.store.get(p.Namespace, p.Name)
	if !ok || cur.UID != p.UID || cur.Spec.NodeName != "" || cur.Status.NominatedNodeName == node {
		return false
	}
	upd := cur.DeepCopy()
	upd.Status.NominatedNodeName = node
	c.store.put(upd)
	c.Queue.Update(c.Options.Logger, cur, upd)
	return true
}

// Run schedules until nothing is left in activeQ or backoffQ and no pod
// waits at Permit. Pods in backoff are taken when activeQ is empty (kube's
// SchedulerPopFromBackoffQ); pods in the unschedulable pool stay there,
// since only a cluster event could move them. While pods wait at Permit
// the clock moves a second at a time, so their timeouts fire as they would
// in a live scheduler. A gang that keeps timing out and retrying would
// loop forever; Run stops once no pod has been placed for twice the
// longest Permit timeout plus the longest backoff (the state then only
// repeats).
func (c *Offline) Run(ctx context.Context) error {
	s, q, clk := c.Scheduler, c.Queue, c.Clock
	lastPlaced, lastProgress := c.placed, clk.Now()
	var longest time.Duration
	idle := 0
	settle := func() error {
		// Let the last waits time out so that no partial gang keeps its
		// reservations.
		for s.NumParked() > 0 && ctx.Err() == nil {
			c.Advance(ctx, time.Second)
		}
		return ctx.Err()
	}
	for ctx.Err() == nil {
		if c.placed != lastPlaced {
			lastPlaced, lastProgress = c.placed, clk.Now()
		}
		qpi, ok := q.TryPop(c.Options.Logger)
		if !ok {
			l := q.Lengths()
			if l.Active == 0 && l.Backoff == 0 && s.NumParked() == 0 {
				return nil
			}
			for _, fw := range c.Profiles.ByName {
				fw.IterateOverWaitingPods(func(w schedcore.WaitingPod) { longest = max(longest, w.Timeout()) })
			}
			if longest > 0 && clk.Since(lastProgress) > 2*longest+maxBackoff {
				return settle()
			}
			// A pod group that fails goes back to backoffQ after every
			// attempt, never to the unschedulable pool (kube retries it
			// for ever): once nothing was placed for longer than any
			// group's backoff, each has been retried in vain.
			if l.Backoff > 0 && c.Options.Features.GenericWorkload && clk.Since(lastProgress) > 2*longest+maxGroupBackoff {
				return settle()
			}
			// Let backoff and Permit timeouts expire on the fake clock.
			c.Advance(ctx, time.Second)
			continue
		}
		before := c.placed
		if c.obs.Attempting != nil {
			if qpi.Group != nil {
				for _, m := range qpi.Group.Members {
					c.obs.Attempting(ctx, m.Pod, m.Attempts)
				}
			} else {
				c.obs.Attempting(ctx, qpi.Pod, qpi.Attempts)
			}
		}
		s.ScheduleOnePod(ctx, qpi)
		// A cycle takes time: what it queues (a failed pod, the pods its
		// binding or preemption wakes) is stamped after what earlier
		// cycles queued, as on kube-scheduler's clock, so pods of equal
		// priority come back in the order they failed.
		clk.Step(cycleTime)
		if c.placed == before {
			idle++
		} else {
			idle = 0
		}
		if idle > maxIdleCycles {
			// Safety net: pods that keep failing and requeueing one
			// another without anything being placed.
			return settle()
		}
	}
	return ctx.Err()
}

// cycleTime is how far a scheduling cycle moves the offline clock: enough
// to order what cycles queue, too little to expire a backoff or a Permit
// wait in any number of cycles Run makes.
const cycleTime = time.Nanosecond

// maxIdleCycles bounds the scheduling cycles in a row without a placement.
const maxIdleCycles = 100000

// maxGroupBackoff bounds a pod group's backoff: kube caps it at
// podMaxBackoffSeconds times the square root of the group's size; this
// covers groups of up to 1024 members.
const maxGroupBackoff = 32 * maxBackoff

// maxBackoff bounds a pod's backoff (kube's podMaxBackoffSeconds ceiling
// in practice) for Run's stop rule.
const maxBackoff = 10 * time.Second
