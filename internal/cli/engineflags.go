package cli

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	configv1 "k8s.io/kube-scheduler/config/v1"

	"github.com/kubectl-sched/kubectl-sched/internal/engine"
	"github.com/kubectl-sched/kubectl-sched/internal/featuregates"
	"github.com/kubectl-sched/kubectl-sched/internal/kube"
	"github.com/kubectl-sched/kubectl-sched/internal/snapshot"
	"github.com/kubectl-sched/kubectl-sched/schedcore"
)

// The opening of every verb that runs the engine (dryrun, explain,
// capacity, drain, replay, compare, run): its flags — the
// KubeSchedulerConfiguration, the cluster dump, the feature gates, the
// seed — and load, which reads them in one order with one mapping of
// errors, so the verbs differ only in what they do with the engine.

// dumpFlag is how a verb takes the cluster dump.
type dumpFlag int

const (
	// noDump: the verb reads no dump (run schedules the cluster).
	noDump dumpFlag = iota
	// dumpOrCluster: --snapshot, else the cluster of the kubeconfig,
	// listed once (explain, capacity, drain; their -f is something else).
	dumpOrCluster
	// dumpFiles: -f/--filename, where -f has always meant the dump
	// (dryrun; replay's and compare's dump and trace), with --snapshot
	// the same flag under the name the other verbs give it.
	dumpFiles
)

// featureGatesUsage is --feature-gates' help, the same in every verb (so
// a global settings key sets it in each).
const featureGatesUsage = "Feature gates as kube-scheduler v1.37.2 takes them: NAME=true|false pairs, comma-separated (repeatable; the gates that change a decision: docs/config.md#feature-gates)"

// aliasAnnotation marks a flag that is another name of a flag (its
// value): settings and help treat the flag it names.
const aliasAnnotation = "kubectl-sched/alias-of"

// engineFlags are the flags the engine verbs share, and their loading.
// A verb fills in the unexported fields (what it takes), then AddFlags
// registers the flags and load reads them.
type engineFlags struct {
	genericiooptions.IOStreams
	settings Settings
	// kube reaches the cluster for dumpOrCluster without --snapshot.
	kube *genericclioptions.ConfigFlags

	ConfigPath   string
	Snapshots    []string
	FeatureGates []string
	Seed         int64

	dump dumpFlag
	// filesUsage is -f/--filename's help (dumpFiles).
	filesUsage string
	// seedUsage is --seed's help; "" for no --seed.
	seedUsage string
	// noConfig: the verb has its own --config (compare's, repeatable).
	noConfig bool
	// readsFiles: the verb reads its files itself (replay's trace;
	// compare's, after its configurations): load leaves Cluster nil.
	readsFiles bool
	// ownProgress: the verb shows its own progress line while load lists
	// the cluster (capacity, drain).
	ownProgress bool
	// profiles name the default profile without --config (loadConfig).
	profiles []string
	// share: the pods and nodes of a dump share their equal parts as
	// they are decoded (snapshot.Cluster.Sharer), for a verb whose engine
	// changes none of them in place (dryrun, explain).
	share bool

	flags *pflag.FlagSet
}

// AddFlags registers the flags on cmd.
func (e *engineFlags) AddFlags(cmd *cobra.Command) {
	f := cmd.Flags()
	e.flags = f
	if !e.noConfig {
		f.StringVar(&e.ConfigPath, "config", "", "KubeSchedulerConfiguration file (kubescheduler.config.k8s.io/v1)")
		markConfigFile(cmd)
	}
	switch e.dump {
	case dumpOrCluster:
		f.StringArrayVar(&e.Snapshots, "snapshot", nil, "Cluster dump file or directory to read state from instead of the cluster (repeatable; '-' for stdin)")
		_ = cmd.MarkFlagFilename("snapshot", "yaml", "yml", "json")
	case dumpFiles:
		f.StringArrayVarP(&e.Snapshots, "filename", "f", nil, e.filesUsage)
		f.Var(alias{f, "filename"}, "snapshot", "The same as -f/--filename (the cluster dump is --snapshot in every verb)")
		_ = f.SetAnnotation("snapshot", aliasAnnotation, []string{"filename"})
		f.Lookup("snapshot").DefValue = "" // no "(default [])" in the help
		_ = cmd.MarkFlagFilename("filename", "yaml", "yml", "json")
		_ = cmd.MarkFlagFilename("snapshot", "yaml", "yml", "json")
	}
	f.StringArrayVar(&e.FeatureGates, "feature-gates", nil, featureGatesUsage)
	_ = cmd.RegisterFlagCompletionFunc("feature-gates", completeFeatureGates)
	if e.seedUsage != "" {
		f.Int64Var(&e.Seed, "seed", 0, e.seedUsage)
	}
}

// engineInput is what load read.
type engineInput struct {
	// Config is --config, or the defaults (nil with noConfig).
	Config   *configv1.KubeSchedulerConfiguration
	Registry schedcore.Registry
	Features schedcore.Features
	// Cluster is the dump, or the cluster listed once; nil for noDump
	// and readsFiles.
	Cluster *snapshot.Cluster
	// Source is "snapshot" or "cluster" (what Cluster is).
	Source string
	// UseSeed: --seed was given (else ties go to the lowest name).
	Seed    int64
	UseSeed bool
}

