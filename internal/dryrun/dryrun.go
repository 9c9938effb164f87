// Package dryrun is the offline driver of the engine: it loads dumped
// cluster state into an offline cluster (internal/engine.Offline), queues
// the pending pods and runs the real scheduling loop over them, every
// placement committed before the next pod, as a live scheduler's cache
// would, and reports what happened.
package dryrun

import (
	"context"
	"maps"
	"slices"
	"sort"
	"time"

	"github.com/go-logr/logr"
	v1 "k8s.io/api/core/v1"
	schedulingv1beta1 "k8s.io/api/scheduling/v1beta1"
	"k8s.io/apimachinery/pkg/util/sets"
	configv1 "k8s.io/kube-scheduler/config/v1"
	"k8s.io/utils/ptr"

	"github.com/kubectl-sched/kubectl-sched/internal/engine"
	"github.com/kubectl-sched/kubectl-sched/internal/report"
	"github.com/kubectl-sched/kubectl-sched/internal/snapshot"
	"github.com/kubectl-sched/kubectl-sched/schedcore"
	schedruntime "github.com/kubectl-sched/kubectl-sched/schedcore/runtime"
)

// ErrNoNodes is returned for a cluster without nodes.
var ErrNoNodes = engine.ErrNoNodes

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
	// Changes, when set, changes the loaded cluster before anything is
	// scheduled and after the nodes' use "before" is taken (drain cordons
	// or deletes nodes, evicts pods and adds their replacements there).
	// The pods it returns, pending pods it added (Offline.Add queues
	// them), are reported with the cluster's pending pods, which are
	// queued after them.
	Changes func(*engine.Offline) ([]*v1.Pod, error)
	// Progress, when set, is called after every scheduling attempt with
	// the pods placed so far, the pods whose last attempt failed, and the
	// pending pods in all (the CLI draws a progress line from it).
	Progress func(placed, failing, total int)
	// Loaded, when set, is called once, when the engine holds the cluster
	// and the clock of DurationSeconds starts: the benchmark counts CPU
	// time from there, as kube's is counted from its synced cache.
	Loaded func()
	// Ran, when set, is called once, right after the last scheduling
	// attempt and before the report is built, with the scheduler and all
	// its state still in use (the benchmark reads the live heap there).
	Ran func()
	// InPlace: the run may fill in what the cluster's pods lack (UIDs)
	// in place (engine.Options.InPlace); the report is the same.
	InPlace bool
}

func (o Options) engine() engine.Options {
	return engine.Options{Config: o.Config, Registry: o.Registry, Features: o.Features, Logger: o.Logger, Seed: o.Seed, UseSeed: o.UseSeed, NoPreemption: o.NoPreemption, InPlace: o.InPlace}
}

// failure is a pod's last failed attempt.
type failure struct {
	engine.Failure
	msg   string
	after int
	// seq orders failures in time.
	seq int
	// own is the pod's last failure of its own (not a rejection for its
	// group's sake), with its seq; "" if none.
	own    string
	ownSeq int
}

// run is one dry-run's observations.
type run struct {
	rep    *report.DryRun
	failed map[string]*failure
	placed sets.Set[string]
	seq    int
	// c is the offline cluster (set before it runs).
	c *engine.Offline
	// progress and total: Options.Progress and the pending pods.
	progress func(placed, failing, total int)
	total    int
	// pending are the pods to report on, and at their positions by
	// PodKey: a placed pod's entry is replaced by its bound object (the
	// cluster's, which holds the same pod), so that the object the pod
	// was queued as can be freed (one v1.Pod per pending pod, 13 MiB of
	// a 10000-pod run's live heap).
	pending []*v1.Pod
	at      map[string]int
}

// attempted reports progress after an attempt.
func (r *run) attempted() {
	if r.progress != nil {
		r.progress(len(r.placed), len(r.failed), r.total)
	}
}

