package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"runtime"
	"strings"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubectl-sched/kubectl-sched/internal/capacity"
	"github.com/kubectl-sched/kubectl-sched/internal/kube"
	"github.com/kubectl-sched/kubectl-sched/internal/report"
	"github.com/kubectl-sched/kubectl-sched/internal/whatif"
)

// CapacityOptions are the settings of `kubectl sched capacity`.
type CapacityOptions struct {
	genericiooptions.IOStreams
	Settings    Settings
	ConfigFlags *genericclioptions.ConfigFlags

	Files        []string
	Output       string
	Max          int
	Replicas     []int
	AddNodes     int
	NodeTemplate string
	MinNodes     bool
	GroupBy      []string
	Nearest      int
	Cycles       bool

	engine    engineFlags
	namespace string
}

// NewCmdCapacity builds `kubectl sched capacity`.
func NewCmdCapacity(streams genericiooptions.IOStreams, settings Settings) *cobra.Command {
	o := &CapacityOptions{IOStreams: streams, Settings: settings, ConfigFlags: kube.NewConfigFlags(), Output: "table", Nearest: 3}
	o.engine = engineFlags{IOStreams: streams, settings: settings, kube: o.ConfigFlags, dump: dumpOrCluster, ownProgress: true}
	cmd := &cobra.Command{
		Use:   "capacity -f SPEC.yaml [-f MORE.yaml ...] [--snapshot CLUSTER.yaml]",
		Short: "Count how many more copies of a workload fit, and how many nodes it takes",
		Long: strings.TrimSpace(`
Place copies of a workload through the real scheduling cycle, one after
another, each committed before the next, until the first one that fits on no
node (as cluster-capacity does), and print the count, where the copies land
(per node, per zone, per --group-by label), kube-scheduler's message for the
copy that does not fit with what would make it fit on the nearest nodes, and
the resources left over.

A spec (-f, repeatable; '-' for stdin) is a Pod, or the pod template of a
Deployment, ReplicaSet, StatefulSet, Job or DaemonSet, built as its controller
builds its pods (a Deployment's pods belong to its newest ReplicaSet, or to the
one the controller would create; a StatefulSet's get their claims). A
PodGroup with its pods (or a workload whose template names it) is a gang,
counted in whole groups; its profile must enable Coscheduling. With
--feature-gates GenericWorkload=true, a scheduling.k8s.io/v1beta1 PodGroup
goes through kube-scheduler's pod-group cycle instead, and a v1beta1
Workload is counted whole with its PodGroups (docs/workloads.md). A DaemonSet
gets one copy per node it targets. Several specs are placed in order, each
after the previous one's copies: with --replicas (one value for every spec,
or one per spec in order) a spec stops at that many.

The profile is the configured one (--config) with preemption off; ties go to
the lowest node name. Pending pods of the cluster are not placed first: the
count is what fits beside the pods that run. When every plugin that can
reject the pod only looks at the node itself (no hard topology spread, pod
(anti-)affinity, claims or gang), the copies are counted node by node with the
same Filter plugins, which gives the same count much faster (method
"node-local").

--add-nodes N --node-template F adds N nodes made from a Node manifest (it
must give status.allocatable with pods). --min-nodes finds the fewest such
nodes with which every spec gets its --replicas.

Cluster state comes from --snapshot files or, without --snapshot, from the
cluster of the current kubeconfig context, listed once: nothing is written to
it (get, list and watch suffice).

Exit status: 0 when every spec with --replicas got them all (or none was
asked for), 3 when one did not, 2 for bad input, 1 for other failures.`),
		Example: `  # How many more web pods fit in the cluster?
  kubectl sched capacity -f web.yaml

  # Against a dump, with your scheduler configuration, JSON out (schema: docs/capacity.md)
  kubectl sched capacity -f web.yaml --snapshot cluster.yaml --config sched-config.yaml -o json

  # 20 web pods first, then as many batch pods as fit beside them
  kubectl sched capacity -f web.yaml -f batch-job.yaml --replicas 20 --replicas 0

  # With 10 more m6i nodes
  kubectl sched capacity -f web.yaml --add-nodes 10 --node-template m6i.yaml

  # How many m6i nodes make 500 web pods fit? (exit status 3 if none do)
  kubectl sched capacity -f web.yaml --replicas 500 --min-nodes --node-template m6i.yaml

  # Count per node pool as well as per zone
  kubectl sched capacity -f web.yaml --group-by pool -o wide`,
		Args:              cobra.NoArgs,
		ValidArgsFunction: cobra.NoFileCompletions,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := o.Complete(); err != nil {
				return err
			}
			if err := o.Validate(); err != nil {
				return err
			}
			return o.Run(cmd.Context())
		},
	}
	f := cmd.Flags()
	f.StringArrayVarP(&o.Files, "filename", "f", nil, "Spec: a Pod, Deployment, ReplicaSet, StatefulSet, Job or DaemonSet, or a PodGroup (or Workload) with its pods (repeatable; '-' for stdin)")
	o.engine.AddFlags(cmd)
	f.StringVarP(&o.Output, "output", "o", o.Output, "Output format: table, wide, json or yaml")
	f.IntVar(&o.Max, "max", 0, "Stop counting a spec without --replicas at this many copies (0: no limit)")
	f.IntSliceVar(&o.Replicas, "replicas", nil, "Copies wanted: one value for every spec, or one per spec in order (0: as many as fit)")
	f.IntVar(&o.AddNodes, "add-nodes", 0, "Add this many nodes made from --node-template")
	f.StringVar(&o.NodeTemplate, "node-template", "", "A Node manifest (with status.allocatable) that --add-nodes and --min-nodes copy")
	f.BoolVar(&o.MinNodes, "min-nodes", false, "Find the fewest --node-template nodes with which every spec gets its --replicas")
	f.StringArrayVar(&o.GroupBy, "group-by", nil, "Also count the copies by this node label, e.g. a pool label (repeatable)")
	f.BoolVar(&o.Cycles, "cycles", false, "Place every copy through the scheduling cycle even when counting node by node gives the same answer (slower; to check it)")
	f.IntVar(&o.Nearest, "nearest", o.Nearest, "How many of the nearest rejected nodes get 'what would make it fit' for the copy that does not fit")
	o.ConfigFlags.AddFlags(f)

	src := completionSource{settings: settings, flags: o.ConfigFlags, snapshots: &o.engine.Snapshots}
	_ = cmd.RegisterFlagCompletionFunc("output", fixedCompletion(report.Formats...))
	_ = cmd.RegisterFlagCompletionFunc("group-by", src.nodeLabelKeys)
	_ = cmd.RegisterFlagCompletionFunc("replicas", cobra.NoFileCompletions)
	_ = cmd.RegisterFlagCompletionFunc("max", cobra.NoFileCompletions)
	_ = cmd.RegisterFlagCompletionFunc("add-nodes", cobra.NoFileCompletions)
	_ = cmd.RegisterFlagCompletionFunc("nearest", cobra.NoFileCompletions)
	_ = cmd.MarkFlagFilename("filename", "yaml", "yml", "json")
	_ = cmd.MarkFlagFilename("node-template", "yaml", "yml", "json")
	registerKubeFlagCompletion(cmd, src)
	return cmd
}

