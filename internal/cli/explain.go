package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	v1 "k8s.io/api/core/v1"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubectl-sched/kubectl-sched/internal/engine"
	"github.com/kubectl-sched/kubectl-sched/internal/explain"
	"github.com/kubectl-sched/kubectl-sched/internal/kube"
	"github.com/kubectl-sched/kubectl-sched/internal/report"
	"github.com/kubectl-sched/kubectl-sched/internal/snapshot"
)

// ExplainOptions are the settings of `kubectl sched explain pod`.
type ExplainOptions struct {
	genericiooptions.IOStreams
	Settings    Settings
	ConfigFlags *genericclioptions.ConfigFlags

	Name      string
	PodFile   string
	Node      string
	Output    string
	AllNodes  bool
	Nearest   int
	AtTurn    bool
	CheckTurn bool
	// PodGroup is set for `explain podgroup NAME` and `explain podgroup
	// -f WORKLOAD.yaml`.
	PodGroup bool
	// NodeTemplate, for explain podgroup, is a Node manifest: how many
	// such nodes make the group fit.
	NodeTemplate string

	engine     engineFlags
	namespace  string
	nsExplicit bool
}

// NewCmdExplain builds `kubectl sched explain`.
func NewCmdExplain(streams genericiooptions.IOStreams, settings Settings) *cobra.Command {
	o := &ExplainOptions{IOStreams: streams, Settings: settings, ConfigFlags: kube.NewConfigFlags(), Output: "table", Nearest: explain.DefaultNearest, CheckTurn: true}
	o.engine = engineFlags{IOStreams: streams, settings: settings, kube: o.ConfigFlags, dump: dumpOrCluster, share: true,
		seedUsage: "Break ties between equal best scores pseudo-randomly with this seed (default: lowest node name)"}
	cmd := &cobra.Command{
		Use:   "explain (pod (NAME | -f POD.yaml) | podgroup (NAME | -f WORKLOAD.yaml)) [--snapshot CLUSTER.yaml]",
		Short: "Explain, node by node, why a pod fits where it does or does not fit at all",
		Long: fmt.Sprintf(strings.TrimSpace(`
Run one scheduling cycle of a pod through the real framework, with every node
evaluated, and show what kube-scheduler does not: every filter plugin that
rejects each node (not only the first, which is all kube-scheduler reports),
with its reason and whether preemption could help; the per-plugin raw,
normalized and weighted scores of the feasible nodes and their ranking; the
node the scheduler would choose; kube-scheduler's exact FitError message; and,
for the rejected nodes nearest to fitting, what would make the pod fit there
("needs 250m cpu more (free 750m of 4)", "taint dedicated=gpu:NoSchedule not
tolerated", ...).

The pod is named (from --snapshot, or from the cluster) or comes from a file
with -f, a hypothetical pod that does not exist yet. A pod that is already
bound is explained as if it were pending: taken off its node, so its node's
rank against the others shows why it landed there. Nothing is changed
anywhere: explain never binds.

The state explained is the cluster as listed: pods that are pending are not
placed, so a pod may fit here that a dry-run, which places the pods ahead of
it in the queue first, reports unschedulable (the output's State line says
how many are ahead). --at-turn explains the pod at its turn in a dry-run of
the same state instead: the pods ahead of it placed (and preemption carried
out) as 'kubectl sched dryrun' does, at the attempt whose outcome the dry-run
reports. Without --at-turn, explain of a dump runs that dry-run too when it
is small (at most %d node evaluations: scheduling attempts × nodes) and
says on its Dry-run line whether the verdict at the pod's turn agrees, or
that it was not checked; --check-turn=false skips it.

Cluster state comes from --snapshot files (what 'kubectl sched snapshot' or
'kubectl get nodes,pods,... -A -o yaml' writes; repeatable, '-' for stdin) or,
without --snapshot, from the cluster of the current kubeconfig context, listed
once.

explain podgroup NAME (a scheduling.k8s.io/v1beta1 PodGroup; the feature
gate GenericWorkload on) runs kube's pod-group cycle for the group's pending
members on the state as listed, the other pending pods left pending, in
memory: whether the group fits (reaches its minCount), the node each member
would get or its status message in kube's words, each placement tried and its
score (with TopologyAwareWorkloadScheduling), the PodGroupInitiallyScheduled
condition kube would set, and the quorum; for a group that does not fit, the
members left over by reason and what each domain lacks (--node-template: how
many such nodes would make it fit). explain podgroup -f WORKLOAD.yaml does the
same for a PodGroup (or Workload) and its pods not yet created. It takes none
of --node, --all-nodes, --at-turn.

Exit code 0 whether or not the pod (or the group) fits; 2 for bad input (no
such pod or PodGroup, a PodGroup without pending members or with
GenericWorkload off, bad files or configuration).`), explain.DefaultTurnBudget),
		Example: `  # Why is this pod pending?
  kubectl sched explain pod web-7d4f9 -n shop

  # The same against a dump, with your scheduler configuration
  kubectl sched explain pod web-7d4f9 -n shop --snapshot cluster.yaml --config sched-config.yaml

  # Would this new pod fit?
  kubectl sched explain pod -f new-pod.yaml --snapshot cluster.yaml

  # Every node on its own line, and one node in full detail
  kubectl sched explain pod web-7d4f9 -n shop --snapshot cluster.yaml --all-nodes
  kubectl sched explain pod web-7d4f9 -n shop --snapshot cluster.yaml --node worker-3

  # The same pod at its turn in a dry-run of the dump, as dryrun sees it
  kubectl sched explain pod web-7d4f9 -n shop --snapshot cluster.yaml --at-turn

  # Machine-readable (schema: docs/explain.md)
  kubectl sched explain pod web-7d4f9 -n shop --snapshot cluster.yaml -o json

  # Why is this gang pending? Will it fit?
  kubectl sched explain podgroup trainers -n ml --snapshot cluster.yaml --feature-gates GenericWorkload=true

  # Will this workload fit, in one rack? How many such nodes would it take?
  kubectl sched explain podgroup -f workload.yaml --snapshot cluster.yaml --feature-gates GenericWorkload=true,TopologyAwareWorkloadScheduling=true --node-template node.yaml`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := o.Complete(args); err != nil {
				return err
			}
			if err := o.Validate(); err != nil {
				return err
			}
			return o.Run(cmd.Context())
		},
	}
	f := cmd.Flags()
	o.engine.AddFlags(cmd)
	f.StringVarP(&o.PodFile, "filename", "f", "", "A pod manifest to explain instead of a named pod (hypothetical: it need not exist; '-' for stdin)")
	f.StringVar(&o.Node, "node", "", "Show this node in full detail (filters, gaps, raw/normalized/weighted scores)")
	f.StringVarP(&o.Output, "output", "o", o.Output, "Output format: table, wide, json or yaml")
	f.BoolVar(&o.AllNodes, "all-nodes", false, "List every rejected node and every feasible node instead of grouping them")
	f.IntVar(&o.Nearest, "nearest", o.Nearest, "How many of the rejected nodes nearest to fitting get 'what would make it fit'")
	f.BoolVar(&o.AtTurn, "at-turn", false, "Explain the pod at its turn in a dry-run of the state (the pending pods ahead of it placed first), as dryrun reports it")
	f.StringVar(&o.NodeTemplate, "node-template", "", "explain podgroup: a Node manifest; say how many such nodes would make the group fit (capacity's --min-nodes search)")
	f.BoolVar(&o.CheckTurn, "check-turn", o.CheckTurn, "With --snapshot, without --at-turn: check, when the dry-run up to the pod's turn is small, whether the verdict there agrees (the Dry-run line)")
	o.ConfigFlags.AddFlags(f)

	src := completionSource{settings: settings, flags: o.ConfigFlags, snapshots: &o.engine.Snapshots}
	cmd.ValidArgsFunction = src.explainArgs
	_ = cmd.RegisterFlagCompletionFunc("node", src.names("nodes"))
	_ = cmd.RegisterFlagCompletionFunc("output", fixedCompletion(report.Formats...))
	_ = cmd.MarkFlagFilename("filename", "yaml", "yml", "json")
	registerKubeFlagCompletion(cmd, src)
	return cmd
}

