// Package dryrun is the offline driver of the engine: it loads dumped
// cluster state into the cache, queues the pending pods and runs the real
// scheduling loop over them with an in-memory binder, committing every
// placement before the next pod, as a live scheduler's cache would.
package dryrun

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
	"k8s.io/apimachinery/pkg/util/sets"
	configv1 "k8s.io/kube-scheduler/config/v1"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/kubectl-sched/kubectl-sched/internal/engine"
	"github.com/kubectl-sched/kubectl-sched/internal/report"
	"github.com/kubectl-sched/kubectl-sched/internal/snapshot"
	"github.com/kubectl-sched/kubectl-sched/plugins/coscheduling"
	"github.com/kubectl-sched/kubectl-sched/schedcore"
	"github.com/kubectl-sched/kubectl-sched/schedcore/queue"
)

// ErrNoNodes is returned for a cluster without nodes.
var ErrNoNodes = errors.New("the cluster has no nodes")

// Options tune a dry-run.
type Options struct {
	// Config is a defaulted, validated KubeSchedulerConfiguration.
	Config *configv1.KubeSchedulerConfiguration
	// Registry holds the plugins (in-tree plus extra).
	Registry schedcore.Registry
	// Seed, when UseSeed is set, breaks ties between equal best totals
	// pseudo-randomly; otherwise the lowest node name wins.
	Seed    int64
	UseSeed bool
	// NoPreemption turns PostFilter off.
	NoPreemption bool
	// Features are the feature gates (zero value: defaults).
	Features schedcore.Features
	// Logger receives debug logs; zero discards.
	Logger logr.Logger
}

// epoch is where the dry-run's fake clock starts; only differences matter.
var epoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// store is the in-memory API: the latest copy of every pod.
type store struct {
	pods map[string]*v1.Pod // by schedcore.PodKey
}

// binder commits a binding into the store, as the pods/binding subresource
// would on a real API server.
type binder struct{ s *store }

func (b binder) Bind(_ context.Context, pod *v1.Pod, node string) error {
	k := schedcore.PodKey(pod)
	cur, ok := b.s.pods[k]
	if !ok {
		return fmt.Errorf("pod %s not found", schedcore.PodName(pod))
	}
	if cur.Spec.NodeName != "" {
		return fmt.Errorf("pod %s is already assigned to node %q", schedcore.PodName(pod), cur.Spec.NodeName)
	}
	bound := cur.DeepCopy()
	bound.Spec.NodeName = node
	// The API server clears the nomination on binding
	// (ClearingNominatedNodeNameAfterBinding, on by default).
	bound.Status.NominatedNodeName = ""
	b.s.pods[k] = bound
	return nil
}

// volumeBinder commits VolumeBinding's PreBind writes into the storage
// state, as the API server would store them: the PVs bound to their claims
// and the claims annotated with the selected node. No PV controller runs,
// so claims stay unbound, as in kube-scheduler's assume cache right after
// Reserve; later pods see the bound PVs and the selected nodes.
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

// evictor carries out preemption in the in-memory state, as the API
// server and the informers would: the victim is deleted from the store
// and the cache, and the deletion is an AssignedPod/Delete event for the
// queue (it requeues the preemptor, among others).
type evictor struct {
	s      *store
	cache  *schedcore.Cache
	q      schedcore.SchedulingQueue
	rep    *report.DryRun
	logger logr.Logger
	dra    *draDriver
}

func (e *evictor) PreemptPod(_ context.Context, preemptor, victim *v1.Pod, node string) error {
	k := schedcore.PodKey(victim)
	cur, ok := e.s.pods[k]
	if !ok {
		return nil
	}
	delete(e.s.pods, k)
	e.cache.RemovePod(cur)
	e.dra.releaseVictim(context.Background(), cur)
	e.rep.Evictions = append(e.rep.Evictions, report.Eviction{Pod: schedcore.PodName(cur), Node: node, Preemptor: schedcore.PodName(preemptor)})
	e.q.MoveAllToActiveOrBackoffQueue(e.logger, schedcore.EventAssignedPodDelete, cur, nil, nil)
	return nil
}

func (e *evictor) ClearNominatedNodeName(_ context.Context, pods []*v1.Pod) error {
	for _, p := range pods {
		e.setNominatedNode(p, "")
	}
	return nil
}

// setNominatedNode patches status.nominatedNodeName of a pending pod and
// delivers the update to the queue, as the informer would; it reports
// whether the pod changed.
func (e *evictor) setNominatedNode(p *v1.Pod, node string) bool {
	k := schedcore.PodKey(p)
	cur, ok := e.s.pods[k]
	if !ok || cur.Spec.NodeName != "" || cur.Status.NominatedNodeName == node {
		return false
	}
	upd := cur.DeepCopy()
	upd.Status.NominatedNodeName = node
	e.s.pods[k] = upd
	e.q.Update(e.logger, cur, upd)
	return true
}