// Complete resolves the namespace specs without one go to.
func (o *CapacityOptions) Complete() error {
	ns, _, err := kube.Namespace(o.ConfigFlags, len(o.engine.Snapshots) == 0)
	if err != nil {
		return AsUsage(fmt.Errorf("reading kubeconfig: %w", err))
	}
	o.namespace = ns
	return nil
}

// Validate checks flags before anything is read.
func (o *CapacityOptions) Validate() error {
	if len(o.Files) == 0 {
		return UsageErrorf("-f/--filename is required: the workload to count (a Pod, Deployment, ReplicaSet, StatefulSet, Job or DaemonSet)")
	}
	if !report.ValidFormat(o.Output) {
		return UsageErrorf("--output: unknown format %q (want one of %s)", o.Output, strings.Join(report.Formats, ", "))
	}
	if err := oneStdin(o.Files, o.engine.Snapshots, []string{o.NodeTemplate}); err != nil {
		return err
	}
	for _, f := range []struct {
		name string
		v    int
	}{{"--max", o.Max}, {"--add-nodes", o.AddNodes}, {"--nearest", o.Nearest}} {
		if f.v < 0 {
			return UsageErrorf("%s: must not be negative, got %d", f.name, f.v)
		}
	}
	for _, k := range o.GroupBy {
		if errs := validation.IsQualifiedName(k); len(errs) > 0 {
			return UsageErrorf("--group-by: %q is not a label key: %s", k, errs[0])
		}
	}
	for _, r := range o.Replicas {
		if r < 0 {
			return UsageErrorf("--replicas: must not be negative, got %d", r)
		}
	}
	switch {
	case o.MinNodes && o.AddNodes > 0:
		return UsageErrorf("--min-nodes finds how many nodes to add: give it or --add-nodes, not both")
	case (o.MinNodes || o.AddNodes > 0) && o.NodeTemplate == "":
		return UsageErrorf("--add-nodes and --min-nodes need --node-template: the Node manifest the added nodes are made from")
	case o.NodeTemplate != "" && !o.MinNodes && o.AddNodes == 0:
		return UsageErrorf("--node-template is used by --add-nodes or --min-nodes: give one of them")
	case o.MinNodes && len(o.Replicas) == 0:
		return UsageErrorf("--min-nodes needs --replicas: how many copies must fit")
	}
	return nil
}

