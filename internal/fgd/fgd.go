// Package fgd reproduces the FGD paper's experiment ("Beware of
// Fragmentation", Weng et al., USENIX ATC'23) on the engine: the openb
// trace's GPU nodes, the artifact's workload for a seed (TunedWorkload),
// one scheduling policy per run through the dry-run driver, and the
// artifact's metrics read from the run (Metrics). docs/fgd.md describes
// the method and where it differs from the artifact's.
package fgd

import (
	"context"
	"fmt"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	configv1 "k8s.io/kube-scheduler/config/v1"
	"sigs.k8s.io/yaml"

	"github.com/kubectl-sched/kubectl-sched/internal/dryrun"
	"github.com/kubectl-sched/kubectl-sched/internal/engine"
	"github.com/kubectl-sched/kubectl-sched/internal/gen/openb"
	"github.com/kubectl-sched/kubectl-sched/internal/snapshot"
	"github.com/kubectl-sched/kubectl-sched/plugins"
	"github.com/kubectl-sched/kubectl-sched/plugins/gpushare"
	"github.com/kubectl-sched/kubectl-sched/plugins/names"
	"github.com/kubectl-sched/kubectl-sched/schedcore"
)

// Policy is one row of the table: a name and the scheduler configuration
// that runs it.
type Policy struct {
	// Name is the row's name ("FGD", "kube-default/GpuShare").
	Name string
	// Config is the KubeSchedulerConfiguration YAML.
	Config string
	// UniformTies breaks ties between equal best scores uniformly at
	// random (seeded), as kube-scheduler does; otherwise the lowest node
	// name wins, as in the artifact's fork of kube-scheduler.
	UniformTies bool
}

// The paper's rows, in its order, with the score plugin each enables and
// the GPU selection GpuShare uses (the artifact's run scripts: Random
// picks GPUs at random, FGD by its own score, the others by best fit).
var paperPolicies = []struct{ name, plugin, selection string }{
	{"Random", names.RandomScore, gpushare.SelectRandom},
	{"DotProd", names.DotProductScore, gpushare.SelectBest},
	{"GpuClustering", names.GpuClusteringScore, gpushare.SelectBest},
	{"GpuPacking", names.GpuPackingScore, gpushare.SelectBest},
	{"BestFit", names.BestFitScore, gpushare.SelectBest},
	{"FGD", names.FGDScore, names.FGDScore},
}

// KubeDefaultName is the row of kube-scheduler's default profile over the
// GPU-share feasibility model.
const KubeDefaultName = "kube-default/GpuShare"

// configHead starts every row's configuration, after a comment: kube's
// default profile with GpuShare added at every extension point it
// implements, every node scored.
func configHead(comment string) string {
	return `apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
` + comment + `percentageOfNodesToScore: 100
profiles:
- schedulerName: default-scheduler
  plugins:
    multiPoint:
      enabled:
      - name: GpuShare
`
}

// Policies returns the six paper policies and the kube-default row, their
// configurations built for the typical pods (FGD's args).
func Policies(typical []gpushare.TypicalPod) ([]Policy, error) {
	tp, err := yaml.Marshal(map[string]any{"typicalPods": typical})
	if err != nil {
		return nil, err
	}
	var out []Policy
	for _, p := range paperPolicies {
		var b strings.Builder
		fmt.Fprintf(&b, configHead(`# The FGD artifact's profile: the default filters plus GpuShare, one score
# plugin at weight 1000, every node scored.
`)+`    preScore:
      disabled:
      - name: "*"
%s    score:
      disabled:
      - name: "*"
      enabled:
      - name: %s
        weight: 1000
  pluginConfig:
  - name: GpuShare
    args:
      gpuSelection: %s
`, preScoreOf(p.plugin), p.plugin, p.selection)
		if p.plugin == names.FGDScore {
			b.WriteString("  - name: FGDScore\n    args:\n")
			for _, l := range strings.Split(strings.TrimRight(string(tp), "\n"), "\n") {
				b.WriteString("      " + l + "\n")
			}
		}
		out = append(out, Policy{Name: p.name, Config: b.String()})
	}
	out = append(out, Policy{Name: KubeDefaultName, UniformTies: true, Config: configHead(`# kube-scheduler v1.37's default profile (filters and scores) plus the
# GPU-share feasibility model: GpuShare filters and picks GPUs by best fit.
`)})
	return out, nil
}

func preScoreOf(plugin string) string {
	if plugin != names.RandomScore && plugin != names.FGDScore {
		return ""
	}
	return "      enabled:\n      - name: " + plugin + "\n"
}

// LoadConfig decodes, defaults and validates a policy's configuration.
func LoadConfig(text string) (*configv1.KubeSchedulerConfiguration, error) {
	cfg, err := schedcore.DecodeConfig([]byte(text))
	if err != nil {
		return nil, err
	}
	schedcore.SetConfigDefaults(cfg, plugins.DefaultPlugins)
	if err := schedcore.ValidateConfig(cfg); err != nil {
		return nil, err
	}
	return cfg, nil
}

