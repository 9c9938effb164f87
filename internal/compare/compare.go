// Package compare runs several scheduler configurations on the same input
// (a dry-run of a cluster dump, or a replay of a trace), side by side over
// the cores, and tells how their outcomes differ: pods placed and left
// unschedulable, utilisation, imbalance and fragmentation per resource,
// wait times (replays), nodes used, and which pods land differently.
package compare

import (
	"context"
	"math"
	"runtime"
	"sort"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	configv1 "k8s.io/kube-scheduler/config/v1"

	"github.com/kubectl-sched/kubectl-sched/internal/dryrun"
	"github.com/kubectl-sched/kubectl-sched/internal/engine"
	"github.com/kubectl-sched/kubectl-sched/internal/replay"
	"github.com/kubectl-sched/kubectl-sched/internal/report"
	"github.com/kubectl-sched/kubectl-sched/internal/snapshot"
	"github.com/kubectl-sched/kubectl-sched/schedcore"
)

// Config is one configuration to compare.
type Config struct {
	// Name labels its column.
	Name string
	// Path is the file it was read from ("" for kube's defaults).
	Path   string
	Config *configv1.KubeSchedulerConfiguration
}

// Options are what every run shares.
type Options struct {
	Registry schedcore.Registry
	// Features are the feature gates of every run (zero value: defaults).
	Features     schedcore.Features
	Seed         int64
	UseSeed      bool
	NoPreemption bool
	// Until and WaitWindow tune replays (see replay.Options).
	Until      time.Duration
	WaitWindow time.Duration
	// Workers bounds the runs at once (0: one per core).
	Workers int
	// Progress, when set, is called as runs finish.
	Progress func(done, total int)
}

// DryRuns runs a dry-run of the cluster for each configuration.
func DryRuns(ctx context.Context, cl *snapshot.Cluster, cfgs []Config, o Options) (*report.Compare, error) {
	shapes, names := clusterShapes(cl, o.Features)
	return runAll(ctx, cfgs, o, func(ctx context.Context, cfg *configv1.KubeSchedulerConfiguration, run *report.CompareRun) error {
		rep, err := dryrun.Run(ctx, cl, dryrun.Options{Config: cfg, Registry: o.Registry, Features: o.Features, Seed: o.Seed, UseSeed: o.UseSeed, NoPreemption: o.NoPreemption})
		if err != nil {
			return err
		}
		run.Result, run.Placements = rep, map[string]string{}
		for _, p := range rep.Placements {
			run.Placements[p.Pod] = p.Node
			run.Pods = append(run.Pods, p.Pod)
		}
		for _, u := range rep.Unschedulable {
			run.Pods = append(run.Pods, u.Pod)
		}
		run.Stats = dryRunStats(rep, shapes, names)
		if len(rep.PodGroups) > 0 {
			g := &report.CompareGroupStats{Groups: len(rep.PodGroups)}
			for _, pg := range rep.PodGroups {
				if c := pg.Condition; c != nil && c.Status == string(metav1.ConditionTrue) {
					g.Scheduled++
				}
				if len(pg.Unbound) > 0 {
					g.Pending++
				}
			}
			run.Stats.PodGroups = g
		}
		return nil
	})
}

// Replays replays the trace for each configuration.
func Replays(ctx context.Context, tr *replay.Trace, cfgs []Config, o Options) (*report.Compare, error) {
	return runAll(ctx, cfgs, o, func(ctx context.Context, cfg *configv1.KubeSchedulerConfiguration, run *report.CompareRun) error {
		rr, err := replay.Run(ctx, tr, replay.Options{Options: engine.Options{Config: cfg, Registry: o.Registry, Features: o.Features, Seed: o.Seed, UseSeed: o.UseSeed, NoPreemption: o.NoPreemption}, Until: o.Until, WaitWindow: o.WaitWindow})
		if err != nil {
			return err
		}
		run.Result, run.Placements = rr, rr.Placements
		for _, p := range tr.Pods {
			if p.Pod.Spec.NodeName == "" {
				run.Pods = append(run.Pods, schedcore.PodName(p.Pod))
			}
		}
		s := rr.Summary
		p50, p99 := s.WaitP50Seconds, s.WaitP99Seconds
		run.Stats = report.CompareStats{Placed: s.Placed, Unschedulable: s.Pending, NodesUsed: s.NodesUsed, WaitP50Seconds: &p50, WaitP99Seconds: &p99}
		for _, r := range s.Resources {
			run.Stats.Resources = append(run.Stats.Resources, report.CompareResourceStats{Name: r.Name, Utilisation: r.MeanAllocation, Imbalance: r.Imbalance, Fragmentation: r.MeanFragmentation})
		}
		if len(rr.PodGroups) > 0 {
			run.Stats.PodGroups = &report.CompareGroupStats{Groups: s.PodGroups, Scheduled: s.PodGroupsScheduled, Pending: s.PodGroupsPending}
		}
		return nil
	})
}

// runAll runs one configuration per call of one, side by side, and diffs
// the runs; an error names the configuration.
func runAll(ctx context.Context, cfgs []Config, o Options, one func(context.Context, *configv1.KubeSchedulerConfiguration, *report.CompareRun) error) (*report.Compare, error) {
	res := &report.Compare{Runs: make([]report.CompareRun, len(cfgs))}
	err := replay.Parallel(ctx, len(cfgs), o.Workers, o.Progress, func(ctx context.Context, i int) error {
		run := report.CompareRun{Name: cfgs[i].Name, Config: cfgs[i].Path}
		if err := one(ctx, serial(cfgs[i].Config, len(cfgs), o.Workers), &run); err != nil {
			return &replay.JobError{Name: label(cfgs[i]), Err: err}
		}
		res.Runs[i] = run
		return nil
	})
	if err != nil {
		return nil, err
	}
	res.Diff = diff(res.Runs)
	return res, nil
}