func (r *run) observer() engine.Observer {
	return engine.Observer{
		Placed: func(pod *v1.Pod, node string, attempts int, res schedruntime.ScheduleResult) {
			pl := report.Placement{Pod: schedcore.PodName(pod), Node: node, Feasible: res.FeasibleNodes, Attempts: attempts, Devices: devices(r.c.Devices(pod))}
			if len(res.Scores) > 0 {
				pl.Score = res.Scores[0].TotalScore
				for _, s := range res.Scores {
					if s.Name != node {
						pl.RunnerUp = &report.NodeScore{Node: s.Name, Score: s.TotalScore}
						break
					}
				}
			}
			r.rep.Placements = append(r.rep.Placements, pl)
			k := schedcore.PodKey(pod)
			r.placed.Insert(k)
			if i, ok := r.at[k]; ok {
				r.pending[i] = pod
			}
			delete(r.failed, k)
			r.attempted()
		},
		Failed: func(pod *v1.Pod, f engine.Failure) {
			r.seq++
			k := schedcore.PodKey(pod)
			nf := &failure{Failure: f, msg: f.Status.Message(), after: len(r.rep.Placements), seq: r.seq}
			// The message is all the report reads: the status would keep
			// the FitError's per-node statuses (thousands) alive to the end.
			nf.Status = nil
			if prev := r.failed[k]; prev != nil {
				nf.own, nf.ownSeq = prev.own, prev.ownSeq
			}
			if !f.ForGroup {
				nf.own, nf.ownSeq = nf.msg, r.seq
			}
			r.failed[k] = nf
			r.attempted()
		},
		Evicted: func(victim *v1.Pod, node string, preemptor *v1.Pod) {
			r.rep.Evictions = append(r.rep.Evictions, report.Eviction{Pod: schedcore.PodName(victim), Node: node, Preemptor: schedcore.PodName(preemptor)})
		},
		// Pod-group preemption: the PodGroup is the preemptor, the
		// victim's node the node (kube's candidate is the whole cluster).
		GroupEvicted: func(victim *v1.Pod, pg *schedulingv1beta1.PodGroup) {
			r.rep.Evictions = append(r.rep.Evictions, report.Eviction{Pod: schedcore.PodName(victim), Node: victim.Spec.NodeName, Preemptor: pg.Namespace + "/" + pg.Name})
		},
		Nominated: func(pod *v1.Pod, node string) {
			r.rep.Nominations = append(r.rep.Nominations, report.Nomination{Pod: schedcore.PodName(pod), Node: node})
		},
	}
}

// Run schedules every pending pod of the cluster and returns the report.
// The cluster's pods are not modified.
func Run(ctx context.Context, cl *snapshot.Cluster, o Options) (*report.DryRun, error) {
	r := &run{
		rep:      &report.DryRun{Placements: []report.Placement{}, Unschedulable: []report.Unschedulable{}, Evictions: []report.Eviction{}},
		failed:   map[string]*failure{},
		placed:   sets.New[string](),
		progress: o.Progress,
	}
	// cl is not used after the loading: with o.InPlace, the pods the
	// engine replaces (bound copies) are then freed.
	nodes := len(cl.Nodes)
	c, pending, err := engine.NewOffline(ctx, cl, o.engine(), r.observer())
	if err != nil {
		return nil, err
	}
	r.c = c
	before := usage(c.Snapshot)
	if o.Loaded != nil {
		o.Loaded()
	}
	start := time.Now()
	queued := pending
	if o.Changes != nil {
		added, err := o.Changes(c)
		if err != nil {
			return nil, err
		}
		pending = append(added, pending...)
	}
	r.total = len(pending)
	// Room for every pending pod's placement: appending one at a time
	// copied the list a dozen times.
	r.rep.Placements = slices.Grow(r.rep.Placements, len(pending))
	if r.placed.Len() == 0 {
		r.placed = make(sets.Set[string], len(pending))
	}
	r.pending, r.at = pending, make(map[string]int, len(pending))
	for i, p := range pending {
		r.at[schedcore.PodKey(p)] = i
	}
	c.Submit(queued...)
	if err := c.Run(ctx); err != nil {
		return nil, err
	}
	elapsed := time.Since(start)
	if o.Ran != nil {
		o.Ran()
	}
	c.Close()

	rep := r.rep
	pending = r.pending
	for _, p := range pending {
		if !r.placed.Has(schedcore.PodKey(p)) {
			rep.Unschedulable = append(rep.Unschedulable, r.unschedulable(ctx, c, p))
		}
	}
	rep.Groups = gangReport(pending, c.Engine, r.placed, r.failed, rep.Unschedulable)
	rep.PodGroups = podGroupReport(c, pending, r.placed)
	c.Cache.UpdateSnapshot(c.Snapshot)
	rep.Nodes = mergeUsage(before, usage(c.Snapshot))
	rep.Summary = report.Summary{
		Scheduled:       len(rep.Placements),
		Unschedulable:   len(rep.Unschedulable),
		Nodes:           nodes,
		Pending:         len(pending),
		DurationSeconds: elapsed.Seconds(),
		Profiles:        c.Profiles.Order,
	}
	if s := elapsed.Seconds(); s > 0 {
		rep.Summary.PodsPerSecond = float64(len(pending)) / s
	}
	return rep, nil
}

