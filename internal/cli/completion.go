package cli

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	"github.com/spf13/cobra"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/cli-runtime/pkg/genericclioptions"

	"github.com/kubectl-sched/kubectl-sched/internal/kube"
	"github.com/kubectl-sched/kubectl-sched/internal/snapshot"
)

// completionTimeout bounds how long a <TAB> waits for the API server.
const completionTimeout = 5 * time.Second

// completionSource lists object names for shell completion: from the verb's
// --snapshot files when given (offline, as the verb itself would read
// them), else from the cluster of the kubectl flags, as kubectl completes
// `kubectl get pod <TAB>`. Any error gives no completions rather than an
// error message in the user's shell.
type completionSource struct {
	settings  Settings
	flags     *genericclioptions.ConfigFlags
	snapshots *[]string
}

// offline reports whether names come from snapshot files.
func (s completionSource) offline() bool {
	return s.snapshots != nil && len(*s.snapshots) > 0
}

// snapshotCluster loads the --snapshot files; standard input is not read
// during completion. Each file is read once (cobra's completion parses the
// flags twice, so a repeatable flag holds every value twice).
func (s completionSource) snapshotCluster() (*snapshot.Cluster, error) {
	var paths []string
	seen := map[string]bool{}
	for _, p := range *s.snapshots {
		if p != "-" && !seen[p] {
			paths = append(paths, p)
			seen[p] = true
		}
	}
	return snapshot.LoadPaths(paths, nil)
}

// list returns the names of kind ("pods", "nodes" or "namespaces"), pods
// in the namespace the verb would use, sorted.
func (s completionSource) list(kind string) ([]string, error) {
	var names []string
	if s.offline() {
		cl, err := s.snapshotCluster()
		if err != nil {
			return nil, err
		}
		switch kind {
		case "pods":
			ns, _, err := kube.Namespace(s.flags, false)
			if err != nil {
				return nil, err
			}
			for _, p := range cl.Pods {
				if p.Namespace == ns {
					names = append(names, p.Name)
				}
			}
		case "nodes":
			for _, n := range cl.Nodes {
				names = append(names, n.Name)
			}
		case "namespaces":
			seen := map[string]bool{}
			for _, n := range cl.Namespaces {
				seen[n.Name] = true
			}
			for _, p := range cl.Pods {
				seen[p.Namespace] = true
			}
			for n := range seen {
				names = append(names, n)
			}
		}
		sort.Strings(names)
		return names, nil
	}

	clients, err := s.settings.clients(s.flags)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), completionTimeout)
	defer cancel()
	core := clients.Kube.CoreV1()
	switch kind {
	case "pods":
		ns, _, err := kube.Namespace(s.flags, true)
		if err != nil {
			return nil, err
		}
		l, err := core.Pods(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return nil, err
		}
		for _, p := range l.Items {
			names = append(names, p.Name)
		}
	case "nodes":
		l, err := core.Nodes().List(ctx, metav1.ListOptions{})
		if err != nil {
			return nil, err
		}
		for _, n := range l.Items {
			names = append(names, n.Name)
		}
	case "namespaces":
		l, err := core.Namespaces().List(ctx, metav1.ListOptions{})
		if err != nil {
			return nil, err
		}
		for _, n := range l.Items {
			names = append(names, n.Name)
		}
	}
	sort.Strings(names)
	return names, nil
}

// nodes returns the nodes, from the snapshot files or the cluster.
func (s completionSource) nodes() ([]*v1.Node, error) {
	if s.offline() {
		cl, err := s.snapshotCluster()
		if err != nil {
			return nil, err
		}
		return cl.Nodes, nil
	}
	clients, err := s.settings.clients(s.flags)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), completionTimeout)
	defer cancel()
	l, err := clients.Kube.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	out := make([]*v1.Node, len(l.Items))
	for i := range l.Items {
		out[i] = &l.Items[i]
	}
	return out, nil
}

// matching returns the names with the prefix, each with prefix add in
// front.
func matching(names []string, toComplete, add string) []string {
	var out []string
	for _, n := range names {
		if c := add + n; strings.HasPrefix(c, toComplete) {
			out = append(out, c)
		}
	}
	return out
}

// names is a cobra completion function for the names of kind.
func (s completionSource) names(kind string) cobra.CompletionFunc {
	return func(cmd *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
		names, err := s.list(kind)
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		return matching(names, toComplete, ""), cobra.ShellCompDirectiveNoFileComp
	}
}