func label(c Config) string {
	if c.Path != "" {
		return c.Path
	}
	return c.Name
}

// serial gives a run one goroutine per cycle when the runs alone fill the
// cores; decisions do not depend on it.
func serial(cfg *configv1.KubeSchedulerConfiguration, runs, workers int) *configv1.KubeSchedulerConfiguration {
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	if runs < workers {
		return cfg
	}
	c := *cfg
	one := int32(1)
	c.Parallelism = &one
	return &c
}

// clusterShapes are the typical shapes of the cluster's pods (bound and
// pending, not finished), over cpu, memory and the scalar resources of
// nodes and pods.
func clusterShapes(cl *snapshot.Cluster, f schedcore.Features) (*replay.Shapes, []string) {
	if f == (schedcore.Features{}) {
		f = schedcore.DefaultFeatures
	}
	scalars := map[string]bool{}
	var reqs []schedcore.Resource
	for _, p := range cl.Pods {
		if p.Status.Phase == v1.PodSucceeded || p.Status.Phase == v1.PodFailed {
			continue
		}
		r := schedcore.ComputePodResource(p, f).Resource
		for k := range r.ScalarResources {
			scalars[string(k)] = true
		}
		reqs = append(reqs, r)
	}
	for _, n := range cl.Nodes {
		for k := range schedcore.NewResource(n.Status.Allocatable).ScalarResources {
			scalars[string(k)] = true
		}
	}
	names := []string{string(v1.ResourceCPU), string(v1.ResourceMemory)}
	var extra []string
	for k := range scalars {
		extra = append(extra, k)
	}
	sort.Strings(extra)
	names = append(names, extra...)
	vecs := make([][]int64, len(reqs))
	for i := range reqs {
		v := make([]int64, len(names))
		v[0], v[1] = reqs[i].MilliCPU, reqs[i].Memory
		for k, name := range names[2:] {
			v[k+2] = reqs[i].ScalarResources[v1.ResourceName(name)]
		}
		vecs[i] = v
	}
	return replay.NewShapes(vecs), names
}

// dryRunStats sums up a dry-run's final state.
func dryRunStats(rep *report.DryRun, shapes *replay.Shapes, names []string) report.CompareStats {
	st := report.CompareStats{Placed: len(rep.Placements), Unschedulable: len(rep.Unschedulable)}
	nr := len(names)
	alloc, used, frag := make([]float64, nr), make([]float64, nr), make([]float64, nr)
	free := make([]int64, nr)
	unusable := make([]int, nr)
	out := make([]float64, nr)
	ratios := make([][]float64, nr)
	for _, n := range rep.Nodes {
		if n.PodsAfter > 0 {
			st.NodesUsed++
		}
		for k, name := range names {
			a, u := n.Allocatable[name], n.After[name]
			alloc[k] += float64(a)
			used[k] += float64(u)
			free[k] = a - u
			if a > 0 {
				ratios[k] = append(ratios[k], float64(u)/float64(a))
			}
		}
		slot := true
		if maxPods, ok := n.Allocatable["pods"]; ok {
			slot = int64(n.PodsAfter) < maxPods
		}
		shapes.Fragmentation(free, slot, unusable, out)
		for k := range frag {
			frag[k] += out[k]
		}
	}
	for k, name := range names {
		rs := report.CompareResourceStats{Name: name, Imbalance: stddev(ratios[k])}
		if alloc[k] > 0 {
			rs.Utilisation, rs.Fragmentation = used[k]/alloc[k], frag[k]/alloc[k]
		}
		st.Resources = append(st.Resources, rs)
	}
	return st
}

func stddev(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	var s, s2 float64
	for _, x := range xs {
		s += x
		s2 += x * x
	}
	m := s / float64(len(xs))
	return math.Sqrt(math.Max(s2/float64(len(xs))-m*m, 0))
}

// diff compares every run with the first, pod by pod in the baseline's
// order (placed pods in placement order, then the unplaced).
func diff(runs []report.CompareRun) report.CompareDiff {
	d := report.CompareDiff{Runs: []report.CompareRunDiff{}}
	if len(runs) == 0 {
		return d
	}
	base := runs[0]
	d.Baseline = base.Name
	for _, r := range runs[1:] {
		rd := report.CompareRunDiff{Run: r.Name, Moved: []report.CompareMove{}, BecameSchedulable: []report.CompareMove{}, BecameUnschedulable: []report.CompareMove{}}
		for _, pod := range base.Pods {
			from, to := base.Placements[pod], r.Placements[pod]
			switch {
			case from == to:
			case from == "":
				rd.BecameSchedulable = append(rd.BecameSchedulable, report.CompareMove{Pod: pod, To: to})
			case to == "":
				rd.BecameUnschedulable = append(rd.BecameUnschedulable, report.CompareMove{Pod: pod, From: from})
			default:
				rd.Moved = append(rd.Moved, report.CompareMove{Pod: pod, From: from, To: to})
			}
		}
		d.Runs = append(d.Runs, rd)
	}
	return d
}