// Run loads the cluster, the specs and the template, counts and prints.
// Output is rendered into a buffer first so that a failure leaves stdout
// empty.
func (o *CapacityOptions) Run(ctx context.Context) error {
	if ctx == nil {
		ctx = context.Background()
	}
	prog := newProgress(o.ErrOut, "capacity")
	defer prog.done()
	prog.set("loading the cluster")
	in, err := o.engine.load(ctx)
	if err != nil {
		return err
	}
	cl := in.Cluster
	// One collection now that the dump is decoded: its file and the
	// decoding's garbage go, and the collector's next goal is twice what
	// stays rather than twice what was live mid-decoding (with the file),
	// which the engine's loading then filled: 100,000 nodes peaked at
	// 5.2 GB resident, 4.2 GB with it.
	runtime.GC()
	specs, err := capacity.LoadSpecsFor(o.Files, o.In, o.namespace, cl, in.Features)
	if err != nil {
		return asInputError(err)
	}
	if n := len(o.Replicas); n > 0 {
		if n != 1 && n != len(specs) {
			return UsageErrorf("--replicas: %d values for %d specs (give one for every spec, or one per spec in order: %s)", n, len(specs), specNames(specs))
		}
		for i, s := range specs {
			s.Replicas = o.Replicas[min(i, n-1)]
		}
	}
	// InPlace: cl is read afterwards only for its warnings and pending
	// pods, which the UIDs filled in and the shared equal parts of the
	// bound pods do not change.
	opts := capacity.Options{Config: in.Config, Registry: in.Registry, Features: in.Features, Max: o.Max, AddNodes: o.AddNodes, MinNodes: o.MinNodes,
		GroupBy: o.GroupBy, Nearest: o.Nearest, Source: in.Source, Cycles: o.Cycles, InPlace: true}
	if opts.Nearest == 0 {
		opts.Nearest = -1
	}
	if o.NodeTemplate != "" {
		if opts.Template, err = capacity.LoadNodeTemplate(o.NodeTemplate, o.In); err != nil {
			return asInputError(err)
		}
	}
	if len(cl.Nodes) == 0 && opts.Template == nil {
		return UsageErrorf("%s: %v", o.engine.where(), capacity.ErrNoNodes)
	}
	prog.set("counting")
	opts.Progress = func(p capacity.Progress) {
		nodes := ""
		if p.Nodes >= 0 {
			nodes = fmt.Sprintf("%d template node", p.Nodes)
			if p.Nodes != 1 {
				nodes += "s"
			}
		}
		switch {
		case p.Spec == "":
			prog.set("trying %s", nodes)
		case nodes != "":
			prog.set("%s, %s: %d/%d placed", nodes, p.Spec, p.Placed, p.Target)
		case p.Target > 0:
			prog.set("%s: %d/%d placed", p.Spec, p.Placed, p.Target)
		default:
			prog.set("%s: %d placed", p.Spec, p.Placed)
		}
	}
	rep, err := capacity.Run(ctx, cl, specs, opts)
	prog.done()
	if err != nil {
		switch {
		case errors.Is(err, capacity.ErrNoCoscheduling), errors.Is(err, capacity.ErrNeedsReplicas), errors.Is(err, whatif.ErrUnknownProfile):
			return AsUsage(err)
		}
		return o.engine.runError(err)
	}
	warnings := cl.Warnings
	if note := pendingNote(cl, "not placed first: the copies are counted beside the running pods"); note != "" {
		warnings = append(warnings, note)
	}
	return printWhatIf(o.IOStreams, warnings, func(w io.Writer) error { return report.WriteCapacity(w, rep, o.Output) }, rep.Complete)
}

func specNames(specs []*capacity.Spec) string {
	var s []string
	for _, sp := range specs {
		s = append(s, sp.Kind+" "+sp.Name)
	}
	return strings.Join(s, ", ")
}