// Complete reads the positional arguments and resolves the namespace.
func (o *ExplainOptions) Complete(args []string) error {
	if len(args) == 0 {
		return UsageErrorf("a resource type is required: kubectl sched explain pod (NAME | -f POD.yaml)")
	}
	live := len(o.engine.Snapshots) == 0
	ns, explicit, err := kube.Namespace(o.ConfigFlags, live)
	if err != nil {
		return err
	}
	o.namespace, o.nsExplicit = ns, explicit
	kind, name, _ := strings.Cut(args[0], "/")
	rest := args[1:]
	switch strings.ToLower(kind) {
	case "pod", "pods", "po":
	case "podgroup", "podgroups", "podgroup.scheduling.k8s.io", "podgroups.scheduling.k8s.io":
		o.PodGroup = true
		if name != "" {
			rest = append([]string{name}, rest...)
		}
		if len(rest) > 1 || (len(rest) == 0 && o.PodFile == "") {
			return UsageErrorf("one PodGroup name, or -f WORKLOAD.yaml, is required: kubectl sched explain podgroup (NAME | -f WORKLOAD.yaml)")
		}
		if len(rest) == 1 {
			o.Name = rest[0]
		}
		return nil
	default:
		if len(rest) > 0 && name == "" {
			name = rest[0]
		}
		return o.notAPod(kind, name, false)
	}
	if name != "" {
		rest = append([]string{name}, rest...)
	}
	if len(rest) > 1 {
		return UsageErrorf("one pod at a time: got %s", strings.Join(rest, ", "))
	}
	if len(rest) == 1 {
		o.Name = rest[0]
		// explain pod deploy/web: a TYPE/NAME where a pod name goes.
		if kind, name, ok := strings.Cut(o.Name, "/"); ok {
			return o.notAPod(kind, name, true)
		}
	}
	return nil
}