// load reads the flags: the feature gates first (bad ones stop the verb
// before any file is read), then the configuration, the registry and the
// cluster. Bad input is a usage error (exit code 2).
func (e *engineFlags) load(ctx context.Context) (*engineInput, error) {
	in := &engineInput{Seed: e.Seed, UseSeed: e.flags != nil && e.flags.Changed("seed")}
	var err error
	if in.Features, err = e.features(); err != nil {
		return nil, err
	}
	if !e.noConfig {
		if in.Config, err = loadConfigWithFeatures(e.ConfigPath, in.Features, e.profiles...); err != nil {
			return nil, err
		}
	}
	if in.Registry, err = engine.Registry(e.settings.ExtraPlugins); err != nil {
		return nil, err
	}
	switch {
	case e.dump == noDump || e.readsFiles:
	case len(e.Snapshots) > 0:
		if in.Cluster, err = loadDump(e.Snapshots, e.In, e.ErrOut, e.share); err != nil {
			return nil, err
		}
		in.Source = "snapshot"
	case e.dump == dumpOrCluster:
		if in.Cluster, err = e.listCluster(ctx); err != nil {
			return nil, err
		}
		in.Source = "cluster"
	}
	return in, nil
}

// features parses --feature-gates; kube's warnings (a GA or deprecated
// gate set) go to stderr, as kube-scheduler logs them.
func (e *engineFlags) features() (schedcore.Features, error) {
	g, err := featuregates.Parse(strings.Join(e.FeatureGates, ","))
	if err != nil {
		return schedcore.Features{}, UsageErrorf("--feature-gates: %v", err)
	}
	for _, w := range g.Warnings() {
		fmt.Fprintf(e.ErrOut, "warning: --feature-gates: %s\n", w)
	}
	return g.Features(), nil
}

// listCluster lists the state the engine reads from the cluster, once,
// through the same code path as kubectl sched snapshot -A.
func (e *engineFlags) listCluster(ctx context.Context) (*snapshot.Cluster, error) {
	clients, err := e.settings.clients(e.kube)
	if err != nil {
		return nil, err
	}
	if !e.ownProgress {
		var done func()
		ctx, done = listProgress(ctx, e.ErrOut)
		defer done()
	}
	return kube.ListCluster(ctx, clients, kube.ListOptions{})
}

// where names the cluster's source in errors: the dump's files, or the
// cluster.
func (e *engineFlags) where() string { return clusterWhere(e.Snapshots) }

// runError maps the errors of a run: an invalid scheduler configuration
// found when the profiles are built, and bad input files, are usage
// errors naming the file.
func (e *engineFlags) runError(err error) error {
	switch {
	case errors.Is(err, engine.ErrConfig):
		if e.noConfig {
			return AsUsage(err) // the verb's own --config names its files
		}
		return AsUsage(withConfigPath(e.ConfigPath, err))
	case errors.Is(err, snapshot.ErrInvalid):
		return AsUsage(err)
	}
	return err
}

// loadConfig loads --config, defaulted and validated as kube-scheduler
// does. Without it, the default profile is named after names: by
// default both default-scheduler and kubectl-sched (engine.AddRunProfile),
// so the offline verbs know the default scheduler's pods and run's, and
// predict what run does with them; run names it kubectl-sched alone, top
// the scheduler the pod it explains asks for. It is the one place a
// verb's default profile is named.
func loadConfig(path string, names ...string) (*configv1.KubeSchedulerConfiguration, error) {
	return loadConfigWithFeatures(path, schedcore.DefaultFeatures, names...)
}

// loadConfigWithFeatures is loadConfig with the default profile of the
// feature gates f (the --feature-gates of the verb).
func loadConfigWithFeatures(path string, f schedcore.Features, names ...string) (*configv1.KubeSchedulerConfiguration, error) {
	cfg, err := engine.LoadConfigWithFeatures(path, f)
	if err != nil {
		return nil, AsUsage(fmt.Errorf("loading config: %w", err))
	}
	switch {
	case path != "":
	case len(names) == 0:
		engine.AddRunProfile(cfg)
	default:
		base := cfg.Profiles[0]
		cfg.Profiles = nil
		for _, n := range names {
			p := base.DeepCopy()
			p.SchedulerName = &n
			cfg.Profiles = append(cfg.Profiles, *p)
		}
	}
	return cfg, nil
}

func withConfigPath(path string, err error) error {
	if path == "" {
		return err
	}
	return fmt.Errorf("%s: %w", path, err)
}

// alias is a second name of a flag: setting it sets the flag, which is
// then given as if by its own name (settings read that one).
type alias struct {
	fs   *pflag.FlagSet
	name string
}

func (a alias) Set(v string) error { return a.fs.Set(a.name, v) }
func (a alias) String() string     { return a.fs.Lookup(a.name).Value.String() }
func (a alias) Type() string       { return a.fs.Lookup(a.name).Value.Type() }

// completeFeatureGates completes --feature-gates: the gates that can be
// changed (not locked), as NAME=, then NAME=true and NAME=false, after the
// pairs already typed.
func completeFeatureGates(_ *cobra.Command, _ []string, toComplete string) ([]string, cobra.ShellCompDirective) {
	done, cur := "", toComplete
	if i := strings.LastIndex(toComplete, ","); i >= 0 {
		done, cur = toComplete[:i+1], toComplete[i+1:]
	}
	if name, _, ok := strings.Cut(cur, "="); ok {
		if g, known := featuregates.Lookup(name); known && !g.LockToDefault {
			return []string{done + name + "=true", done + name + "=false"}, cobra.ShellCompDirectiveNoFileComp
		}
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	var out []string
	for _, g := range featuregates.Known() {
		if !g.LockToDefault && strings.HasPrefix(g.Name, cur) {
			out = append(out, done+g.Name+"=")
		}
	}
	sort.Strings(out)
	return out, cobra.ShellCompDirectiveNoFileComp | cobra.ShellCompDirectiveNoSpace
}
