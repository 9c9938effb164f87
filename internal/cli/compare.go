package cli

import (
	"bytes"
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubectl-sched/kubectl-sched/internal/compare"
	"github.com/kubectl-sched/kubectl-sched/internal/dryrun"
	"github.com/kubectl-sched/kubectl-sched/internal/engine"
	"github.com/kubectl-sched/kubectl-sched/internal/report"
	"github.com/kubectl-sched/kubectl-sched/internal/snapshot"
)

// defaultConfig is the --config value that stands for kube's defaults.
const defaultConfig = "default"

// CompareOptions are the settings of `kubectl sched compare`.
type CompareOptions struct {
	genericiooptions.IOStreams
	Settings Settings

	OpenbNodes   string
	OpenbPods    string
	Configs      []string
	Replay       bool
	Output       string
	Until        time.Duration
	NoPreemption bool
	Workers      int

	engine engineFlags
}

// NewCmdCompare builds `kubectl sched compare`.
func NewCmdCompare(streams genericiooptions.IOStreams, settings Settings) *cobra.Command {
	o := &CompareOptions{IOStreams: streams, Settings: settings, Output: "table"}
	o.engine = engineFlags{IOStreams: streams, settings: settings, dump: dumpFiles, noConfig: true, readsFiles: true,
		filesUsage: "Cluster dump (or, with --replay, trace) file or directory (repeatable; '-' for stdin)",
		seedUsage:  "Break ties between equal best scores pseudo-randomly with this seed (every run the same)"}
	cmd := &cobra.Command{
		Use:   "compare -f CLUSTER.yaml --config A.yaml --config B.yaml [--config C.yaml ...] [--replay]",
		Short: "Run scheduler configurations side by side on the same input and show how they differ",
		Long: strings.TrimSpace(`
Run each KubeSchedulerConfiguration on the same input, a dry-run of a
cluster dump or, with --replay, a replay of a trace over time, and put the
outcomes side by side: pods placed and unschedulable, utilisation,
imbalance (standard deviation of the nodes' utilisation) and fragmentation
per resource, wait times (replays) and the nodes used. Then, against the
first configuration, the pods that land on other nodes and those that
became schedulable or unschedulable.

The runs are spread over the cores; each is deterministic, and each run's
result is exactly what 'kubectl sched dryrun --config' (or 'replay') gives
for that configuration. '--config default' stands for kube-scheduler's
defaults, as dryrun takes them without --config (kubectl-sched, the
profile of run, too); a single --config is compared with the defaults.`),
		Example: `  # Which NodeResourcesFit strategy suits this cluster?
  kubectl sched compare -f cluster.yaml --config least-allocated.yaml --config most-allocated.yaml

  # Your configuration against kube-scheduler's defaults, over a day of arrivals and departures
  kubectl sched compare -f cluster.yaml -f trace.yaml --config mine.yaml --replay --until 24h

  # Machine-readable, with every run's full dry-run document (schema: docs/compare.md)
  kubectl sched compare -f cluster.yaml --config a.yaml --config b.yaml -o json`,
		Args:              cobra.NoArgs,
		ValidArgsFunction: cobra.NoFileCompletions,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := o.Validate(); err != nil {
				return err
			}
			return o.Run(cmd.Context())
		},
	}
	f := cmd.Flags()
	o.engine.AddFlags(cmd)
	f.StringVar(&o.OpenbNodes, "openb-nodes", "", "With --replay: Alibaba openb node list CSV")
	f.StringVar(&o.OpenbPods, "openb-pods", "", "With --replay: Alibaba openb pod list CSV")
	f.StringArrayVar(&o.Configs, "config", nil, "KubeSchedulerConfiguration file to compare (repeatable; 'default' for kube's defaults)")
	f.BoolVar(&o.Replay, "replay", false, "Replay the input over time instead of dry-running it")
	f.StringVarP(&o.Output, "output", "o", o.Output, "Output format: table, json or yaml")
	f.DurationVar(&o.Until, "until", 0, "With --replay: stop this long after the start")
	f.BoolVar(&o.NoPreemption, "no-preemption", false, "Turn PostFilter (preemption) off")
	f.IntVar(&o.Workers, "workers", 0, "Runs at once (default: one per core)")
	_ = cmd.RegisterFlagCompletionFunc("output", fixedCompletion(report.CompareFormats...))
	_ = cmd.MarkFlagFilename("openb-nodes", "csv")
	_ = cmd.MarkFlagFilename("openb-pods", "csv")
	markConfigFile(cmd)
	return cmd
}