// workloads are the kinds whose pods explain is asked about by the
// workload's name, with how their pods are named (kubectl's short names
// too).
var workloads = []struct {
	kind    string
	aliases []string
	pods    string
}{
	{"deployment", []string{"deploy", "deployments", "deployment.apps"}, "NAME-<hash>-<id>"},
	{"replicaset", []string{"rs", "replicasets", "replicaset.apps"}, "NAME-<id>"},
	{"statefulset", []string{"sts", "statefulsets", "statefulset.apps"}, "NAME-0, NAME-1, ..."},
	{"daemonset", []string{"ds", "daemonsets", "daemonset.apps"}, "NAME-<id>"},
	{"job", []string{"jobs", "job.batch"}, "NAME-<id>"},
	{"cronjob", []string{"cj", "cronjobs", "cronjob.batch"}, "NAME-<time>-<id>"},
	{"replicationcontroller", []string{"rc", "replicationcontrollers"}, "NAME-<id>"},
}

// notAPod is the error for `explain KIND NAME` and (asPodName) `explain
// pod KIND/NAME`: explain takes a pod, and a workload's pods are named
// after it.
func (o *ExplainOptions) notAPod(kind, name string, asPodName bool) error {
	ns := ""
	if o.nsExplicit {
		ns = " -n " + o.namespace
	}
	for _, w := range workloads {
		if !strings.EqualFold(kind, w.kind) && !slices.ContainsFunc(w.aliases, func(a string) bool { return strings.EqualFold(kind, a) }) {
			continue
		}
		if name == "" {
			name = "NAME"
		}
		return UsageErrorf("explain takes a pod, not a %s: explain one of the pods of %s %s (named %s; 'kubectl get pods%s' lists them): kubectl sched explain pod POD%s",
			w.kind, w.kind, name, strings.ReplaceAll(w.pods, "NAME", name), ns, ns)
	}
	if asPodName {
		// NAMESPACE/NAME is how kube-scheduler's logs and events name a
		// pod, so say how to give the namespace when the flag is not set.
		hint := ""
		if !o.nsExplicit && name != "" {
			hint = fmt.Sprintf("; if %s is the pod's namespace: kubectl sched explain pod %s -n %s", kind, name, kind)
		}
		return UsageErrorf("explain takes a pod: %q is not a pod name (kubectl sched explain pod NAME%s%s)", kind+"/"+name, ns, hint)
	}
	return UsageErrorf("cannot explain %q: only pods and podgroups can be explained (kubectl sched explain pod NAME%s)", kind, ns)
}

