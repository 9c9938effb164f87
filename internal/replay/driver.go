package replay

// The driver: how the replay plugs state into the engine and gets
// decisions out. Everything that depends on how the engine is assembled
// is in this file.

import (
	"context"
	"errors"
	"fmt"
	"math/rand"
	"sort"
	"time"

	"github.com/go-logr/logr"
	v1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	configv1 "k8s.io/kube-scheduler/config/v1"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/kubectl-sched/kubectl-sched/internal/engine"
	"github.com/kubectl-sched/kubectl-sched/internal/snapshot"
	"github.com/kubectl-sched/kubectl-sched/plugins/names"
	"github.com/kubectl-sched/kubectl-sched/schedcore"
	"github.com/kubectl-sched/kubectl-sched/schedcore/queue"
)

// ErrNoNodes is returned for a trace without nodes.
var ErrNoNodes = errors.New("the trace has no nodes")

// Options tune a replay.
type Options struct {
	// Config is a defaulted, validated KubeSchedulerConfiguration.
	Config *configv1.KubeSchedulerConfiguration
	// Registry holds the plugins (in-tree plus extra).
	Registry schedcore.Registry
	// Seed, when UseSeed is set, breaks ties between equal best totals
	// pseudo-randomly and seeds where the preemption scan starts;
	// otherwise the lowest node name wins and the scan starts at 0.
	Seed    int64
	UseSeed bool
	// NoPreemption turns PostFilter off.
	NoPreemption bool
	// Features are the feature gates (zero value: defaults).
	Features schedcore.Features
	// Logger receives debug logs; zero discards.
	Logger logr.Logger
	// Until stops the replay at the trace's Start + Until; 0 runs until
	// nothing is left to happen (which, when pods are left pending,
	// includes their retry by the pool's flush 5 minutes after the last
	// change: a sweep that only needs the arrivals sets Until to the last
	// one).
	Until time.Duration
	// WaitWindow is the window of the wait quantile series; 0 takes a
	// fiftieth of the span replayed (at least a second).
	WaitWindow time.Duration
	// Parallelism, when positive, replaces the configuration's (the
	// goroutines of one cycle's Filter and Score). A sweep that runs one
	// replay per core sets 1. Decisions do not depend on it.
	Parallelism int
	// Probes add columns to the series.
	Probes []Probe
	// Progress, when set, is called now and then with the trace steps done
	// and their total, and once at the end.
	Progress func(done, total int)
}

// quiet is how long after the last change (an arrival, a departure, a
// placement) the replay goes on when the trace is over: every pod left in
// the unschedulable pool has been retried once by then (5 minutes and a
// 30-second tick) with nothing changed, so the state would only repeat.
const quiet = queue.DefaultPodMaxInUnschedulablePodsDuration + 30*time.Second + queue.DefaultPodMaxBackoffDuration

// maxCyclesPerInstant bounds the scheduling cycles at one instant: pods
// that keep requeueing one another without the clock moving.
const maxCyclesPerInstant = 100000

// store is the in-memory API: the latest copy of every pod that exists.
type store struct {
	pods map[string]*v1.Pod // by schedcore.PodKey
	byNS map[string]map[string]*v1.Pod
}

func (s *store) put(p *v1.Pod) {
	s.pods[schedcore.PodKey(p)] = p
	ns := s.byNS[p.Namespace]
	if ns == nil {
		ns = map[string]*v1.Pod{}
		s.byNS[p.Namespace] = ns
	}
	ns[p.Name] = p
}

func (s *store) remove(p *v1.Pod) {
	delete(s.pods, schedcore.PodKey(p))
	delete(s.byNS[p.Namespace], p.Name)
}