// explainArgs completes `explain pod NAME` and `explain pod/NAME`.
func (s completionSource) explainArgs(cmd *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
	const none = cobra.ShellCompDirectiveNoFileComp
	switch len(args) {
	case 0:
		if kind, _, ok := strings.Cut(toComplete, "/"); ok {
			if !isPodKind(kind) {
				return nil, none
			}
			names, err := s.list("pods")
			if err != nil {
				return nil, none
			}
			return matching(names, toComplete, kind+"/"), none
		}
		var kinds []string
		if strings.HasPrefix("pod", toComplete) {
			kinds = append(kinds, "pod\tone pod: where it fits, or why not")
		}
		if strings.HasPrefix("podgroup", toComplete) {
			kinds = append(kinds, "podgroup\ta PodGroup's pending members: whether the group fits")
		}
		return kinds, none
	case 1:
		if strings.Contains(args[0], "/") || !isPodKind(args[0]) {
			return nil, none
		}
		if f := cmd.Flags().Lookup("filename"); f != nil && f.Changed {
			return nil, none
		}
		names, err := s.list("pods")
		if err != nil {
			return nil, none
		}
		return matching(names, toComplete, ""), none
	}
	return nil, none
}

func isPodKind(kind string) bool {
	switch strings.ToLower(kind) {
	case "pod", "pods", "po":
		return true
	}
	return false
}

// registerKubeFlagCompletion completes the kubectl flags that name things:
// -n from the cluster (or the snapshot), --context, --cluster and --user
// from the kubeconfig.
func registerKubeFlagCompletion(cmd *cobra.Command, s completionSource) {
	_ = cmd.RegisterFlagCompletionFunc("namespace", s.names("namespaces"))
	fromKubeconfig := func(pick func(kinds kubeconfigNames) []string) cobra.CompletionFunc {
		return func(cmd *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
			raw, err := s.flags.ToRawKubeConfigLoader().RawConfig()
			if err != nil {
				return nil, cobra.ShellCompDirectiveNoFileComp
			}
			var k kubeconfigNames
			for n := range raw.Contexts {
				k.contexts = append(k.contexts, n)
			}
			for n := range raw.Clusters {
				k.clusters = append(k.clusters, n)
			}
			for n := range raw.AuthInfos {
				k.users = append(k.users, n)
			}
			names := pick(k)
			sort.Strings(names)
			return matching(names, toComplete, ""), cobra.ShellCompDirectiveNoFileComp
		}
	}
	_ = cmd.RegisterFlagCompletionFunc("context", fromKubeconfig(func(k kubeconfigNames) []string { return k.contexts }))
	_ = cmd.RegisterFlagCompletionFunc("cluster", fromKubeconfig(func(k kubeconfigNames) []string { return k.clusters }))
	_ = cmd.RegisterFlagCompletionFunc("user", fromKubeconfig(func(k kubeconfigNames) []string { return k.users }))
}

type kubeconfigNames struct{ contexts, clusters, users []string }

// fixedCompletion completes a flag from a fixed list of values.
func fixedCompletion(values ...string) cobra.CompletionFunc {
	return func(cmd *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
		return matching(values, toComplete, ""), cobra.ShellCompDirectiveNoFileComp
	}
}

// markConfigFile makes --config complete YAML and JSON files.
func markConfigFile(cmd *cobra.Command) {
	_ = cmd.MarkFlagFilename("config", "yaml", "yml", "json")
}

// addCompletionCmd adds cobra's `completion` command now rather than at
// Execute, so that it has examples and the help goldens see it. Call it
// after the other verbs are added and the streams are set.
func addCompletionCmd(root *cobra.Command) {
	root.InitDefaultCompletionCmd()
	for _, c := range root.Commands() {
		if c.Name() == "completion" {
			c.Use = "completion SHELL"
			c.Example = completionExample
			// Without a RunE, cobra prints the help for any argument and
			// exits 0: `completion bogus` seemed to work.
			c.RunE = func(c *cobra.Command, args []string) error {
				var shells []string
				for _, s := range c.Commands() {
					if s.IsAvailableCommand() {
						shells = append(shells, s.Name())
					}
				}
				want := strings.Join(shells[:len(shells)-1], ", ") + " or " + shells[len(shells)-1]
				if len(args) == 0 {
					return UsageErrorf("a shell is required: %s (see '%s --help')", want, c.CommandPath())
				}
				return UsageErrorf("unknown shell %q: want %s (see '%s --help')", args[0], want, c.CommandPath())
			}
		}
	}
}