// Validate checks flags before anything is read.
func (o *ExplainOptions) Validate() error {
	if o.PodGroup {
		if o.AtTurn || o.Node != "" || o.AllNodes {
			return UsageErrorf("explain podgroup takes none of --at-turn, --node, --all-nodes (they are explain pod's)")
		}
		if o.PodFile == "-" && o.NodeTemplate == "-" {
			return UsageErrorf("-f and --node-template cannot both read standard input")
		}
		return checkFormat(o.Output, report.Formats, redirectHint)
	}
	if o.Name == "" && o.PodFile == "" {
		return UsageErrorf("a pod name or -f POD.yaml is required: kubectl sched explain pod (NAME | -f POD.yaml)")
	}
	if o.Name != "" && o.PodFile != "" {
		return UsageErrorf("give a pod name or -f, not both")
	}
	if o.PodFile == "-" {
		for _, s := range o.engine.Snapshots {
			if s == "-" {
				return UsageErrorf("-f and --snapshot cannot both read standard input")
			}
		}
	}
	if err := checkFormat(o.Output, report.Formats, redirectHint); err != nil {
		return err
	}
	if o.Nearest < 0 {
		return UsageErrorf("--nearest: must not be negative, got %d", o.Nearest)
	}
	return nil
}

// Run loads the state and the pod, explains and prints. Output is rendered
// into a buffer first so that a failure leaves stdout empty.
func (o *ExplainOptions) Run(ctx context.Context) error {
	if ctx == nil {
		ctx = context.Background()
	}
	in, err := o.engine.load(ctx)
	if err != nil {
		return err
	}
	cl, cfg := in.Cluster, in.Config
	source := explain.SourceSnapshot
	if in.Source == "cluster" {
		source = explain.SourceCluster
	}
	if len(cl.Nodes) == 0 {
		return UsageErrorf("%s: %v", o.engine.where(), explain.ErrNoNodes)
	}

	if o.PodGroup {
		return o.runPodGroup(ctx, in, explain.Options{
			Config: cfg, Registry: in.Registry, Features: in.Features, Seed: in.Seed, UseSeed: in.UseSeed,
			Live: len(o.engine.Snapshots) == 0,
		})
	}

	var pod *v1.Pod
	if o.PodFile != "" {
		source = explain.SourceFile
		if pod, err = o.loadPodFile(); err != nil {
			return err
		}
		if w := snapshot.ResolvePriority(pod, cl.PriorityClasses); w != "" {
			cl.Warnings = append(cl.Warnings, w)
		}
		if w := snapshot.AdmitRuntimeClass(pod, cl.RuntimeClasses); w != "" {
			cl.Warnings = append(cl.Warnings, w)
		}
	} else if pod, err = explain.FindPod(cl, o.namespace, o.Name); err != nil {
		return AsUsage(err)
	}

	nearest := o.Nearest
	if nearest == 0 {
		nearest = -1
	}
	live := len(o.engine.Snapshots) == 0
	eo := explain.Options{
		Config: cfg, Registry: in.Registry, Features: in.Features, Seed: in.Seed, UseSeed: in.UseSeed,
		Nearest: nearest, Node: o.Node, Source: source, Live: live,
		// The cluster was loaded for this one explanation.
		OwnPods: true,
	}
	var (
		rep   *report.Explanation
		state *explain.State
	)
	if o.AtTurn {
		defer o.dryRunProgress(&eo)()
		rep, err = explain.RunAtTurn(ctx, cl, pod, eo)
	} else if state, err = explain.NewState(ctx, cl, eo); err == nil {
		rep, err = explainUncollected(ctx, state, pod)
	}
	if err != nil {
		if errors.Is(err, explain.ErrUnknownProfile) || errors.Is(err, explain.ErrUnknownNode) {
			return AsUsage(err)
		}
		return o.engine.runError(err)
	}
	if !o.AtTurn && o.CheckTurn && !live {
		// A dump's pending pods stay as they are: a dry-run of it is the
		// other answer the user can get (a live cluster's pending pods are
		// the real scheduler's). It runs on the state just loaded.
		done := o.dryRunProgress(&eo)
		err := state.CheckTurn(ctx, pod, rep, explain.DefaultTurnBudget, eo.Progress)
		done()
		if err != nil {
			return err
		}
	}
	var buf bytes.Buffer
	view := report.ExplainView{AllNodes: o.AllNodes, Node: o.Node}
	if isTerminal(o.Out) {
		view.Styles = terminalStyles()
	}
	if err := report.WriteExplain(&buf, rep, o.Output, view); err != nil {
		return err
	}
	for _, w := range cl.Warnings {
		fmt.Fprintln(o.ErrOut, w)
	}
	if o.AtTurn {
		// The dry-run leaves them pending, as dryrun says.
		for _, w := range engine.UnservedWarnings(cl, cfg) {
			fmt.Fprintln(o.ErrOut, w)
		}
	}
	_, err = o.Out.Write(buf.Bytes())
	return err
}