// Trace is the experiment's input: the GPU nodes and the original pods
// (every row, failed ones included, in the GPU-share mapping).
type Trace struct {
	Nodes []*v1.Node
	Pods  []*v1.Pod
	// CapacityMilli is the GPU thousandths of the nodes (6212000).
	CapacityMilli int64
	// Typical are the pods' shapes with their counts, FGD's args.
	Typical []gpushare.TypicalPod
}

// LoadTrace reads the openb CSVs as the artifact does: only the nodes with
// GPUs, every pod row.
func LoadTrace(nodesCSV, podsCSV string) (*Trace, error) {
	nodes, pods, err := openb.LoadFiles(nodesCSV, podsCSV, openb.Options{GPU: openb.GPUShare, KeepFailed: true})
	if err != nil {
		return nil, err
	}
	t := &Trace{Pods: pods}
	for _, n := range nodes {
		q := n.Status.Allocatable[openb.GPUResource]
		if q.Value() > 0 {
			t.Nodes = append(t.Nodes, n)
			t.CapacityMilli += q.Value() * gpushare.MilliPerGPU
		}
	}
	t.Typical = gpushare.TypicalPodsOf(pods)
	return t, nil
}

// Run is one policy on one seed.
type Run struct {
	Policy string
	Seed   int64
	// Pods is the number of pods that arrived; Placed of them were placed.
	Pods, Placed int
	// Metrics are the artifact's metrics of the run.
	Metrics Metrics
	// Elapsed is the wall time of the dry-run.
	Elapsed time.Duration
}

// RunOne schedules the seed's workload with the policy and measures it.
// parallelism overrides the configuration's (0 keeps it).
func RunOne(ctx context.Context, t *Trace, p Policy, seed int64, ratio float64, parallelism int32) (*Run, error) {
	cfg, err := LoadConfig(p.Config)
	if err != nil {
		return nil, fmt.Errorf("policy %s: %w", p.Name, err)
	}
	if parallelism > 0 {
		cfg.Parallelism = &parallelism
	}
	w := openb.TunedWorkload(t.Nodes, t.Pods, t.CapacityMilli, ratio, seed, openb.Epoch)
	pods := w.Pods
	for _, p := range pods {
		// What the snapshot loader defaults, and a UID to find the pod's
		// GPUs by.
		p.UID, p.Spec.SchedulerName = podUID(p), v1.DefaultSchedulerName
	}
	var share *gpushare.GpuShare
	reg, err := engine.Registry(nil)
	if err != nil {
		return nil, err
	}
	// Keep the GpuShare instance: it knows which GPUs each pod took.
	newShare := reg[names.GpuShare].Factory
	spec := reg[names.GpuShare]
	spec.Factory = func(ctx context.Context, args runtime.Object, h *schedcore.Handle) (schedcore.Plugin, error) {
		pl, err := newShare(ctx, args, h)
		if err == nil {
			share = pl.(*gpushare.GpuShare)
		}
		return pl, err
	}
	reg[names.GpuShare] = spec
	cl := &snapshot.Cluster{Nodes: w.Nodes, Pods: pods, Namespaces: []*v1.Namespace{openb.NamespaceObject(openb.Options{})}}
	start := time.Now()
	rep, err := dryrun.Run(ctx, cl, dryrun.Options{Config: cfg, Registry: reg, Seed: seed, UseSeed: p.UniformTies, NoPreemption: true})
	if err != nil {
		return nil, fmt.Errorf("policy %s, seed %d: %w", p.Name, seed, err)
	}
	elapsed := time.Since(start)
	if share == nil {
		return nil, fmt.Errorf("policy %s: GpuShare is not enabled", p.Name)
	}
	// With no departures a pod that did not fit on arrival never fits
	// later (the free capacity only shrinks): the placements come in
	// arrival order, and each pod's fate is decided on arrival, as in the
	// artifact, which deletes a pod that fails.
	arrival := make(map[string]int, len(pods))
	for i, p := range pods {
		arrival[schedcore.PodName(p)] = i
	}
	placed := make(map[string]string, len(rep.Placements))
	last := -1
	for _, pl := range rep.Placements {
		if i := arrival[pl.Pod]; i < last {
			return nil, fmt.Errorf("policy %s, seed %d: pod %s was placed after a later arrival", p.Name, seed, pl.Pod)
		} else {
			last = i
		}
		placed[pl.Pod] = pl.Node
	}
	model, err := fragModel(t.Typical)
	if err != nil {
		return nil, err
	}
	m, err := measure(w.Nodes, t.CapacityMilli, pods, placed, share.Assignment, model)
	if err != nil {
		return nil, fmt.Errorf("policy %s, seed %d: %w", p.Name, seed, err)
	}
	return &Run{Policy: p.Name, Seed: seed, Pods: len(pods), Placed: len(rep.Placements), Metrics: m, Elapsed: elapsed}, nil
}

// fragModel is FGD's model of the typical pods, which the fragmentation
// metric uses for every policy (as the artifact does).
func fragModel(typical []gpushare.TypicalPod) (*gpushare.FragModel, error) {
	pl, err := gpushare.NewFGD(context.Background(), &gpushare.FGDScoreArgs{TypicalPods: typical}, nil)
	if err != nil {
		return nil, err
	}
	return pl.(*gpushare.FGDScore).Model(), nil
}
