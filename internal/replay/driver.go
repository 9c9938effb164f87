package replay

// The driver: how the replay plugs a trace into an offline cluster of the
// engine (internal/engine.Offline) and reads decisions out. Everything
// that depends on how the engine is assembled is in this file.

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/go-logr/logr"
	v1 "k8s.io/api/core/v1"

	"github.com/kubectl-sched/kubectl-sched/internal/engine"
	"github.com/kubectl-sched/kubectl-sched/internal/snapshot"
	"github.com/kubectl-sched/kubectl-sched/plugins/names"
	"github.com/kubectl-sched/kubectl-sched/schedcore"
	"github.com/kubectl-sched/kubectl-sched/schedcore/queue"
	schedruntime "github.com/kubectl-sched/kubectl-sched/schedcore/runtime"
)

// ErrNoNodes is returned for a trace without nodes.
var ErrNoNodes = errors.New("the trace has no nodes")

// ErrNoNodesAtStart is returned for a trace whose nodes all arrive after
// its start.
var ErrNoNodesAtStart = errors.New("the trace has no node at its start")

// Options tune a replay: the engine's options (configuration, plugins,
// feature gates, seed, preemption) and the replay's own.
type Options struct {
	engine.Options
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
	// NoUnschedulableEvents leaves the unschedulable events (one per
	// failed attempt, most of a long replay's memory) out of
	// Result.Events; the counts, the pending pods' last messages and
	// plugins and the series are the same. For callers that do not show
	// the event log (the table, CSV and HTML reports).
	NoUnschedulableEvents bool
	// noRepeat runs every retry's cycle, even those whose answer is known
	// (repeat.go); for the tests that compare.
	noRepeat bool
}

// quiet is how long after the last change (an arrival, a departure, a
// placement) the replay goes on when the trace is over: every pod left in
// the unschedulable pool has been retried once by then (5 minutes and a
// 30-second tick) with nothing changed, so the state would only repeat.
const quiet = queue.DefaultPodMaxInUnschedulablePodsDuration + 30*time.Second + queue.DefaultPodMaxBackoffDuration

// maxCyclesPerInstant bounds the scheduling cycles at one instant: pods
// that keep requeueing one another without the clock moving.
const maxCyclesPerInstant = 100000

// run is one replay: an offline cluster (the engine with its in-memory
// API, binder and evictor) and the books.
type run struct {
	ctx    context.Context
	tr     *Trace
	o      Options
	logger logr.Logger
	c      *engine.Offline
	rec    *recorder
	gangs  bool
	// lastChange is the last arrival, departure or placement.
	lastChange time.Time
	// rep keeps failed attempts that may be repeated (repeat.go).
	rep repeats
	// instant is the virtual time being processed: what the books record.
	// The clock runs a little ahead of it per pod arriving at the same
	// instant (engine.Offline.Add), so that the queue orders them by
	// arrival, as the dry-run does.
	instant time.Time
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
	eo := o.Options
	if o.Parallelism > 0 {
		if eo.Config == nil {
			f := eo.Features
			if f == (schedcore.Features{}) {
				f = schedcore.DefaultFeatures
			}
			cfg, err := engine.LoadConfigWithFeatures("", f)
			if err != nil {
				return nil, err
			}
			eo.Config = cfg
		}
		c := *eo.Config
		par := int32(o.Parallelism)
		c.Parallelism = &par
		eo.Config = &c
	}
	if o.Logger.GetSink() == nil {
		o.Logger = logr.Discard()
	}
	if o.Features == (schedcore.Features{}) {
		o.Features = schedcore.DefaultFeatures
	}
	r := &run{ctx: ctx, tr: tr, o: o, logger: o.Logger, lastChange: tr.Start, instant: tr.Start}
	r.rec = newRecorder(tr, o.Features, o.Probes)
	r.rec.noFailures = o.NoUnschedulableEvents

	// The starting state: the nodes there from the start and the other
	// objects; pods all come through the timeline.
	base := &snapshot.Cluster{}
	if tr.Objects != nil {
		*base = *tr.Objects
	}
	base.Pods, base.Nodes = nil, nil
	if len(tr.PodGroups) > 0 {
		base.Workloads.PodGroups = nil
		for _, g := range tr.PodGroups {
			if !g.Arrive.After(tr.Start) {
				base.Workloads.PodGroups = append(base.Workloads.PodGroups, g.PodGroup)
			}
		}
	}
	for _, n := range tr.Nodes {
		if !n.Arrive.After(tr.Start) {
			base.Nodes = append(base.Nodes, n.Node)
			r.rec.nodeArrived(tr.Start, n.Node.Name, false)
		}
	}
	if len(base.Nodes) == 0 {
		return nil, ErrNoNodesAtStart
	}
	c, _, err := engine.NewOffline(ctx, base, eo, engine.Observer{Placed: r.placed, Failed: r.failed, Evicted: r.evicted})
	if err != nil {
		return nil, err
	}
	r.c = c
	c.Clock.SetTime(tr.Start)
	for _, fw := range c.Profiles.ByName {
		if _, ok := fw.Plugin(names.Coscheduling); ok {
			r.gangs = true
		}
	}
	r.startRepeats()

	start := time.Now()
	end, err := r.loop()
	if err != nil {
		return nil, err
	}
	c.Close()
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
	if o.Features.GenericWorkload {
		res.PodGroups = podGroupResults(tr, c.PodGroups(), res)
		for _, g := range res.PodGroups {
			res.Summary.PodGroups++
			if g.Scheduled {
				res.Summary.PodGroupsScheduled++
			}
			if g.Pending > 0 {
				res.Summary.PodGroupsPending++
			}
		}
	}
	repeatedAttempts.Add(int64(r.rep.done))
	blindRepeats.Add(int64(r.rep.blind))
	res.Summary.DurationSeconds = time.Since(start).Seconds()
	res.Summary.Profiles = c.Profiles.Order
	return res, nil
}

