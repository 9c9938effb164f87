package cli

import (
	"context"
	"errors"
	"io"
	"sort"
	"strings"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubectl-sched/kubectl-sched/internal/drain"
	"github.com/kubectl-sched/kubectl-sched/internal/kube"
	"github.com/kubectl-sched/kubectl-sched/internal/report"
	"github.com/kubectl-sched/kubectl-sched/internal/snapshot"
)

// DrainOptions are the settings of `kubectl sched drain`.
type DrainOptions struct {
	genericiooptions.IOStreams
	Settings    Settings
	ConfigFlags *genericclioptions.ConfigFlags

	Nodes        []string
	Selector     string
	Output       string
	Delete       bool
	Force        bool
	NoPreemption bool

	engine engineFlags
}

// NewCmdDrain builds `kubectl sched drain`.
func NewCmdDrain(streams genericiooptions.IOStreams, settings Settings) *cobra.Command {
	o := &DrainOptions{IOStreams: streams, Settings: settings, ConfigFlags: kube.NewConfigFlags(), Output: "table"}
	o.engine = engineFlags{IOStreams: streams, settings: settings, kube: o.ConfigFlags, dump: dumpOrCluster, ownProgress: true}
	cmd := &cobra.Command{
		Use:   "drain (NODE [NODE ...] | -l SELECTOR) [--snapshot CLUSTER.yaml]",
		Short: "Simulate draining nodes: where every evicted pod goes, what stays pending and why",
		Long: strings.TrimSpace(`
Simulate 'kubectl drain' of the nodes, without touching anything: the nodes
are cordoned (or deleted with --delete), and their pods go through kubectl
drain's rules and the eviction API's:

  - DaemonSet pods and mirror pods stay (as with --ignore-daemonsets);
  - pods that declare no controller make kubectl drain refuse the whole node,
    unless --force, which deletes them: nothing recreates them, they are lost;
  - pods with emptyDir volumes are evicted and flagged: their data is lost;
  - PodDisruptionBudgets decide, from their status as the API server holds
    it, which evictions it would refuse right now, each allowed eviction
    using up the budget; the refused ones are shown with the budget that
    blocks them.

The evicted pods that their controllers recreate are then scheduled by the
real scheduling loop, in kube-scheduler's queue order (priority, then
creationTimestamp, then name), with the configured profile (--config),
preemption included unless --no-preemption; ties go to the lowest node name.
Each lands on a node or stays pending with kube-scheduler's message. Pending
pods of the cluster are not scheduled alongside.

Cluster state comes from --snapshot files or, without --snapshot, from the
cluster of the current kubeconfig context, listed once: nothing is written to
it (get, list and watch suffice).

Exit status: 0 when every pod that has to leave is evicted, recreated and
placed and nothing else is preempted; 3 when some pod would stay pending, is
lost, cannot be evicted, or a pod elsewhere is preempted; 2 for bad input (no
such node, a selector matching no node); 1 for other failures.`),
		Example: `  # Can these two nodes go for maintenance? (exit status 3 if not)
  kubectl sched drain node-a node-b

  # Every node of the old pool, deleted, against a dump
  kubectl sched drain -l pool=old --delete --snapshot cluster.yaml

  # Pods without a controller are deleted too (and lost)
  kubectl sched drain node-a --force

  # Machine-readable moves (schema: docs/drain.md)
  kubectl sched drain node-a -o json`,
		RunE: func(cmd *cobra.Command, args []string) error {
			o.Nodes = args
			if err := o.Validate(); err != nil {
				return err
			}
			return o.Run(cmd.Context())
		},
	}
	f := cmd.Flags()
	f.StringVarP(&o.Selector, "selector", "l", "", "Drain the nodes matching this label selector (e.g. pool=old) instead of named ones")
	o.engine.AddFlags(cmd)
	f.StringVarP(&o.Output, "output", "o", o.Output, "Output format: table, wide, json or yaml")
	f.BoolVar(&o.Delete, "delete", false, "Delete the nodes instead of cordoning them (their DaemonSet and mirror pods go with them)")
	f.BoolVar(&o.Force, "force", false, "Also evict pods that declare no controller, as kubectl drain --force does (they are lost)")
	f.BoolVar(&o.NoPreemption, "no-preemption", false, "Turn preemption off for the re-placed pods")
	o.ConfigFlags.AddFlags(f)

	src := completionSource{settings: settings, flags: o.ConfigFlags, snapshots: &o.engine.Snapshots}
	cmd.ValidArgsFunction = src.namesNotGiven("nodes")
	_ = cmd.RegisterFlagCompletionFunc("output", fixedCompletion(report.Formats...))
	_ = cmd.RegisterFlagCompletionFunc("selector", src.nodeSelector)
	registerKubeFlagCompletion(cmd, src)
	return cmd
}