type failure struct {
	msg, reason string
	plugins     []string
	after       int
	attempts    int
	// seq orders failures in time.
	seq int
	// own is the pod's last failure of its own (not a rejection for its
	// gang's sake), with its seq; "" if none.
	own    string
	ownSeq int
}

// Run schedules every pending pod of the cluster and returns the report.
// The cluster's pods are not modified.
func Run(ctx context.Context, cl *snapshot.Cluster, o Options) (*report.DryRun, error) {
	if len(cl.Nodes) == 0 {
		return nil, ErrNoNodes
	}
	if o.Features == (schedcore.Features{}) {
		o.Features = schedcore.DefaultFeatures
	}
	cfg := o.Config
	st := &store{pods: make(map[string]*v1.Pod, len(cl.Pods))}
	cache := schedcore.NewCache(o.Features)
	snap := schedcore.NewEmptySnapshot()
	vb := &volumeBinder{}
	clk := clocktesting.NewFakeClock(epoch)
	var podsOf func(namespace string) []*v1.Pod
	objects := engine.NewObjects(func(ns string) []*v1.Pod { return podsOf(ns) }, cl.Others)
	rep := &report.DryRun{Placements: []report.Placement{}, Unschedulable: []report.Unschedulable{}, Evictions: []report.Eviction{}}
	dra := newDRADriver(st, o.Features, o.Logger)
	ev := &evictor{s: st, cache: cache, rep: rep, logger: o.Logger, dra: dra}
	hooks := schedcore.PreemptionHooks{
		PDBs:    func() []*policyv1.PodDisruptionBudget { return cl.PDBs },
		Evictor: ev,
	}
	if o.UseSeed {
		// kube starts the preemption scan at a random node; seeded, the
		// dry-run does too, reproducibly. Unseeded it starts at 0.
		r := rand.New(rand.NewSource(o.Seed))
		hooks.Offset = func(n int32) int32 { return r.Int31n(n) }
	}
	profiles, err := engine.BuildProfiles(ctx, cfg, o.Registry, snap, engine.HandleOptions{Binder: binder{st}, VolumeBinder: vb, DRA: dra.dra, ClaimWriter: dra.writer, Seed: o.Seed, Features: o.Features, Clock: clk, Objects: objects, Preemption: hooks})
	if err != nil {
		return nil, err
	}
	if o.NoPreemption {
		for _, fw := range profiles.ByName {
			fw.DisablePostFilter()
		}
	}
	work := *cl
	work.Pods = make([]*v1.Pod, len(cl.Pods))
	for i, p := range cl.Pods {
		work.Pods[i] = p.DeepCopy()
	}
	pending := engine.FillCache(cache, &work, profiles.ByName)
	for _, p := range work.Pods {
		st.pods[schedcore.PodKey(p)] = p
	}
	podsOf = engine.PodsByNamespace(work.Pods, func(p *v1.Pod) *v1.Pod { return st.pods[schedcore.PodKey(p)] })
	cache.UpdateSnapshot(snap)
	vb.state = snap.Storage
	before := usage(snap)

	first := profiles.ByName[profiles.Order[0]]
	q := queue.New(first.QueueSortLess(), profiles.ByName,
		queue.WithClock(clk),
		queue.WithPodInitialBackoffDuration(time.Duration(*cfg.PodInitialBackoffSeconds)*time.Second),
		queue.WithPodMaxBackoffDuration(time.Duration(*cfg.PodMaxBackoffSeconds)*time.Second),
		queue.WithLogger(o.Logger))
	profiles.SetNominator(q)
	ev.q = q
	dra.q = q

	var pct int32
	if cfg.PercentageOfNodesToScore != nil {
		pct = *cfg.PercentageOfNodesToScore
	}
	alg := &schedcore.Algorithm{PercentageOfNodesToScore: pct}
	if o.UseSeed {
		alg.TieBreak = engine.SeededTieBreak(o.Seed)
	}
	sched := schedcore.NewScheduler(cache, q, profiles.ByName, snap, alg)
	sched.SyncBinding = true
	sched.Clock = clk
	sched.Logger = o.Logger

	failed := map[string]*failure{}
	seq := 0
	placed := sets.New[string]()
	sched.Hooks = schedcore.Hooks{
		CurrentPod: func(p *v1.Pod) *v1.Pod { return st.pods[schedcore.PodKey(p)] },
		Scheduled: func(_ context.Context, _ *schedcore.Framework, qpi *schedcore.QueuedPodInfo, node string, res schedcore.ScheduleResult) {
			k := schedcore.PodKey(qpi.Pod)
			bound := st.pods[k]
			if err := cache.AddPod(bound); err != nil {
				o.Logger.Error(err, "confirming binding", "pod", schedcore.PodName(bound))
			}
			q.AssignedPodAdded(o.Logger, bound)
			pl := report.Placement{Pod: schedcore.PodName(bound), Node: node, Feasible: res.FeasibleNodes, Attempts: qpi.Attempts, Devices: dra.devices(bound)}
			if len(res.Scores) > 0 {
				pl.Score = res.Scores[0].TotalScore
				for _, s := range res.Scores {
					if s.Name != node {
						pl.RunnerUp = &report.NodeScore{Node: s.Name, Score: s.TotalScore}
						break
					}
				}
			}
			rep.Placements = append(rep.Placements, pl)
			placed.Insert(k)
			delete(failed, k)
		},
		Failed: func(_ context.Context, _ *schedcore.Framework, qpi *schedcore.QueuedPodInfo, reason string, status *schedcore.Status, nominating *schedcore.NominatingInfo) {
			seq++
			f := &failure{msg: status.Message(), reason: reason, after: len(rep.Placements), attempts: qpi.Attempts, seq: seq}
			if prev := failed[schedcore.PodKey(qpi.Pod)]; prev != nil {
				f.own, f.ownSeq = prev.own, prev.ownSeq
			}
			if !coscheduling.IsGangRejection(f.msg) {
				f.own, f.ownSeq = f.msg, seq
			}
			f.plugins = sets.List(qpi.UnschedulablePlugins.Union(qpi.PendingPlugins))
			failed[schedcore.PodKey(qpi.Pod)] = f
			// kube patches the nomination into the pod's status (updatePod)
			// when it changes; the update reaches the queue like an
			// informer event, so the next attempt tries that node first.
			if nominating != nil && nominating.NominatingMode == schedcore.ModeOverride {
				if ev.setNominatedNode(qpi.Pod, nominating.NominatedNodeName) && nominating.NominatedNodeName != "" {
					rep.Nominations = append(rep.Nominations, report.Nomination{Pod: schedcore.PodName(qpi.Pod), Node: nominating.NominatedNodeName})
				}
			}
		},
	}

	start := time.Now()
	for _, p := range pending {
		q.Add(o.Logger, p)
		// Queue timestamps follow the input order, so pods of equal
		// priority keep their creationTimestamp, namespace/name order.
		clk.Step(time.Microsecond)
	}
	if err := loop(ctx, sched, q, clk, profiles, func() int { return len(rep.Placements) }); err != nil {
		return nil, err
	}
	elapsed := time.Since(start)
	q.Close()

	for _, p := range pending {
		k := schedcore.PodKey(p)
		if placed.Has(k) {
			continue
		}
		u := report.Unschedulable{Pod: schedcore.PodName(p), Reason: schedcore.ReasonUnschedulable}
		if f := failed[k]; f != nil {
			u.Message, u.Reason, u.Plugins, u.After, u.Attempts = f.msg, f.reason, f.plugins, f.after, f.attempts
		} else if len(p.Spec.SchedulingGates) > 0 {
			// Gated pods never reach a scheduling cycle; the API server
			// reports them with this condition.
			u.Reason = v1.PodReasonSchedulingGated
			u.Message = "Scheduling is blocked due to non-empty scheduling gates"
		} else if msg, plugin := gatedBy(ctx, q, profiles, p); plugin != "" {
			// Held by another PreEnqueue plugin (a gang waiting for its
			// members): its status is the pod's reason.
			u.Message, u.Plugins = msg, []string{plugin}
		} else {
			u.Message = "waiting in the scheduling queue (never attempted)"
		}
		rep.Unschedulable = append(rep.Unschedulable, u)
	}
	rep.Groups = gangReport(pending, profiles, placed, failed, rep.Unschedulable)
	cache.UpdateSnapshot(snap)
	rep.Nodes = mergeUsage(before, usage(snap))
	rep.Summary = report.Summary{
		Scheduled:       len(rep.Placements),
		Unschedulable:   len(rep.Unschedulable),
		Nodes:           len(cl.Nodes),
		Pending:         len(pending),
		DurationSeconds: elapsed.Seconds(),
		Profiles:        profiles.Order,
	}
	if s := elapsed.Seconds(); s > 0 {
		rep.Summary.PodsPerSecond = float64(len(pending)) / s
	}
	return rep, nil
}

