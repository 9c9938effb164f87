package cli

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubectl-sched/kubectl-sched/internal/kube"
	"github.com/kubectl-sched/kubectl-sched/internal/snapshot"
)

// SnapshotOptions are the settings of `kubectl sched snapshot`.
type SnapshotOptions struct {
	genericiooptions.IOStreams
	ConfigFlags *genericclioptions.ConfigFlags

	OutputFile    string
	Format        string
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
		Use:   "snapshot [-o CLUSTER.yaml] [-n NS | -A] [--full]",
		Short: "Dump the cluster state the scheduler reads, for dryrun and explain",
		Long: strings.TrimSpace(`
List, once, everything the scheduling engine reads — nodes, pods, namespaces,
PodDisruptionBudgets, PersistentVolumeClaims, PersistentVolumes,
StorageClasses, CSINodes, CSIDrivers, CSIStorageCapacities, PriorityClasses,
the Services, ReplicaSets, StatefulSets and ReplicationControllers that give
pods their default topology-spread selector, and PodGroups where the cluster serves them — and
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

The file is written atomically (a temporary file renamed into place), so a
failure leaves no half-written file. Without -o the dump goes to stdout.`),
		Example: `  # The whole cluster, then a dry-run of it
  kubectl sched snapshot -A -o cluster.yaml
  kubectl sched dryrun -f cluster.yaml

  # One namespace, as JSON on standard output
  kubectl sched snapshot -n shop --format json

  # Keep everything the API server returned (managedFields, annotations, env, commands)
  kubectl sched snapshot -A --full -o cluster-full.yaml

  # Why is a pod pending, from a dump taken earlier?
  kubectl sched explain pod web-7d4f9 -n shop --snapshot cluster.yaml`,
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
	f.StringVarP(&o.OutputFile, "output", "o", "", "Write the dump to this file (default: stdout)")
	f.StringVar(&o.Format, "format", "", "yaml or json (default: json for a .json file, else yaml)")
	f.BoolVarP(&o.AllNamespaces, "all-namespaces", "A", false, "Namespaced kinds from every namespace")
	f.BoolVar(&o.Full, "full", false, "Keep everything (managedFields, annotations, env, command, args, probes)")
	o.ConfigFlags.AddFlags(f)
	_ = cmd.RegisterFlagCompletionFunc("format", fixedCompletion("yaml", "json"))
	_ = cmd.MarkFlagFilename("output", "yaml", "yml", "json")
	registerKubeFlagCompletion(cmd, completionSource{settings: settings, flags: o.ConfigFlags})
	return cmd
}

// Complete resolves the namespace and the format.
func (o *SnapshotOptions) Complete() error {
	if o.Format == "" {
		o.Format = "yaml"
		if strings.EqualFold(filepath.Ext(o.OutputFile), ".json") {
			o.Format = "json"
		}
	}
	if o.AllNamespaces {
		return nil
	}
	ns, _, err := kube.Namespace(o.ConfigFlags, true)
	if err != nil {
		return AsUsage(fmt.Errorf("reading kubeconfig: %w", err))
	}
	o.namespace = ns
	return nil
}

// Validate checks flags before the cluster is contacted.
func (o *SnapshotOptions) Validate() error {
	if o.Format != "yaml" && o.Format != "json" {
		return UsageErrorf("--format: unknown format %q (want yaml or json)", o.Format)
	}
	if o.AllNamespaces && o.ConfigFlags.Namespace != nil && *o.ConfigFlags.Namespace != "" {
		return UsageErrorf("-n/--namespace and -A/--all-namespaces cannot be used together")
	}
	return nil
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
	cl, err := kube.ListCluster(ctx, clients, kube.ListOptions{Namespace: o.namespace})
	if err != nil {
		return err
	}
	if !o.Full {
		cl.Strip()
	}
	data, err := cl.Marshal(o.Format)
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
	if err := snapshot.WriteFile(o.OutputFile, data, 0o600); err != nil {
		return fmt.Errorf("writing %s: %w", o.OutputFile, err)
	}
	scope := "all namespaces"
	if o.namespace != "" {
		scope = fmt.Sprintf("namespace %s (pods of other namespaces are left out: -A for all)", o.namespace)
	}
	fmt.Fprintf(o.ErrOut, "wrote %s: %d nodes, %d pods, %d other objects from %s\n", o.OutputFile, len(cl.Nodes), len(cl.Pods), countOthers(cl), scope)
	return nil
}

func countOthers(cl *snapshot.Cluster) int {
	return len(cl.Namespaces) + len(cl.PDBs) + len(cl.PVCs) + len(cl.PVs) + len(cl.StorageClasses) + len(cl.CSINodes) +
		len(cl.CSIDrivers) + len(cl.CSIStorageCapacities) +
		len(cl.PriorityClasses) + len(cl.Services) + len(cl.ReplicaSets) + len(cl.StatefulSets) + len(cl.ReplicationControllers) + len(cl.Others)
}
