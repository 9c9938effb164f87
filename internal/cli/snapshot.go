package cli

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubectl-sched/kubectl-sched/internal/kube"
	"github.com/kubectl-sched/kubectl-sched/internal/report"
)

// SnapshotOptions are the settings of `kubectl sched snapshot`.
type SnapshotOptions struct {
	genericiooptions.IOStreams
	ConfigFlags *genericclioptions.ConfigFlags

	OutputFile    string
	Output        string
	AllNamespaces bool
	Full          bool

	namespace  string
	newClients func() (*kube.Clients, error)
}

// NewCmdSnapshot builds `kubectl sched snapshot`.
func NewCmdSnapshot(streams genericiooptions.IOStreams, settings Settings) *cobra.Command {
	o := &SnapshotOptions{IOStreams: streams, ConfigFlags: kube.NewConfigFlags()}
	o.newClients = func() (*kube.Clients, error) { return settings.clients(o.ConfigFlags) }
	cmd := &cobra.Command{
		Use:   "snapshot [-n NS | -A] [-o yaml|json] [--output-file CLUSTER.yaml] [--full]",
		Short: "Dump the cluster state the scheduler reads, for dryrun and explain",
		Long: strings.TrimSpace(`
List, once, everything the scheduling engine reads — nodes, pods, namespaces,
PodDisruptionBudgets, PersistentVolumeClaims, PersistentVolumes,
StorageClasses, CSINodes, CSIDrivers, CSIStorageCapacities, PriorityClasses,
the Services, ReplicaSets, StatefulSets and ReplicationControllers that give
pods their default topology-spread selector, and the Workloads and PodGroups
(scheduling.k8s.io/v1beta1, scheduler-plugins' scheduling.x-k8s.io) where the cluster serves them — and
write it as one v1 List that 'kubectl sched dryrun -f' and
'kubectl sched explain --snapshot' read.

Unless --full is given, what the scheduler does not read and what may be
sensitive is left out: managedFields, annotations other than the volume and
scheduling ones, and the containers' env values, envFrom, command, args,
probes and lifecycle hooks. Secrets and ConfigMaps are never read.

Namespaced kinds come from the current namespace (-n), or from every
namespace with -A; nodes and the other cluster-scoped kinds are always
complete. For a dry-run of the whole cluster use -A: pods of other
namespaces hold node resources too.

The dump goes to stdout, or with --output-file to a file, written
atomically (a temporary file renamed into place) so that a failure leaves
no half-written file and the old one intact; an existing file keeps its
mode, a symbolic link is followed, and a device or FIFO is written to as
'>' would. -o is the format, yaml by default (json for a .json file).`),
		Example: `  # The whole cluster, then a dry-run of it
  kubectl sched snapshot -A --output-file cluster.yaml
  kubectl sched dryrun -f cluster.yaml

  # One namespace, as JSON on standard output
  kubectl sched snapshot -n shop -o json

  # Keep everything the API server returned (managedFields, annotations, env, commands)
  kubectl sched snapshot -A --full --output-file cluster-full.yaml

  # Why is a pod pending, from a dump taken earlier?
  kubectl sched explain pod web-7d4f9 -n shop --snapshot cluster.yaml`,
		Args:              cobra.NoArgs,
		ValidArgsFunction: cobra.NoFileCompletions,
		RunE: func(cmd *cobra.Command, args []string) error {
			if cmd.Flags().Changed("format") {
				fmt.Fprintln(o.ErrOut, "warning: --format is deprecated: use -o/--output")
			}
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
	f.StringVarP(&o.Output, "output", "o", "", "Output format: yaml or json (default: json for a .json --output-file, else yaml)")
	f.StringVar(&o.OutputFile, "output-file", "", "Write the dump to this file instead of stdout (atomically)")
	// --format was -o's name before -o meant the format, as in kubectl.
	f.StringVar(&o.Output, "format", "", "Output format (deprecated: use -o)")
	_ = f.MarkHidden("format")
	f.BoolVarP(&o.AllNamespaces, "all-namespaces", "A", false, "Namespaced kinds from every namespace")
	f.BoolVar(&o.Full, "full", false, "Keep everything (managedFields, annotations, env, command, args, probes)")
	o.ConfigFlags.AddFlags(f)
	_ = cmd.RegisterFlagCompletionFunc("output", fixedCompletion(snapshotFormats...))
	_ = cmd.MarkFlagFilename("output-file", "yaml", "yml", "json")
	registerKubeFlagCompletion(cmd, completionSource{settings: settings, flags: o.ConfigFlags})
	return cmd
}

// snapshotFormats are the formats of -o.
var snapshotFormats = []string{"yaml", "json"}

// Complete resolves the namespace and the format.
func (o *SnapshotOptions) Complete() error {
	if o.Output == "" {
		o.Output = "yaml"
		if strings.EqualFold(filepath.Ext(o.OutputFile), ".json") {
			o.Output = "json"
		}
	}
	if o.AllNamespaces {
		return nil
	}
	ns, _, err := kube.Namespace(o.ConfigFlags, true)
	if err != nil {
		return err
	}
	o.namespace = ns
	return nil
}

// Validate checks flags before the cluster is contacted.
func (o *SnapshotOptions) Validate() error {
	if err := checkFormat(o.Output, snapshotFormats, "to write the dump to a file: --output-file %s"); err != nil {
		return err
	}
	if o.OutputFile == "-" {
		return UsageErrorf("--output-file: '-' is standard output, where the dump goes without --output-file")
	}
	if err := checkOutputFile("--output-file", o.OutputFile); err != nil {
		return err
	}
	o.warnFlagMixUps()
	if o.AllNamespaces && o.ConfigFlags.Namespace != nil && *o.ConfigFlags.Namespace != "" {
		return UsageErrorf("-n/--namespace and -A/--all-namespaces cannot be used together")
	}
	return nil
}

// warnFlagMixUps warns about a flag value that reads as the other flag's:
// --output-file json writes a file named json, and -o json with
// --output-file x.yaml writes JSON into a .yaml file. Both are allowed.
func (o *SnapshotOptions) warnFlagMixUps() {
	f := o.OutputFile
	if f == "" {
		return
	}
	ext := strings.ToLower(strings.TrimPrefix(filepath.Ext(f), "."))
	switch {
	case ext == "" && (slices.Contains(snapshotFormats, f) || slices.Contains(report.Formats, f) || f == "yml"):
		fmt.Fprintf(o.ErrOut, "warning: writing the dump to a file named %q (-o %s is the format)\n", f, f)
	case (ext == "json" && o.Output == "yaml") || ((ext == "yaml" || ext == "yml") && o.Output == "json"):
		fmt.Fprintf(o.ErrOut, "warning: writing %s into %s (-o %s)\n", strings.ToUpper(o.Output), f, o.Output)
	}
}

// Run lists, strips and writes. Nothing reaches stdout or the file unless
// everything was listed and encoded.
func (o *SnapshotOptions) Run(ctx context.Context) error {
	if ctx == nil {
		ctx = context.Background()
	}
	clients, err := o.newClients()
	if err != nil {
		return err
	}
	lctx, done := listProgress(ctx, o.ErrOut)
	cl, err := kube.ListCluster(lctx, clients, kube.ListOptions{Namespace: o.namespace})
	done()
	if err != nil {
		return err
	}
	if !o.Full {
		cl.Strip()
	}
	data, err := cl.Marshal(o.Output)
	if err != nil {
		return err
	}
	for _, w := range cl.Warnings {
		fmt.Fprintln(o.ErrOut, w)
	}
	if o.OutputFile == "" {
		_, err = o.Out.Write(data)
		return err
	}
	if err := writeOutputFile("--output-file", o.OutputFile, data, 0o600); err != nil {
		return err
	}
	scope := "all namespaces"
	if o.namespace != "" {
		scope = fmt.Sprintf("namespace %s (pods of other namespaces are left out: -A for all)", o.namespace)
	}
	fmt.Fprintf(o.ErrOut, "wrote %s: %d nodes, %d pods, %d other objects from %s\n", o.OutputFile, len(cl.Nodes), len(cl.Pods), cl.OtherCount(), scope)
	return nil
}
