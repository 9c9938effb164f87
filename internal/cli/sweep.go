package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubectl-sched/kubectl-sched/internal/engine"
	"github.com/kubectl-sched/kubectl-sched/internal/sweep"
)

// SweepOptions are the settings of `kubectl sched sweep`.
type SweepOptions struct {
	genericiooptions.IOStreams
	Settings Settings

	Filename string
	Results  string
	Workers  int
	Resume   bool
	Collect  bool
	Cells    []int
	Output   string
	HTML     string

	// The cluster mode (sweep_cluster.go).
	Cluster clusterSweep

	// cellDone, when set, is called after each cell's result is written
	// (tests stop a sweep halfway with it).
	cellDone func(sweep.Cell)
}

// NewCmdSweep builds `kubectl sched sweep`.
func NewCmdSweep(streams genericiooptions.IOStreams, settings Settings) *cobra.Command {
	o := &SweepOptions{IOStreams: streams, Settings: settings, Output: "table"}
	o.Cluster.init(settings)
	cmd := &cobra.Command{
		Use:   "sweep -f STUDY.yaml",
		Short: "Run a study: every combination of traces, configurations, feature gates and seeds",
		Long: strings.TrimSpace(`
Run a study: a file that names its axes (traces, scheduler
configurations, feature gates, seeds; for capacity, workloads) and the
verb every combination of them, a cell, runs: replay, dryrun or capacity,
each as the command of that name runs it. The cells run side by side
(--workers, one per core by default); each cell's result is written to
its own file in the results directory (STUDY.results beside the study
file, or --results) as soon as it ends, atomically.

An interrupted sweep goes on where it stopped with --resume: the cells
whose result is there, recorded for the same study and inputs, are kept
and the others run. A result recorded for another definition of its cell
(the study or one of its files changed since) is never reused nor
overwritten: the sweep stops before running anything and names it.

Every input of every cell is loaded and checked before the first cell
runs: bad input is one line naming the study's field, exit status 2.
The merged results are one row per cell (per cell and spec for
capacity; -o table or csv) or one JSON document, the same bytes whatever
the number of workers (schema: docs/sweep.md); for replays, --html also
writes a page with every cell's curves overlaid. --collect only merges
the results already there.

On a cluster (--on-cluster --image IMAGE -n NS), the study and its inputs
go in ConfigMaps and an Indexed Job runs one pod per cell (or per
--cells-per-pod), each running this command with --cell
$(JOB_COMPLETION_INDEX) and putting its cell's result in a ConfigMap; the
sweep waits for them and prints the merged results, the same bytes as a
local run. --on-cluster --collect merges them later; --dry-run=client
-o yaml prints the objects without creating anything.`),
		Example: `  # Run the shipped study: two configurations by two seeds on the example trace
  kubectl sched sweep -f examples/study.yaml

  # Dry-run a dump with two configurations and two seeds; count a workload with and without more nodes
  kubectl sched sweep -f examples/study-dryrun.yaml
  kubectl sched sweep -f examples/study-capacity.yaml

  # Go on after an interruption, two cells at a time, results in a directory of your own
  kubectl sched sweep -f study.yaml --resume --workers 2 --results /data/study.results

  # With every cell's allocation and fragmentation curves overlaid in one page (record: [summary, series])
  kubectl sched sweep -f study.yaml --html study.html

  # Run cells 0 and 3 only (a share of the study: another machine runs the others in the same directory)
  kubectl sched sweep -f study.yaml --cell 0,3 --results /shared/study.results

  # Merge the results already there, one CSV row per cell
  kubectl sched sweep -f study.yaml --collect -o csv > study.csv

  # Review, then run, the study as an Indexed Job of 8 pods at once in namespace sweeps
  kubectl sched sweep -f study.yaml --on-cluster --image registry.example.com/kubectl-sched:v0.1.0 -n sweeps --dry-run=client -o yaml
  kubectl sched sweep -f study.yaml --on-cluster --image registry.example.com/kubectl-sched:v0.1.0 -n sweeps --parallelism 8

  # Merge what the Job's pods wrote so far (or once it is done)
  kubectl sched sweep -f study.yaml --on-cluster --collect -n sweeps`,
		Args:              cobra.NoArgs,
		ValidArgsFunction: cobra.NoFileCompletions,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := o.Complete(); err != nil {
				return err
			}
			if err := o.Validate(); err != nil {
				return err
			}
			// Ctrl-C stops the cells running and keeps those done: the
			// error says where they are and that --resume goes on.
			ctx, stop := notifyContext(cmd.Context())
			defer stop()
			return o.Run(ctx)
		},
	}
	f := cmd.Flags()
	f.StringVarP(&o.Filename, "filename", "f", "", "Study file (docs/sweep.md)")
	f.StringVar(&o.Results, "results", "", "Directory of the cells' results (default: STUDY.results beside the study file)")
	f.IntVar(&o.Workers, "workers", 0, "Cells at once (default: one per core)")
	f.BoolVar(&o.Resume, "resume", false, "Keep the cells whose result is there and run the others (with --on-cluster: the result ConfigMaps of an earlier Job of the same name)")
	f.BoolVar(&o.Collect, "collect", false, "Run nothing: merge the results already there")
	f.IntSliceVar(&o.Cells, "cell", nil, "Run only these cells (by index, from 0, in the study's order) and print nothing: one machine's share, or an Indexed Job pod's --cell $JOB_COMPLETION_INDEX")
	f.StringVarP(&o.Output, "output", "o", o.Output, "Output format: table, json or csv (with --dry-run: yaml or json, the objects)")
	f.StringVar(&o.HTML, "html", "", "Also write a self-contained HTML report with every cell's curves overlaid (the study must record series)")
	o.Cluster.addFlags(cmd)
	_ = cmd.RegisterFlagCompletionFunc("output", fixedCompletion(append(sweep.Formats, "yaml")...))
	_ = cmd.MarkFlagFilename("filename", "yaml", "yml")
	_ = cmd.MarkFlagDirname("results")
	_ = cmd.MarkFlagFilename("html", "html")
	return cmd
}