const completionExample = `  # Load bash completion into this shell (needs the bash-completion package)
  source <(kubectl sched completion bash)

  # Install it for every new shell: bash, zsh, fish
  kubectl sched completion bash > /etc/bash_completion.d/kubectl-sched
  kubectl sched completion zsh > "${fpath[1]}/_kubectl-sched"
  kubectl sched completion fish > ~/.config/fish/completions/kubectl-sched.fish

  # PowerShell
  kubectl sched completion powershell | Out-String | Invoke-Expression

  # Complete 'kubectl sched <TAB>' through kubectl (1.26+): put kubectl_complete-sched
  # (in the release archive and the repository's completions/) on your PATH
  install -m 0755 completions/kubectl_complete-sched /usr/local/bin/`

// KubectlPluginCompletion is completions/kubectl_complete-sched: kubectl
// (1.26 and later) runs an executable of this name, found on PATH, to
// complete `kubectl sched <TAB>`.
const KubectlPluginCompletion = `#!/usr/bin/env sh
# kubectl's plugin completion: with this file on your PATH (next to
# kubectl-sched), 'kubectl sched <TAB>' completes as 'kubectl-sched <TAB>'
# does. Generated by 'make completions'; do not edit.
exec kubectl-sched __complete "$@"
`

// CompletionScript is one file under completions/.
type CompletionScript struct {
	// Name is the file name under completions/.
	Name string
	// Shell is what `kubectl sched completion SHELL` takes; "" for the
	// kubectl plugin completion script.
	Shell string
	// Mode is the file's permission bits.
	Mode uint32
}

// CompletionScripts are the files `make completions` writes.
var CompletionScripts = []CompletionScript{
	{Name: "kubectl-sched.bash", Shell: "bash", Mode: 0o644},
	{Name: "_kubectl-sched", Shell: "zsh", Mode: 0o644},
	{Name: "kubectl-sched.fish", Shell: "fish", Mode: 0o644},
	{Name: "kubectl-sched.ps1", Shell: "powershell", Mode: 0o644},
	{Name: "kubectl_complete-sched", Mode: 0o755},
}

// GenCompletion renders one completion script for the command tree of
// root (NewRootCmd): the same script `kubectl sched completion SHELL`
// prints, with descriptions.
func GenCompletion(root *cobra.Command, sc CompletionScript) ([]byte, error) {
	var buf bytes.Buffer
	var err error
	var w io.Writer = &buf
	switch sc.Shell {
	case "bash":
		err = root.GenBashCompletionV2(w, true)
	case "zsh":
		err = root.GenZshCompletion(w)
	case "fish":
		err = root.GenFishCompletion(w, true)
	case "powershell":
		err = root.GenPowerShellCompletionWithDesc(w)
	case "":
		_, err = io.WriteString(w, KubectlPluginCompletion)
	default:
		err = fmt.Errorf("unknown shell %q", sc.Shell)
	}
	return buf.Bytes(), err
}

// nodeLabelKeys completes --group-by with the label keys of the nodes.
func (s completionSource) nodeLabelKeys(cmd *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
	nodes, err := s.nodes()
	if err != nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	keys := sets.New[string]()
	for _, n := range nodes {
		for k := range n.Labels {
			keys.Insert(k)
		}
	}
	return matching(sets.List(keys), toComplete, ""), cobra.ShellCompDirectiveNoFileComp
}

// nodeSelector completes a node label selector: the label keys of the
// nodes, then, after "KEY=", the values the nodes have for it (after a
// comma, the next requirement).
func (s completionSource) nodeSelector(cmd *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
	const none = cobra.ShellCompDirectiveNoFileComp
	done, last := "", toComplete
	if i := strings.LastIndex(toComplete, ","); i >= 0 {
		done, last = toComplete[:i+1], toComplete[i+1:]
	}
	key, _, hasValue := strings.Cut(last, "=")
	if !hasValue {
		keys, dir := s.nodeLabelKeys(cmd, args, last)
		out := make([]string, len(keys))
		for i, k := range keys {
			out[i] = done + k + "="
		}
		// The value comes next: no space after the key.
		return out, dir | cobra.ShellCompDirectiveNoSpace
	}
	nodes, err := s.nodes()
	if err != nil {
		return nil, none
	}
	values := sets.New[string]()
	for _, n := range nodes {
		if v, ok := n.Labels[key]; ok {
			values.Insert(v)
		}
	}
	return matching(sets.List(values), toComplete, done+key+"="), none
}

// namesNotGiven completes the names of kind not among the arguments
// already given (drain's nodes).
func (s completionSource) namesNotGiven(kind string) cobra.CompletionFunc {
	return func(cmd *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
		names, dir := s.names(kind)(cmd, args, toComplete)
		given := sets.New(args...)
		out := names[:0:0]
		for _, n := range names {
			if !given.Has(n) {
				out = append(out, n)
			}
		}
		return out, dir
	}
}