func (r *run) placed(pod *v1.Pod, node string, attempts int, _ schedruntime.ScheduleResult) {
	if i, ok := r.rec.pod(pod); ok {
		r.rec.placed(r.instant, i, node, attempts, r.c.Devices(pod))
	}
	r.lastChange = r.instant
}

func (r *run) failed(pod *v1.Pod, f engine.Failure) {
	if i, ok := r.rec.pod(pod); ok {
		r.rec.unschedulable(r.instant, i, f.Status.Message(), f.Plugins, f.Attempts)
	}
}

func (r *run) evicted(victim *v1.Pod, _ string, preemptor *v1.Pod) {
	if i, ok := r.rec.pod(victim); ok {
		r.rec.gone(r.instant, i, EventPreempted, "", schedcore.PodName(preemptor))
	}
}

// neverAttempted says why a pending pod never had a scheduling cycle.
func (r *run) neverAttempted(pod string) string {
	for i := range r.tr.Pods {
		p := r.tr.Pods[i].Pod
		if schedcore.PodName(p) != pod {
			continue
		}
		if r.c.Framework(r.current(p)) == nil {
			return fmt.Sprintf("no profile schedules it (schedulerName %q)", p.Spec.SchedulerName)
		}
		if msg, plugin := r.c.GatedBy(r.ctx, r.current(p)); plugin != "" {
			return "gated by " + plugin + ": " + msg
		}
	}
	return "waiting in the scheduling queue (never attempted)"
}

// current is the cluster's copy of a trace pod, or the pod itself.
func (r *run) current(p *v1.Pod) *v1.Pod {
	if cur, ok := r.c.Pod(p.Namespace, p.Name); ok {
		return cur
	}
	return p
}

// loop runs the timeline and returns the virtual time it ended at.
func (r *run) loop() (time.Time, error) {
	steps := r.tr.timeline()
	until := time.Time{}
	if r.o.Until > 0 {
		until = r.tr.Start.Add(r.o.Until)
	}
	origin := r.tr.Start
	q, s, clk := r.c.Queue, r.c.Scheduler, r.c.Clock
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
		if t, found := q.NextFlush(origin); found && (next < len(steps) || !t.After(r.lastChange.Add(quiet))) {
			consider(t)
		}
		if s.NumParked() > 0 {
			// Permit timeouts fire on the clock: move a second at a time.
			consider(now.Add(time.Second))
		}
		if !ok || (!until.IsZero() && at.After(until)) {
			break
		}
		now = at
		if clk.Now().Before(now) {
			clk.SetTime(now)
		}
		r.instant = now
		// The flushes first, while the clock is on the instant (arrivals
		// move it on a little each).
		q.Flush(r.logger, origin)
		for next < len(steps) && !steps[next].at.After(now) {
			if err := r.apply(steps[next]); err != nil {
				return now, err
			}
			next++
		}
		s.ResolveWaiting(r.ctx)
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
	r.c.Cache.UpdateSnapshot(r.c.Snapshot)
	return r.c.Snapshot
}

// drain schedules until nothing can be popped.
func (r *run) drain() {
	for cycles := 0; cycles < maxCyclesPerInstant && r.ctx.Err() == nil; cycles++ {
		qpi, ok := r.c.Queue.TryPop(r.logger)
		if !ok {
			return
		}
		r.attempt(qpi)
	}
}