// Validate checks flags before anything is read.
func (o *CompareOptions) Validate() error {
	if o.Replay {
		if err := validateTraceFlags(o.engine.Snapshots, o.OpenbNodes, o.OpenbPods); err != nil {
			return err
		}
	} else {
		if o.OpenbNodes != "" || o.OpenbPods != "" || o.Until != 0 {
			return UsageErrorf("--openb-nodes, --openb-pods and --until need --replay")
		}
		if len(o.engine.Snapshots) == 0 {
			return UsageErrorf("-f/--filename is required: a cluster dump (kubectl sched snapshot -A > cluster.yaml)")
		}
	}
	if len(o.Configs) == 0 {
		return UsageErrorf("--config is required: the configurations to compare (at least one; 'default' for kube's defaults)")
	}
	if err := checkFormat(o.Output, report.CompareFormats, redirectHint); err != nil {
		return err
	}
	if o.Until < 0 {
		return UsageErrorf("--until %s: must not be negative", o.Until)
	}
	if o.Workers < 0 {
		return UsageErrorf("--workers %d: must not be negative (0 is one per core)", o.Workers)
	}
	return nil
}

// configs loads every configuration; a single one is compared with the
// defaults.
func (o *CompareOptions) configs() ([]compare.Config, error) {
	paths := o.Configs
	if len(paths) == 1 && paths[0] != defaultConfig {
		paths = []string{defaultConfig, paths[0]}
	}
	names := configNames(paths)
	out := make([]compare.Config, 0, len(paths))
	for i, p := range paths {
		file := p
		if p == defaultConfig {
			file = ""
		}
		// kube's defaults as dryrun and replay take them without
		// --config: run's profile too.
		cfg, err := loadConfig(file)
		if err != nil {
			return nil, err
		}
		out = append(out, compare.Config{Name: names[i], Path: file, Config: cfg})
	}
	return out, nil
}

// configNames names each configuration by its file's base name, without the
// extension, or by its path when two base names clash.
func configNames(paths []string) []string {
	out := make([]string, len(paths))
	seen := map[string]int{}
	for i, p := range paths {
		out[i] = strings.TrimSuffix(filepath.Base(p), filepath.Ext(p))
		seen[out[i]]++
	}
	for i, p := range paths {
		if seen[out[i]] > 1 {
			out[i] = p
		}
	}
	return out
}

// Run loads the input, runs every configuration and prints.
func (o *CompareOptions) Run(ctx context.Context) error {
	if ctx == nil {
		ctx = context.Background()
	}
	in, err := o.engine.load(ctx)
	if err != nil {
		return err
	}
	cfgs, err := o.configs()
	if err != nil {
		return err
	}
	co := compare.Options{Registry: in.Registry, Features: in.Features, Seed: in.Seed, UseSeed: in.UseSeed, NoPreemption: o.NoPreemption, Until: o.Until, Workers: o.Workers}
	progress := newProgress(o.ErrOut, "comparing")
	co.Progress = progress.runs
	var res *report.Compare
	var warnings []string
	var objects *snapshot.Cluster
	if o.Replay {
		tr, w, err := loadTrace(o.engine.Snapshots, o.OpenbNodes, o.OpenbPods, o.In)
		if err != nil {
			return err
		}
		warnings, objects = w, tr.Objects
		res, err = compare.Replays(ctx, tr, cfgs, co)
		progress.done()
		if err != nil {
			return o.engine.runError(err)
		}
	} else {
		// Read as dryrun reads a dump, so that one run equals dryrun's.
		cl, err := loadDump(o.engine.Snapshots, o.In, o.ErrOut, false)
		if err != nil {
			return err
		}
		if len(cl.Nodes) == 0 {
			return UsageErrorf("%s: %v", o.engine.where(), dryrun.ErrNoNodes)
		}
		warnings, objects = cl.Warnings, cl
		res, err = compare.DryRuns(ctx, cl, cfgs, co)
		progress.done()
		if err != nil {
			return o.engine.runError(err)
		}
	}
	var buf bytes.Buffer
	if err := report.WriteCompare(&buf, res, o.Output); err != nil {
		return err
	}
	for _, w := range warnings {
		fmt.Fprintln(o.ErrOut, w)
	}
	for _, w := range unserved(objects, cfgs) {
		fmt.Fprintln(o.ErrOut, w)
	}
	_, err = o.Out.Write(buf.Bytes())
	return err
}

// unserved is engine.UnservedWarnings for every configuration, each line
// once, naming the configuration when they differ: the pending pods a run
// skips, as dryrun says.
func unserved(cl *snapshot.Cluster, cfgs []compare.Config) []string {
	var out []string
	seen := map[string]bool{}
	for _, c := range cfgs {
		for _, w := range engine.UnservedWarnings(cl, c.Config) {
			if len(cfgs) > 1 {
				w = strings.Replace(w, "warning: ", "warning: "+c.Name+": ", 1)
			}
			if !seen[w] {
				seen[w] = true
				out = append(out, w)
			}
		}
	}
	return out
}