// loop pops until nothing is left in activeQ or backoffQ and no pod waits
// at Permit. Pods in backoff are taken when activeQ is empty (kube's
// SchedulerPopFromBackoffQ); pods in the unschedulable pool stay there,
// since only a cluster event could move them and the dry-run's only events
// are its own placements. While pods wait at Permit the fake clock moves a
// second at a time, so their timeouts fire as they would in a live
// scheduler. A gang that keeps timing out and retrying would loop forever;
// the loop stops once no pod has been placed for twice the longest Permit
// timeout plus the longest backoff (the state then only repeats).
func loop(ctx context.Context, s *schedcore.Scheduler, q schedcore.SchedulingQueue, clk *clocktesting.FakeClock, profiles *engine.Profiles, placements func() int) error {
	lastPlaced, lastProgress := placements(), clk.Now()
	var longest time.Duration
	idle := 0
	for ctx.Err() == nil {
		if n := placements(); n != lastPlaced {
			lastPlaced, lastProgress = n, clk.Now()
		}
		qpi, ok := q.TryPop(logr.Discard())
		if !ok {
			l := q.Lengths()
			if l.Active == 0 && l.Backoff == 0 && s.NumParked() == 0 {
				return nil
			}
			for _, fw := range profiles.ByName {
				fw.IterateOverWaitingPods(func(w *schedcore.WaitingPod) { longest = max(longest, w.Timeout()) })
			}
			if longest > 0 && clk.Since(lastProgress) > 2*longest+maxBackoff {
				// Let the last waits time out so that no partial gang
				// keeps its reservations.
				for s.NumParked() > 0 && ctx.Err() == nil {
					clk.Step(time.Second)
					s.ResolveWaiting(ctx)
				}
				return ctx.Err()
			}
			// Let backoff and Permit timeouts expire on the fake clock.
			clk.Step(time.Second)
			s.ResolveWaiting(ctx)
			continue
		}
		s.ScheduleOnePod(ctx, qpi)
		if placements() == lastPlaced {
			idle++
		} else {
			idle = 0
		}
		if idle > maxIdleCycles {
			// Safety net: pods that keep failing and requeueing one
			// another without anything being placed.
			for s.NumParked() > 0 && ctx.Err() == nil {
				clk.Step(time.Second)
				s.ResolveWaiting(ctx)
			}
			return ctx.Err()
		}
	}
	return ctx.Err()
}