// Validate checks flags before anything is read.
func (o *DrainOptions) Validate() error {
	if len(o.Nodes) == 0 && o.Selector == "" {
		return UsageErrorf("name the nodes to drain, or select them with -l: kubectl sched drain (NODE [NODE ...] | -l SELECTOR)")
	}
	if len(o.Nodes) > 0 && o.Selector != "" {
		return UsageErrorf("give node names or -l, not both")
	}
	if o.Selector != "" {
		if _, err := labels.Parse(o.Selector); err != nil {
			return UsageErrorf("-l/--selector: %v", err)
		}
	}
	if !report.ValidFormat(o.Output) {
		return UsageErrorf("--output: unknown format %q (want one of %s)", o.Output, strings.Join(report.Formats, ", "))
	}
	return nil
}

// Run loads the cluster, drains and prints. Output is rendered into a
// buffer first so that a failure leaves stdout empty.
func (o *DrainOptions) Run(ctx context.Context) error {
	if ctx == nil {
		ctx = context.Background()
	}
	prog := newProgress(o.ErrOut, "drain")
	defer prog.done()
	prog.set("loading the cluster")
	in, err := o.engine.load(ctx)
	if err != nil {
		return err
	}
	cl := in.Cluster
	nodes, err := o.nodes(cl)
	if err != nil {
		return err
	}
	prog.set("draining %d node(s) and placing their pods", len(nodes))
	rep, err := drain.Run(ctx, cl, nodes, drain.Options{Config: in.Config, Registry: in.Registry, Features: in.Features, Delete: o.Delete, Force: o.Force, NoPreemption: o.NoPreemption, Source: in.Source})
	prog.done()
	if err != nil {
		if errors.Is(err, drain.ErrUnknownNode) {
			return AsUsage(err)
		}
		return o.engine.runError(err)
	}
	warnings := cl.Warnings
	if note := pendingNote(cl, "not scheduled alongside the evicted ones"); note != "" {
		warnings = append(warnings, note)
	}
	return printWhatIf(o.IOStreams, warnings, func(w io.Writer) error { return report.WriteDrain(w, rep, o.Output) }, rep.Complete)
}

// nodes resolves the nodes to drain: the names given, in order (each
// once), every one of which must exist, or the nodes matching -l, by name.
func (o *DrainOptions) nodes(cl *snapshot.Cluster) ([]string, error) {
	where := o.engine.where()
	exists := map[string]bool{}
	for _, n := range cl.Nodes {
		exists[n.Name] = true
	}
	if o.Selector == "" {
		var out []string
		seen := map[string]bool{}
		for _, n := range o.Nodes {
			if !exists[n] {
				return nil, UsageErrorf("%s: node %q not found", where, n)
			}
			if !seen[n] {
				seen[n] = true
				out = append(out, n)
			}
		}
		return out, nil
	}
	sel, _ := labels.Parse(o.Selector)
	var out []string
	for _, n := range cl.Nodes {
		if sel.Matches(labels.Set(n.Labels)) {
			out = append(out, n.Name)
		}
	}
	if len(out) == 0 {
		return nil, UsageErrorf("%s: no node matches the selector %q", where, o.Selector)
	}
	sort.Strings(out)
	return out, nil
}