// apply carries out one arrival or departure, as the informers' event
// handlers of kube-scheduler would deliver it.
func (r *run) apply(s step) error {
	now := r.instant
	r.lastChange = now
	q := r.c.Queue
	switch s.kind {
	case stepNodeArrive:
		n := r.tr.Nodes[s.i].Node
		r.c.AddNode(n)
		r.rec.nodeArrived(now, n.Name, true)
	case stepNodeLeave:
		n := r.tr.Nodes[s.i].Node
		orphans, err := r.c.RemoveNode(n.Name)
		if err != nil {
			return err
		}
		r.rec.nodeLeft(now, n.Name)
		// The pod garbage collector deletes the pods bound to a node that
		// is gone.
		for _, p := range orphans {
			r.delete(p, EventDeparted, "node "+n.Name+" was removed")
		}
	case stepPodArrive:
		// A copy of the top-level fields, given to the cluster
		// (AddOwned): the rest is shared with the trace's pod, which
		// nothing changes in place.
		orig := r.tr.Pods[s.i].Pod
		p := new(v1.Pod)
		*p = *orig
		p.DeletionTimestamp = nil
		if p.Spec.SchedulerName == "" {
			// The API server's default.
			p.Spec.SchedulerName = v1.DefaultSchedulerName
		}
		bound := p.Spec.NodeName != ""
		if !bound {
			r.rec.arrivedPending(s.i)
		}
		if err := r.c.AddOwned(p); err != nil {
			return fmt.Errorf("%s: %w", originOr(r.tr.Pods[s.i].Origin, s.i, "pods"), err)
		}
		// p is the cluster's now: what follows reads the cluster's pod.
		cur, _ := r.c.Pod(orig.Namespace, orig.Name)
		if bound {
			r.rec.arrivedBound(now, s.i, cur.Spec.NodeName, r.c.Devices(cur))
		}
		if !bound && r.gangs && r.c.Framework(cur) != nil {
			// A new pod may complete a gang held in PreEnqueue.
			q.MoveAllToActiveOrBackoffQueue(r.logger, schedcore.ClusterEvent{Resource: schedcore.UnscheduledPod, ActionType: schedcore.Add}, nil, cur, nil)
		}
	case stepGroupArrive:
		g := r.tr.PodGroups[s.i]
		if err := r.c.AddPodGroup(g.PodGroup); err != nil {
			return fmt.Errorf("%s: %w", originOr(g.Origin, s.i, "podGroups"), err)
		}
	case stepGroupLeave:
		pg := r.tr.PodGroups[s.i].PodGroup
		r.c.DeletePodGroup(pg.Namespace, pg.Name)
	case stepPodLeave, stepPodLeaveAtArrival:
		orig := r.tr.Pods[s.i].Pod
		cur, ok := r.c.Pod(orig.Namespace, orig.Name)
		if !ok {
			return nil // preempted, or its node left
		}
		if cur.Spec.NodeName != "" {
			r.delete(cur, EventDeparted, "")
		} else {
			r.delete(cur, EventDeleted, "deleted while pending")
		}
	}
	return nil
}

// delete deletes a pod, as kube-scheduler's handlers see a deletion: a
// running pod leaves the cache and wakes the pods its room may help; a
// pending one leaves the queue, and if it was nominated, the pods of lower
// or equal priority that counted it on its node are retried; one waiting
// at Permit is rejected, which frees what it held.
func (r *run) delete(p *v1.Pod, typ, msg string) {
	if i, ok := r.rec.pod(p); ok {
		r.rec.gone(r.instant, i, typ, msg, "")
	}
	assumed := p.Spec.NodeName == "" && r.c.Cache.IsAssumedPod(p)
	r.c.Delete(p.Namespace, p.Name)
	q := r.c.Queue
	switch {
	case assumed:
		if fw := r.c.Framework(p); fw != nil {
			if w := fw.GetWaitingPod(p.UID); w != nil {
				w.Reject("", "removed")
			}
		}
		r.c.Scheduler.ResolveWaiting(r.ctx)
		q.MoveAllToActiveOrBackoffQueue(r.logger, schedcore.EventAssignedPodDelete, p, nil, nil)
	case p.Spec.NodeName == "" && p.Status.NominatedNodeName != "":
		prio := schedcore.PodPriority(p)
		q.MoveAllToActiveOrBackoffQueue(r.logger, schedcore.EventAssignedPodDelete, p, nil, func(o *v1.Pod) bool { return schedcore.PodPriority(o) <= prio })
	}
}