// maxIdleCycles bounds the scheduling cycles in a row without a placement.
const maxIdleCycles = 100000

// maxBackoff bounds a pod's backoff (kube's podMaxBackoffSeconds ceiling
// in practice) for the loop's stop rule.
const maxBackoff = 10 * time.Second

type nodeUse struct {
	alloc, used map[string]int64
	pods        int
}

func usage(s *schedcore.Snapshot) map[string]nodeUse {
	out := make(map[string]nodeUse, s.NumNodes())
	for _, ni := range s.List() {
		u := nodeUse{alloc: resMap(&ni.Allocatable), used: resMap(&ni.Requested), pods: len(ni.Pods)}
		u.alloc["pods"] = int64(ni.Allocatable.AllowedPodNumber)
		out[ni.Name()] = u
	}
	return out
}

func resMap(r *schedcore.Resource) map[string]int64 {
	m := map[string]int64{"cpu": r.MilliCPU, "memory": r.Memory}
	if r.EphemeralStorage > 0 {
		m["ephemeral-storage"] = r.EphemeralStorage
	}
	for k, v := range r.ScalarResources {
		m[string(k)] = v
	}
	return m
}

func mergeUsage(before, after map[string]nodeUse) []report.NodeUsage {
	out := make([]report.NodeUsage, 0, len(after))
	for name, a := range after {
		b := before[name]
		out = append(out, report.NodeUsage{Node: name, Allocatable: a.alloc, Before: b.used, After: a.used, PodsBefore: b.pods, PodsAfter: a.pods})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Node < out[j].Node })
	return out
}

// gatedBy returns the message and name of the PreEnqueue plugin that holds
// a pod out of activeQ, if one does.
func gatedBy(ctx context.Context, q *queue.PriorityQueue, profiles *engine.Profiles, p *v1.Pod) (string, string) {
	qpi, ok := q.GetPod(p.Name, p.Namespace)
	if !ok || !qpi.Gated() {
		return "", ""
	}
	fw := profiles.ByName[p.Spec.SchedulerName]
	if fw == nil {
		return "", ""
	}
	for _, pl := range fw.PreEnqueuePlugins() {
		if pl.Name() == qpi.GatingPlugin {
			return pl.PreEnqueue(ctx, p).Message(), pl.Name()
		}
	}
	return "", ""
}