// explainUncollected is state.Explain(pod) with no garbage collection
// starting during it: the explanation is what the user waits for after the
// load, and the load's garbage (the dump's decoding, the cache) would
// otherwise often be collected during it (at 5000 nodes, 50 ms of CPU in a
// 5 ms explanation). A collection the load started is finished first, as
// part of loading; the collector is back on for what follows (the turn
// check's dry-run allocates as much as it needs), and otherwise the
// process exits without collecting. GOMEMLIMIT still bounds the heap.
func explainUncollected(ctx context.Context, state *explain.State, pod *v1.Pod) (*report.Explanation, error) {
	defer pauseGC()()
	return state.Explain(ctx, pod)
}

// dryRunProgress shows the progress of the dry-run to the pod's turn on
// stderr when it is a terminal, until the returned done is called.
func (o *ExplainOptions) dryRunProgress(eo *explain.Options) (done func()) {
	p := newProgress(o.ErrOut, "dryrun")
	if p == nil {
		return func() {}
	}
	eo.Progress = func(placed, failing, total int) {
		p.update(placed+failing, total, "pods", fmt.Sprintf("%s placed, %s unschedulable", count(placed), count(failing)))
	}
	return p.done
}

// loadPodFile reads the one Pod of -f. A pod without a namespace gets the
// -n one; a pod whose namespace contradicts an explicit -n is an error, as
// with kubectl.
func (o *ExplainOptions) loadPodFile() (*v1.Pod, error) {
	pc := &snapshot.Cluster{DefaultNamespace: o.namespace}
	if err := pc.AddPaths([]string{o.PodFile}, o.In); err != nil {
		return nil, AsUsage(err)
	}
	if len(pc.Pods) != 1 || len(pc.Nodes)+len(pc.Others) > 0 {
		return nil, UsageErrorf("%s: want exactly one Pod, found %d pods and %d other objects (to try several pods, use kubectl sched dryrun)",
			o.PodFile, len(pc.Pods), len(pc.Nodes)+len(pc.Others)+len(pc.Warnings))
	}
	pod := pc.Pods[0]
	if o.nsExplicit && pod.Namespace != o.namespace {
		return nil, UsageErrorf("%s: the namespace from the provided object %q does not match the namespace %q", o.PodFile, pod.Namespace, o.namespace)
	}
	return pod, nil
}
