// Package fgd reproduces the FGD paper's experiment ("Beware of
// Fragmentation", Weng et al., USENIX ATC'23) on the engine: the openb
// trace's GPU nodes, the artifact's workload for a seed (TunedWorkload),
// one scheduling policy per run replayed by internal/replay (Sweep runs
// them side by side over the cores), and the artifact's metrics read from
// the replay's series (Metrics), whose GPU columns are probes. docs/fgd.md
// describes the method and where it differs from the artifact's.
package fgd

import (
	"fmt"
	"strings"

	v1 "k8s.io/api/core/v1"
	configv1 "k8s.io/kube-scheduler/config/v1"
	"sigs.k8s.io/yaml"

	"github.com/kubectl-sched/kubectl-sched/internal/gen/openb"
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
	// DRA runs the row on the DRA mapping (internal/gen/openb, dra.go):
	// pods claim GPUs from ResourceClaimTemplates, DynamicResources
	// allocates them, no GpuShare.
	DRA bool
	// Features are the feature gates (zero value: kube's defaults).
	Features schedcore.Features
	// Registry holds plugins besides the in-tree ones (nil: none), as a
	// custom binary's.
	Registry schedcore.Registry
}

// PolicyByName returns the row named name ("FGD", "kube-default/GpuShare",
// ...) with its configuration built for the trace's typical pods.
func PolicyByName(t *Trace, name string) (Policy, error) {
	all, err := Policies(t.Typical)
	if err != nil {
		return Policy{}, err
	}
	names := make([]string, len(all))
	for i, p := range all {
		if p.Name == name {
			return p, nil
		}
		names[i] = p.Name
	}
	return Policy{}, fmt.Errorf("unknown FGD policy %q (known: %s)", name, strings.Join(names, ", "))
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

// The kube rows.
const (
	// KubeDefaultName is kube-scheduler's default profile over the
	// GPU-share feasibility model.
	KubeDefaultName = "kube-default/GpuShare"
	// KubeDRAName is kube-scheduler's default profile, unchanged, with the
	// GPUs as DRA devices of consumable capacity.
	KubeDRAName = "kube-default/DRA"
)

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

// Policies returns the six paper policies and the two kube rows, their
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
	out = append(out, Policy{Name: KubeDRAName, UniformTies: true, DRA: true, Config: `apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
# kube-scheduler v1.37's default profile, unchanged: DynamicResources
# allocates the GPUs (DRA devices with consumable capacity), every node
# scored.
percentageOfNodesToScore: 100
`})
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
	return LoadConfigWithFeatures(text, schedcore.DefaultFeatures)
}

// LoadConfigWithFeatures is LoadConfig with the default profile of the
// feature gates f (plugins.DefaultPluginsFor), as the engine's
// LoadConfigWithFeatures.
func LoadConfigWithFeatures(text string, f schedcore.Features) (*configv1.KubeSchedulerConfiguration, error) {
	cfg, err := schedcore.DecodeConfig([]byte(text))
	if err != nil {
		return nil, err
	}
	schedcore.SetConfigDefaults(cfg, func() *configv1.Plugins { return plugins.DefaultPluginsFor(f) })
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