// Complete fills in the results directory.
func (o *SweepOptions) Complete() error {
	if o.Results == "" && o.Filename != "" {
		base := strings.TrimSuffix(filepath.Base(o.Filename), filepath.Ext(o.Filename))
		o.Results = filepath.Join(filepath.Dir(o.Filename), base+".results")
	}
	return nil
}

// Validate checks flags before anything is read.
func (o *SweepOptions) Validate() error {
	if o.Filename == "" {
		return UsageErrorf("-f/--filename is required: the study file (docs/sweep.md)")
	}
	if o.Filename == "-" {
		return UsageErrorf("-f -: a study is read from a file (its paths are relative to it), not from stdin")
	}
	if o.Cluster.OnCluster {
		if err := o.validateCluster(); err != nil {
			return err
		}
	} else if err := o.Cluster.validateLocal(); err != nil {
		return err
	}
	if o.Cluster.DryRun == dryRunNone {
		if err := checkFormat(o.Output, sweep.Formats, replayOutputHint(o.Output)); err != nil {
			return err
		}
	}
	if err := checkOutputFile("--html", o.HTML); err != nil {
		return err
	}
	if fi, err := os.Stat(o.Results); err == nil && !fi.IsDir() {
		return UsageErrorf("--results %s: not a directory", o.Results)
	}
	if o.Workers < 0 {
		return UsageErrorf("--workers %d: must not be negative (0 is one per core)", o.Workers)
	}
	if o.Collect && o.Resume {
		return UsageErrorf("--collect runs nothing: --resume does not go with it")
	}
	if o.Collect && len(o.Cells) > 0 {
		return UsageErrorf("--collect runs nothing: --cell does not go with it")
	}
	if len(o.Cells) > 0 && o.HTML != "" {
		return UsageErrorf("--cell runs a share of the cells and prints nothing: --html goes with the sweep or --collect that merges them")
	}
	return nil
}

// Run checks the study and every cell's inputs, runs the cells not done,
// then merges and prints every cell's result. Nothing is printed unless
// every cell has its result.
func (o *SweepOptions) Run(ctx context.Context) error {
	if ctx == nil {
		ctx = context.Background()
	}
	study, err := sweep.ReadStudy(o.Filename)
	if err != nil {
		return AsUsage(err)
	}
	plan, err := sweep.Prepare(o.Filename, study, o.Settings.ExtraPlugins)
	if err != nil {
		if sweep.IsInput(err) || errors.Is(err, engine.ErrConfig) {
			return AsUsage(err)
		}
		return err
	}
	if o.HTML != "" && study.Verb != sweep.VerbReplay {
		return UsageErrorf("--html %s: the report draws replays' curves, and the study's verb is %s: use -o table, json or csv", o.HTML, study.Verb)
	}
	if o.HTML != "" && !study.Records(sweep.RecordSeries) {
		return UsageErrorf("--html %s: the study's record must include series (record: [summary, series]): the report draws every cell's curves", o.HTML)
	}
	for _, w := range plan.Warnings {
		fmt.Fprintln(o.ErrOut, w)
	}
	if o.Cluster.OnCluster {
		return o.runCluster(ctx, plan)
	}
	if !o.Collect {
		progress := newProgress(o.ErrOut, "sweeping")
		// The line is redrawn after each cell and, while cells run, as
		// their replays go on: the time elapsed moves even when each cell
		// takes minutes.
		var done, total atomic.Int64
		count := func(d, t int) {
			done.Store(int64(d))
			total.Store(int64(t))
			progress.cells(d, t)
		}
		var tick func()
		if progress != nil {
			tick = func() { progress.cells(int(done.Load()), int(total.Load())) }
		}
		_, err := plan.Run(ctx, sweep.RunOptions{Dir: o.Results, Workers: o.Workers, Resume: o.Resume, Only: o.Cells, Progress: count, Tick: tick, CellDone: o.cellDone})
		progress.done()
		if err != nil {
			if sweep.IsInput(err) {
				return AsUsage(err)
			}
			if cause := context.Cause(ctx); cause != nil && ctx.Err() != nil {
				return fmt.Errorf("sweep stopped, the finished cells' results are in %s (--resume goes on): %w", o.Results, cause)
			}
			return err
		}
	}
	if len(o.Cells) > 0 {
		return nil // a share: --collect merges when every share is done
	}
	merged, err := plan.Merge(o.Results)
	if err != nil {
		if sweep.IsInput(err) || o.Collect {
			return AsUsage(err)
		}
		return err
	}
	return o.print(merged)
}

// print writes the merged results: -o to stdout, --html to its file.
func (o *SweepOptions) print(merged *sweep.Merged) error {
	var out bytes.Buffer
	if err := sweep.WriteSweep(&out, merged, o.Output); err != nil {
		return err
	}
	if o.HTML != "" {
		var page bytes.Buffer
		if err := sweep.WriteSweepHTML(&page, merged); err != nil {
			return err
		}
		if err := writeOutputFile("--html", o.HTML, page.Bytes(), 0o644); err != nil {
			return err
		}
	}
	_, err := o.Out.Write(out.Bytes())
	return err
}
