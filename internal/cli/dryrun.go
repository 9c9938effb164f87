package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubectl-sched/kubectl-sched/internal/dryrun"
	"github.com/kubectl-sched/kubectl-sched/internal/engine"
	"github.com/kubectl-sched/kubectl-sched/internal/report"
	sharepkg "github.com/kubectl-sched/kubectl-sched/internal/share"
	"github.com/kubectl-sched/kubectl-sched/internal/snapshot"
)

// DryRunOptions are the settings of `kubectl sched dryrun`.
type DryRunOptions struct {
	genericiooptions.IOStreams
	Settings Settings

	Output       string
	NoPreemption bool

	engine engineFlags
}

// NewCmdDryRun builds `kubectl sched dryrun`.
func NewCmdDryRun(streams genericiooptions.IOStreams, settings Settings) *cobra.Command {
	o := &DryRunOptions{IOStreams: streams, Settings: settings, Output: "table"}
	o.engine = engineFlags{IOStreams: streams, settings: settings, dump: dumpFiles, share: true,
		filesUsage: "Cluster dump file or directory (repeatable; '-' for stdin)",
		seedUsage:  "Break ties between equal best scores pseudo-randomly with this seed, and seed where the preemption scan starts (default: lowest node name, first node)"}
	cmd := &cobra.Command{
		Use:   "dryrun -f CLUSTER.yaml [-f MORE.yaml ...]",
		Short: "Place pending pods offline against dumped cluster state",
		Long: strings.TrimSpace(`
Schedule every pending pod of a cluster dump through the real scheduling
cycle, in queue order, committing each placement before the next pod, and
print where each pod lands or why it cannot.

The dump is what 'kubectl sched snapshot' prints, or this:

  ` + snapshot.KubectlGet + `

(a v1 List); several documents separated by '---' and directories of such
files are read too ('-' reads standard input). Pods with an empty
spec.nodeName whose schedulerName is one of the profiles' are pending; pods
with a node run there. Unknown kinds are skipped with a warning on stderr.

Ties between nodes with the same best total go to the lowest node name
unless --seed is given. Messages of unschedulable pods are kube-scheduler's
FitError text, word for word.

A pod that fits nowhere may preempt, as kube-scheduler's DefaultPreemption:
lower-priority victims are removed from the in-memory state and listed under
evictions (PodDisruptionBudgets from the dump are respected), and the pod is
nominated to that node and placed there on its next attempt. The preemption
scan starts at the first candidate node, or at a seeded one with --seed.
--no-preemption turns preemption off.`),
		Example: `  # Dry-run a dump of a live cluster
  kubectl sched snapshot -A > cluster.yaml
  kubectl sched dryrun -f cluster.yaml

  # Try extra pods against it, with your scheduler configuration
  kubectl sched dryrun -f cluster.yaml -f new-deployment-pods.yaml --config sched-config.yaml

  # Straight from the live cluster, without a file
  kubectl sched snapshot -A | kubectl sched dryrun -f -

  # Score, runner-up and full message per pod; pseudo-random tie-breaks with a seed
  kubectl sched dryrun -f cluster.yaml -o wide --seed 42

  # Machine-readable output (schema: docs/dryrun.md)
  kubectl sched dryrun -f cluster.yaml -o json`,
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
	f.StringVarP(&o.Output, "output", "o", o.Output, "Output format: table, wide, json or yaml")
	f.BoolVar(&o.NoPreemption, "no-preemption", false, "Turn PostFilter (preemption) off")
	_ = cmd.RegisterFlagCompletionFunc("output", fixedCompletion(report.Formats...))
	return cmd
}

// Validate checks flags before anything is read.
func (o *DryRunOptions) Validate() error {
	if len(o.engine.Snapshots) == 0 {
		return UsageErrorf("-f/--filename is required: a cluster dump (kubectl sched snapshot -A > cluster.yaml)")
	}
	if err := checkFormat(o.Output, report.Formats, redirectHint); err != nil {
		return err
	}
	return nil
}

// Run loads, schedules and prints. Output is rendered into a buffer first so
// that a failure leaves stdout empty.
func (o *DryRunOptions) Run(ctx context.Context) error {
	if ctx == nil {
		ctx = context.Background()
	}
	in, err := o.engine.load(ctx)
	if err != nil {
		return err
	}
	cl, cfg := in.Cluster, in.Config
	if len(cl.Nodes) == 0 {
		return UsageErrorf("%s: %v", o.engine.where(), dryrun.ErrNoNodes)
	}
	// InPlace: cl is read afterwards only for its warnings, which the UIDs
	// filled in and the shared equal parts do not change.
	opts := dryrun.Options{Config: cfg, Registry: in.Registry, Features: in.Features, Seed: in.Seed, UseSeed: in.UseSeed, NoPreemption: o.NoPreemption, InPlace: true}
	if p := newProgress(o.ErrOut, "dryrun"); p != nil {
		defer p.done()
		opts.Progress = func(placed, failing, total int) {
			p.update(placed+failing, total, "pods", fmt.Sprintf("%s placed, %s unschedulable", count(placed), count(failing)))
		}
	}
	rep, err := dryrun.Run(ctx, cl, opts)
	if err != nil {
		return o.engine.runError(err)
	}
	var buf bytes.Buffer
	if err := report.WriteDryRun(&buf, rep, o.Output); err != nil {
		return err
	}
	for _, w := range cl.Warnings {
		fmt.Fprintln(o.ErrOut, w)
	}
	for _, w := range engine.UnservedWarnings(cl, cfg) {
		fmt.Fprintln(o.ErrOut, w)
	}
	_, err = o.Out.Write(buf.Bytes())
	return err
}

// loadDump reads cluster dumps (files, directories, '-' for in), showing
// the progress on errOut when it is a terminal; with share, the pods and
// nodes share their equal parts (snapshot.Cluster.Sharer). Bad input is a
// usage error.
func loadDump(paths []string, in io.Reader, errOut io.Writer, share bool) (*snapshot.Cluster, error) {
	cl := &snapshot.Cluster{}
	if share {
		cl.Sharer = sharepkg.New()
	}
	if p := newProgress(errOut, "reading"); p != nil {
		defer p.done()
		cl.OnProgress = func(file string, n, total int) {
			if total == 0 {
				p.note("parsing " + file)
				return
			}
			p.update(n, total, "objects", file)
		}
	}
	if err := cl.AddPaths(paths, in); err != nil {
		if errors.Is(err, snapshot.ErrInvalid) {
			return nil, AsUsage(err)
		}
		return nil, err
	}
	// Pods written by hand carry a priorityClassName, not the priority
	// the API server would give them.
	cl.ResolvePriorities()
	return cl, nil
}