// list returns a namespace's pods in name order.
func (s *store) list(ns string) []*v1.Pod {
	out := make([]*v1.Pod, 0, len(s.byNS[ns]))
	for _, p := range s.byNS[ns] {
		out = append(out, p)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// binder commits a binding into the store, as the pods/binding
// subresource does.
type binder struct{ s *store }

func (b binder) Bind(_ context.Context, pod *v1.Pod, node string) error {
	cur, ok := b.s.pods[schedcore.PodKey(pod)]
	if !ok {
		return fmt.Errorf("pod %s not found", schedcore.PodName(pod))
	}
	if cur.Spec.NodeName != "" {
		return fmt.Errorf("pod %s is already assigned to node %q", schedcore.PodName(pod), cur.Spec.NodeName)
	}
	bound := cur.DeepCopy()
	bound.Spec.NodeName = node
	bound.Status.NominatedNodeName = ""
	b.s.put(bound)
	return nil
}

// volumeBinder stores VolumeBinding's PreBind writes.
type volumeBinder struct{ state *schedcore.StorageState }

func (b *volumeBinder) BindPodVolumes(_ context.Context, _ *v1.Pod, pvs []*v1.PersistentVolume, pvcs []*v1.PersistentVolumeClaim) error {
	if b.state == nil {
		return errors.New("no storage state")
	}
	for _, pv := range pvs {
		b.state.PutPV(pv)
	}
	for _, pvc := range pvcs {
		b.state.PutPVC(pvc)
	}
	return nil
}

// run is one replay's engine and books.
type run struct {
	ctx      context.Context
	tr       *Trace
	o        Options
	logger   logr.Logger
	st       *store
	cache    *schedcore.Cache
	snap     *schedcore.Snapshot
	clk      *clocktesting.FakeClock
	profiles *engine.Profiles
	q        *queue.PriorityQueue
	sched    *schedcore.Scheduler
	rec      *recorder
	gangs    bool
	// lastChange is the last arrival, departure or placement.
	lastChange time.Time
	// instant is the virtual time being processed: what the books record.
	// The clock runs a nanosecond ahead per pod arriving at the same
	// instant, so that the queue orders them by arrival (their
	// timestamps), as the dry-run does.
	instant time.Time
	// arrivals counts the pods that arrived at this instant.
	arrivals int
}

// PreemptPod deletes a victim, as the API server and informers would.
func (r *run) PreemptPod(_ context.Context, preemptor, victim *v1.Pod, _ string) error {
	cur, ok := r.st.pods[schedcore.PodKey(victim)]
	if !ok {
		return nil
	}
	r.st.remove(cur)
	r.cache.RemovePod(cur)
	if i, ok := r.rec.pod(cur); ok {
		r.rec.gone(r.instant, i, EventPreempted, "", schedcore.PodName(preemptor))
	}
	r.q.MoveAllToActiveOrBackoffQueue(r.logger, schedcore.EventAssignedPodDelete, cur, nil, nil)
	return nil
}

// ClearNominatedNodeName clears nominations, as kube's status patch.
func (r *run) ClearNominatedNodeName(_ context.Context, pods []*v1.Pod) error {
	for _, p := range pods {
		r.setNominatedNode(p, "")
	}
	return nil
}

func (r *run) setNominatedNode(p *v1.Pod, node string) {
	cur, ok := r.st.pods[schedcore.PodKey(p)]
	if !ok || cur.Spec.NodeName != "" || cur.Status.NominatedNodeName == node {
		return
	}
	upd := cur.DeepCopy()
	upd.Status.NominatedNodeName = node
	r.st.put(upd)
	r.q.Update(r.logger, cur, upd)
}

// Run replays the trace and returns its record. The trace is not
// modified: runs may share it concurrently.
func Run(ctx context.Context, tr *Trace, o Options) (*Result, error) {
	if err := tr.Validate(); err != nil {
		return nil, err
	}
	if len(tr.Nodes) == 0 {
		return nil, ErrNoNodes
	}
	if o.Features == (schedcore.Features{}) {
		o.Features = schedcore.DefaultFeatures
	}
	cfg := o.Config
	if o.Parallelism > 0 {
		c := *cfg
		par := int32(o.Parallelism)
		c.Parallelism = &par
		cfg = &c
	}
	objs := tr.Objects
	if objs == nil {
		objs = &snapshot.Cluster{}
	}
	r := &run{ctx: ctx, tr: tr, o: o, logger: o.Logger,
		st:    &store{pods: make(map[string]*v1.Pod, len(tr.Pods)), byNS: map[string]map[string]*v1.Pod{}},
		cache: schedcore.NewCache(o.Features), snap: schedcore.NewEmptySnapshot(),
		clk: clocktesting.NewFakeClock(tr.Start), lastChange: tr.Start,
	}
	vb := &volumeBinder{}
	objects := engine.NewObjects(r.st.list, objs.Others)
	hooks := schedcore.PreemptionHooks{
		PDBs:    func() []*policyv1.PodDisruptionBudget { return objs.PDBs },
		Evictor: r,
	}
	if o.UseSeed {
		rnd := rand.New(rand.NewSource(o.Seed))
		hooks.Offset = func(n int32) int32 { return rnd.Int31n(n) }
	}
	var err error
	r.profiles, err = engine.BuildProfiles(ctx, cfg, o.Registry, r.snap, engine.HandleOptions{Binder: binder{r.st}, VolumeBinder: vb, Seed: o.Seed, Features: o.Features, Clock: r.clk, Objects: objects, Preemption: hooks})
	if err != nil {
		return nil, err
	}
	if o.NoPreemption {
		for _, fw := range r.profiles.ByName {
			fw.DisablePostFilter()
		}
	}
	for _, fw := range r.profiles.ByName {
		if _, ok := fw.Plugin(names.Coscheduling); ok {
			r.gangs = true
		}
	}
	r.rec = newRecorder(tr, o.Features, o.Probes)

	// The starting state: the nodes there from the start and the other
	// objects; pods all come through the timeline.
	base := *objs
	base.Pods = nil
	base.Nodes = nil
	for _, n := range tr.Nodes {
		if !n.Arrive.After(tr.Start) {
			base.Nodes = append(base.Nodes, n.Node)
			r.rec.nodeArrived(tr.Start, n.Node.Name, false)
		}
	}
	engine.FillCache(r.cache, &base, r.profiles.ByName)
	r.cache.UpdateSnapshot(r.snap)
	vb.state = r.snap.Storage

	first := r.profiles.ByName[r.profiles.Order[0]]
	r.q = queue.New(first.QueueSortLess(), r.profiles.ByName,
		queue.WithClock(r.clk),
		queue.WithPodInitialBackoffDuration(time.Duration(*cfg.PodInitialBackoffSeconds)*time.Second),
		queue.WithPodMaxBackoffDuration(time.Duration(*cfg.PodMaxBackoffSeconds)*time.Second),
		queue.WithLogger(o.Logger))
	r.profiles.SetNominator(r.q)

	var pct int32
	if cfg.PercentageOfNodesToScore != nil {
		pct = *cfg.PercentageOfNodesToScore
	}
	alg := &schedcore.Algorithm{PercentageOfNodesToScore: pct}
	if o.UseSeed {
		alg.TieBreak = engine.SeededTieBreak(o.Seed)
	}
	r.sched = schedcore.NewScheduler(r.cache, r.q, r.profiles.ByName, r.snap, alg)
	r.sched.SyncBinding = true
	r.sched.Clock = r.clk
	r.sched.Logger = o.Logger
	r.sched.Hooks = schedcore.Hooks{
		CurrentPod: func(p *v1.Pod) *v1.Pod { return r.st.pods[schedcore.PodKey(p)] },
		Scheduled:  r.scheduled,
		Failed:     r.failed,
	}

	start := time.Now()
	end, err := r.loop()
	if err != nil {
		return nil, err
	}
	r.q.Close()
	window := o.WaitWindow
	if window <= 0 {
		window = max(end.Sub(tr.Start)/50, time.Second)
	}
	res := r.rec.finish(end, window)
	for i := range res.Pending {
		if res.Pending[i].Message == "" {
			res.Pending[i].Message = r.neverAttempted(res.Pending[i].Pod)
		}
	}
	res.Summary.DurationSeconds = time.Since(start).Seconds()
	res.Summary.Profiles = r.profiles.Order
	return res, nil
}

func (r *run) scheduled(_ context.Context, _ *schedcore.Framework, qpi *schedcore.QueuedPodInfo, node string, _ schedcore.ScheduleResult) {
	bound := r.st.pods[schedcore.PodKey(qpi.Pod)]
	if err := r.cache.AddPod(bound); err != nil {
		r.logger.Error(err, "confirming binding", "pod", schedcore.PodName(bound))
	}
	r.q.AssignedPodAdded(r.logger, bound)
	now := r.instant
	if i, ok := r.rec.pod(bound); ok {
		r.rec.placed(now, i, node, qpi.Attempts)
	}
	r.lastChange = now
}

func (r *run) failed(_ context.Context, _ *schedcore.Framework, qpi *schedcore.QueuedPodInfo, _ string, status *schedcore.Status, nominating *schedcore.NominatingInfo) {
	if i, ok := r.rec.pod(qpi.Pod); ok {
		r.rec.unschedulable(r.instant, i, status.Message(), sets.List(qpi.UnschedulablePlugins.Union(qpi.PendingPlugins)), qpi.Attempts)
	}
	if nominating != nil && nominating.NominatingMode == schedcore.ModeOverride {
		r.setNominatedNode(qpi.Pod, nominating.NominatedNodeName)
	}
}

// neverAttempted says why a pending pod never had a scheduling cycle.
func (r *run) neverAttempted(pod string) string {
	for i := range r.tr.Pods {
		p := r.tr.Pods[i].Pod
		if schedcore.PodName(p) != pod {
			continue
		}
		if _, ok := r.profiles.ByName[p.Spec.SchedulerName]; !ok {
			return fmt.Sprintf("no profile schedules it (schedulerName %q)", p.Spec.SchedulerName)
		}
		if qpi, ok := r.q.GetPod(p.Name, p.Namespace); ok && qpi.Gated() {
			return "gated by " + qpi.GatingPlugin
		}
	}
	return "waiting in the scheduling queue (never attempted)"
}

// loop runs the timeline and returns the virtual time it ended at.
func (r *run) loop() (time.Time, error) {
	steps := r.tr.timeline()
	until := time.Time{}
	if r.o.Until > 0 {
		until = r.tr.Start.Add(r.o.Until)
	}
	origin := r.tr.Start
	next := 0
	now := r.tr.Start
	progressEvery := max(len(steps)/100, 1)
	lastProgress := -1
	for r.ctx.Err() == nil {
		at, ok := time.Time{}, false
		consider := func(t time.Time) {
			if !ok || t.Before(at) {
				at, ok = t, true
			}
		}
		if next < len(steps) {
			consider(steps[next].at)
		}
		if t, found := r.q.NextFlush(origin); found && (next < len(steps) || !t.After(r.lastChange.Add(quiet))) {
			consider(t)
		}
		if r.sched.NumParked() > 0 {
			// Permit timeouts fire on the clock: move a second at a time.
			consider(now.Add(time.Second))
		}
		if !ok || (!until.IsZero() && at.After(until)) {
			break
		}
		now = at
		if r.clk.Now().Before(now) {
			r.clk.SetTime(now)
		}
		r.instant, r.arrivals = now, 0
		// The flushes first, while the clock is on the instant (arrivals
		// move it on by a nanosecond each).
		r.q.Flush(r.logger, origin)
		for next < len(steps) && !steps[next].at.After(now) {
			r.apply(steps[next])
			next++
		}
		r.sched.ResolveWaiting(r.ctx)
		r.drain()
		r.rec.sample(now, r.snapshot)
		if r.o.Progress != nil && next/progressEvery != lastProgress {
			lastProgress = next / progressEvery
			r.o.Progress(next, len(steps))
		}
	}
	if err := r.ctx.Err(); err != nil {
		return now, err
	}
	if r.o.Progress != nil {
		r.o.Progress(next, len(steps))
	}
	if !until.IsZero() {
		now = until
	}
	return now, nil
}

func (r *run) snapshot() *schedcore.Snapshot {
	r.cache.UpdateSnapshot(r.snap)
	return r.snap
}

// drain schedules until nothing can be popped.
func (r *run) drain() {
	for cycles := 0; cycles < maxCyclesPerInstant && r.ctx.Err() == nil; cycles++ {
		qpi, ok := r.q.TryPop(r.logger)
		if !ok {
			return
		}
		r.sched.ScheduleOnePod(r.ctx, qpi)
	}
}

// apply carries out one arrival or departure, as the informers' event
// handlers of kube-scheduler would deliver it.
func (r *run) apply(s step) {
	now := r.instant
	r.lastChange = now
	switch s.kind {
	case stepNodeArrive:
		n := r.tr.Nodes[s.i].Node
		r.cache.AddNode(n)
		r.rec.nodeArrived(now, n.Name, true)
		r.q.MoveAllToActiveOrBackoffQueue(r.logger, schedcore.ClusterEvent{Resource: schedcore.Node, ActionType: schedcore.Add}, nil, n, nil)
	case stepNodeLeave:
		n := r.tr.Nodes[s.i].Node
		r.q.MoveAllToActiveOrBackoffQueue(r.logger, schedcore.ClusterEvent{Resource: schedcore.Node, ActionType: schedcore.Delete}, n, nil, nil)
		r.cache.RemoveNode(n)
		r.rec.nodeLeft(now, n.Name)
		// The pod garbage collector deletes the pods bound to a node that
		// is gone.
		var orphans []*v1.Pod
		for _, p := range r.st.pods {
			if p.Spec.NodeName == n.Name {
				orphans = append(orphans, p)
			}
		}
		sort.Slice(orphans, func(i, j int) bool { return schedcore.PodName(orphans[i]) < schedcore.PodName(orphans[j]) })
		for _, p := range orphans {
			r.deleteBound(p, EventDeparted, "node "+n.Name+" was removed")
		}
	case stepPodArrive:
		p := r.tr.Pods[s.i].Pod.DeepCopy()
		p.DeletionTimestamp = nil
		p.UID = uid(p)
		if p.Spec.SchedulerName == "" {
			// The API server's default.
			p.Spec.SchedulerName = v1.DefaultSchedulerName
		}
		r.st.put(p)
		if p.Spec.NodeName != "" {
			r.rec.arrivedBound(now, s.i, p.Spec.NodeName)
			if err := r.cache.AddPod(p); err != nil {
				r.logger.Error(err, "adding a bound pod", "pod", schedcore.PodName(p))
			}
			r.q.AssignedPodAdded(r.logger, p)
			return
		}
		r.rec.arrivedPending(s.i)
		if _, ok := r.profiles.ByName[p.Spec.SchedulerName]; !ok {
			return
		}
		if r.arrivals > 0 {
			r.clk.Step(time.Nanosecond)
		}
		r.arrivals++
		r.q.Add(r.logger, p)
		if r.gangs {
			r.q.MoveAllToActiveOrBackoffQueue(r.logger, schedcore.ClusterEvent{Resource: schedcore.UnscheduledPod, ActionType: schedcore.Add}, nil, p, nil)
		}
	case stepPodLeave, stepPodLeaveAtArrival:
		cur, ok := r.st.pods[string(uid(r.tr.Pods[s.i].Pod))]
		if !ok {
			return // preempted, or its node left
		}
		if cur.Spec.NodeName != "" {
			r.deleteBound(cur, EventDeparted, "")
			return
		}
		r.deletePending(cur)
	}
}

// uid is the pod's UID, or the stable one the dry-run gives pods without.
func uid(p *v1.Pod) types.UID {
	if p.UID != "" {
		return p.UID
	}
	return types.UID("snapshot-" + p.Namespace + "-" + p.Name)
}

// deleteBound deletes a running pod: kube's deleteAssignedPodFromCache.
func (r *run) deleteBound(p *v1.Pod, typ, msg string) {
	r.st.remove(p)
	r.cache.RemovePod(p)
	if i, ok := r.rec.pod(p); ok {
		r.rec.gone(r.instant, i, typ, msg, "")
	}
	r.q.MoveAllToActiveOrBackoffQueue(r.logger, schedcore.EventAssignedPodDelete, p, nil, nil)
}

// deletePending deletes a pod that is still pending: kube's
// deletePodFromSchedulingQueue.
func (r *run) deletePending(p *v1.Pod) {
	r.st.remove(p)
	if i, ok := r.rec.pod(p); ok {
		r.rec.gone(r.instant, i, EventDeleted, "deleted while pending", "")
	}
	r.q.Delete(p)
	if r.cache.IsAssumedPod(p) {
		// Waiting at Permit: reject it, its binding cycle forgets it.
		if fw := r.profiles.ByName[p.Spec.SchedulerName]; fw != nil {
			if w := fw.GetWaitingPod(p.UID); w != nil {
				w.Reject("", "removed")
			}
		}
		r.sched.ResolveWaiting(r.ctx)
		r.q.MoveAllToActiveOrBackoffQueue(r.logger, schedcore.EventAssignedPodDelete, p, nil, nil)
		return
	}
	if p.Status.NominatedNodeName != "" {
		prio := schedcore.PodPriority(p)
		r.q.MoveAllToActiveOrBackoffQueue(r.logger, schedcore.EventAssignedPodDelete, p, nil, func(o *v1.Pod) bool { return schedcore.PodPriority(o) <= prio })
	}
}