// unschedulable reports a pending pod the run did not place: its last
// failure, or why it never reached a scheduling cycle.
func (r *run) unschedulable(ctx context.Context, c *engine.Offline, p *v1.Pod) report.Unschedulable {
	u := report.Unschedulable{Pod: schedcore.PodName(p), Reason: schedruntime.ReasonUnschedulable}
	if f := r.failed[schedcore.PodKey(p)]; f != nil {
		u.Message, u.Reason, u.Plugins, u.After, u.Attempts = f.msg, f.Reason, f.Plugins, f.after, f.Attempts
	} else if len(p.Spec.SchedulingGates) > 0 {
		// Gated pods never reach a scheduling cycle; the API server
		// reports them with this condition.
		u.Reason = v1.PodReasonSchedulingGated
		u.Message = "Scheduling is blocked due to non-empty scheduling gates"
	} else if msg, plugin := c.GatedBy(ctx, p); plugin != "" {
		// Held by another PreEnqueue plugin (a gang waiting for its
		// members): its status is the pod's reason.
		u.Message, u.Plugins = msg, []string{plugin}
	} else {
		u.Message = "waiting in the scheduling queue (never attempted)"
	}
	return u
}

// nodeUse is a node's allocatable and requested resources and its pod
// count at one moment (the maps of the report are made at the end: the
// use before is kept through the whole run).
type nodeUse struct {
	alloc, used schedcore.Resource
	pods        int
}

func usage(s *schedcore.Snapshot) map[string]nodeUse {
	out := make(map[string]nodeUse, s.NumNodes())
	for _, ni := range s.List() {
		out[ni.Name()] = nodeUse{alloc: cloneResource(&ni.Allocatable), used: cloneResource(&ni.Requested), pods: len(ni.Pods)}
	}
	return out
}

// cloneResource copies r (its scalar resources are changed in place as
// pods come and go).
func cloneResource(r *schedcore.Resource) schedcore.Resource {
	c := *r
	if r.ScalarResources != nil {
		c.ScalarResources = maps.Clone(r.ScalarResources)
	}
	return c
}

// allocMap is a node's allocatable resources for the report, with its
// pod capacity.
func allocMap(r *schedcore.Resource) map[string]int64 {
	m := resMap(r)
	m["pods"] = int64(r.AllowedPodNumber)
	return m
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

// mergeUsage pairs each node's use before and after; a node deleted in
// between (Options.Changes) ends with nothing.
func mergeUsage(before, after map[string]nodeUse) []report.NodeUsage {
	out := make([]report.NodeUsage, 0, len(after))
	for name, a := range after {
		u := report.NodeUsage{Node: name, Allocatable: allocMap(&a.alloc), After: resMap(&a.used), PodsAfter: a.pods}
		if b, ok := before[name]; ok {
			u.Before, u.PodsBefore = resMap(&b.used), b.pods
		}
		out = append(out, u)
	}
	for name, b := range before {
		if _, ok := after[name]; !ok {
			out = append(out, report.NodeUsage{Node: name, Allocatable: allocMap(&b.alloc), Before: resMap(&b.used), After: map[string]int64{}, PodsBefore: b.pods})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Node < out[j].Node })
	return out
}

// devices converts a pod's allocated devices for the report.
func devices(ds []engine.PodDevice) []report.AllocatedDevice {
	var out []report.AllocatedDevice
	for _, d := range ds {
		out = append(out, report.AllocatedDevice{
			Claim: d.Claim, Request: d.Request, Driver: d.Driver, Pool: d.Pool, Device: d.Device,
			AdminAccess: ptr.Deref(d.AdminAccess, false), Shared: d.ShareID != nil,
		})
	}
	return out
}
