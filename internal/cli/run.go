package cli

import (
	"context"
	"errors"
	goflag "flag"
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/klog/v2"
	configv1 "k8s.io/kube-scheduler/config/v1"

	"github.com/kubectl-sched/kubectl-sched/internal/engine"
	"github.com/kubectl-sched/kubectl-sched/internal/kube"
	"github.com/kubectl-sched/kubectl-sched/internal/live"
	"github.com/kubectl-sched/kubectl-sched/internal/top"
	"github.com/kubectl-sched/kubectl-sched/internal/tui"
	"github.com/kubectl-sched/kubectl-sched/schedcore"
)

// DefaultSyncTimeout is how long run waits for the informers' first sync
// before it gives up (--sync-timeout): long enough to list a cluster of
// 50,000 pods, short enough that a wrong server or missing permissions
// end in an error rather than a silent wait.
const DefaultSyncTimeout = 2 * time.Minute

// DefaultRunSchedulerName is the profile name `run` schedules for when no
// --config is given: pods opt in with spec.schedulerName: kubectl-sched, so
// kubectl-sched runs beside the cluster's kube-scheduler without fighting it.
// dryrun and explain know it too (engine.AddRunProfile).
const DefaultRunSchedulerName = engine.RunSchedulerName

// kube-scheduler's clientConnection defaults.
const (
	defaultQPS         = 50
	defaultBurst       = 100
	defaultContentType = "application/vnd.kubernetes.protobuf"
)

// RunOptions are the settings of `kubectl sched run`.
type RunOptions struct {
	genericiooptions.IOStreams
	Settings    Settings
	ConfigFlags *genericclioptions.ConfigFlags

	LeaderElect         bool
	LeaseName           string
	LeaseNamespace      string
	MetricsBindAddress  string
	ShutdownGracePeriod time.Duration
	SyncTimeout         time.Duration
	Verbosity           int
	// TUI shows `top` on the terminal, fed in-process, while scheduling.
	TUI bool

	engine         engineFlags
	leaderElectSet bool
	config         *configv1.KubeSchedulerConfiguration
	registry       schedcore.Registry
	features       schedcore.Features
	election       live.LeaderElection
	leaderElect    bool
}

// NewCmdRun builds `kubectl sched run`.
func NewCmdRun(streams genericiooptions.IOStreams, settings Settings) *cobra.Command {
	o := &RunOptions{
		IOStreams:           streams,
		Settings:            settings,
		ConfigFlags:         genericclioptions.NewConfigFlags(true),
		MetricsBindAddress:  live.DefaultMetricsBindAddress,
		ShutdownGracePeriod: live.DefaultShutdownGracePeriod,
		SyncTimeout:         DefaultSyncTimeout,
	}
	// Without --config, the one profile is kubectl-sched.
	o.engine = engineFlags{IOStreams: streams, settings: settings, dump: noDump, profiles: []string{DefaultRunSchedulerName}}
	cmd := &cobra.Command{
		Use:   "run [--config FILE] [--leader-elect]",
		Short: "Run the engine as a scheduler on a live cluster",
		Long: strings.TrimSpace(`
Schedule the pods of a cluster: pods whose spec.schedulerName is one of the
profiles are queued by priority, filtered, scored, reserved, permitted and
bound through the pods/binding subresource, exactly as kube-scheduler v1.37
does. Failures set the pod's PodScheduled condition (reason Unschedulable,
the full "0/N nodes are available: ..." message) and record a
FailedScheduling event; bindings record a Scheduled event, so 'kubectl
describe pod' reads as with kube-scheduler.

Without --config the one profile is named kubectl-sched, so it runs beside
the cluster's kube-scheduler and schedules only the pods that ask for it
(spec.schedulerName: kubectl-sched). With --config the profiles are taken as
written, with kube-scheduler's defaulting (a single unnamed profile is
default-scheduler: then stop kube-scheduler first). Client QPS and burst
come from the config's clientConnection (default 50 and 100).

With --leader-elect, instances elect a leader on a Lease (kube's 15s lease,
10s renew deadline, 2s retry; from the config's leaderElection, lease
kube-system/kubectl-sched by default): exactly one schedules, the others
stand by with warm caches. With --config, leaderElection.leaderElect (default
true, as in kube) decides unless --leader-elect is given.

/metrics (kube-scheduler's metric names, types, labels and buckets),
/healthz, /readyz and /livez are served over plain HTTP on
--metrics-bind-address (loopback by default; "0" turns it off).

--tui shows 'kubectl sched top' of this scheduler in the terminal, read
from its metrics registry in-process (logs are then discarded); quitting
the UI stops the scheduler.

Failures to reach the API server are logged as they happen (then at most
every 10s while they last), and every 10s while the informers have not
listed the cluster run logs the kinds it waits for. If they have not within
--sync-timeout (default 2m; 0 waits forever, as kube-scheduler), run exits
with code 1 and the last failure. --config is checked before the cluster is
contacted: a bad configuration exits with code 2.

SIGINT or SIGTERM stops taking pods, lets in-flight bindings finish (up to
--shutdown-grace-period), releases the lease and exits 0. During start-up,
before the informers have listed the cluster, either ends run at once with
one line saying what it was waiting for, and exit code 130 (SIGINT) or 143
(SIGTERM).`),
		Example: `  # Schedule pods with schedulerName: kubectl-sched, beside kube-scheduler
  kubectl sched run

  # Your own profiles, two replicas with leader election
  kubectl sched run --config sched-config.yaml --leader-elect

  # Schedule and watch the queue in one process
  kubectl sched run --tui

  # Another cluster, metrics on all interfaces
  kubectl sched run --context staging --metrics-bind-address 0.0.0.0:10259`,
		Args:              cobra.NoArgs,
		ValidArgsFunction: cobra.NoFileCompletions,
		RunE: func(cmd *cobra.Command, args []string) error {
			o.leaderElectSet = cmd.Flags().Changed("leader-elect")
			if err := o.Complete(); err != nil {
				return err
			}
			if err := o.Validate(); err != nil {
				return err
			}
			ctx := cmd.Context()
			if ctx == nil {
				ctx = context.Background()
			}
			ctx, stop := notifyContext(ctx)
			defer stop()
			return o.Run(ctx)
		},
	}
	f := cmd.Flags()
	o.engine.AddFlags(cmd)
	f.BoolVar(&o.LeaderElect, "leader-elect", false, "Elect a leader among instances on a Lease before scheduling (default: off, or the config's leaderElection.leaderElect with --config)")
	f.StringVar(&o.LeaseName, "leader-elect-resource-name", "", "Name of the Lease (default: the config's, else "+live.DefaultResourceName+")")
	f.StringVar(&o.LeaseNamespace, "leader-elect-resource-namespace", "", "Namespace of the Lease (default: the config's, else "+live.DefaultResourceNamespace+")")
	f.StringVar(&o.MetricsBindAddress, "metrics-bind-address", o.MetricsBindAddress, "host:port for /metrics, /healthz, /readyz, /livez (plain HTTP); \"0\" disables")
	f.DurationVar(&o.ShutdownGracePeriod, "shutdown-grace-period", o.ShutdownGracePeriod, "How long a shutdown waits for in-flight bindings")
	f.DurationVar(&o.SyncTimeout, "sync-timeout", o.SyncTimeout, "Exit (code 1) if the informers have not synced with the API server within this time; 0 waits forever")
	f.BoolVar(&o.TUI, "tui", false, "Show the top UI (queue, attempts, latency, pending pods) of this scheduler while it runs")
	f.IntVarP(&o.Verbosity, "v", "v", 0, "Log verbosity (klog levels: 2 placements, 3 queue events, 4+ debugging)")
	o.ConfigFlags.AddFlags(f)
	registerKubeFlagCompletion(cmd, completionSource{settings: settings, flags: o.ConfigFlags})
	return cmd
}

// Complete loads the configuration, builds its profiles once to check them
// (before the kubeconfig is read or the cluster contacted), and works out
// the leader election.
func (o *RunOptions) Complete() error {
	in, err := o.engine.load(context.Background())
	if err != nil {
		return err
	}
	cfg := in.Config
	if _, err := engine.BuildProfiles(context.Background(), engine.Options{Config: cfg, Registry: in.Registry, Features: in.Features}, schedcore.NewEmptySnapshot(), engine.Driver{}); err != nil {
		return AsUsage(withConfigPath(o.engine.ConfigPath, err))
	}
	o.registry, o.features = in.Registry, in.Features
	cc := &cfg.ClientConnection
	if cc.QPS == 0 {
		cc.QPS = defaultQPS
	}
	if cc.Burst == 0 {
		cc.Burst = defaultBurst
	}
	if cc.ContentType == "" {
		cc.ContentType = defaultContentType
	}
	// kube-scheduler reads its kubeconfig from the config; a flag wins.
	if cc.Kubeconfig != "" && (o.ConfigFlags.KubeConfig == nil || *o.ConfigFlags.KubeConfig == "") {
		path := cc.Kubeconfig
		o.ConfigFlags.KubeConfig = &path
	}
	o.config = cfg
	var fromConfig bool
	o.election, fromConfig = live.LeaderElectionFromConfig(*cfg)
	switch {
	case o.leaderElectSet:
		o.leaderElect = o.LeaderElect
	case o.engine.ConfigPath != "":
		o.leaderElect = fromConfig
	}
	if o.LeaseName != "" {
		o.election.ResourceName = o.LeaseName
	}
	if o.LeaseNamespace != "" {
		o.election.ResourceNamespace = o.LeaseNamespace
	}
	if o.leaderElect {
		if err := o.election.Validate(); err != nil {
			return AsUsage(withConfigPath(o.engine.ConfigPath, err))
		}
	}
	return nil
}

// Validate checks the flags.
func (o *RunOptions) Validate() error {
	if a := o.MetricsBindAddress; a != "" && a != "0" {
		if _, port, err := net.SplitHostPort(a); err != nil {
			return UsageErrorf("--metrics-bind-address: %v", err)
		} else if _, err := strconv.ParseUint(port, 10, 16); err != nil {
			return UsageErrorf("--metrics-bind-address: bad port %q", port)
		}
	}
	if o.ShutdownGracePeriod < 0 {
		return UsageErrorf("--shutdown-grace-period: must not be negative")
	}
	if o.SyncTimeout < 0 {
		return UsageErrorf("--sync-timeout: must not be negative (0 waits forever)")
	}
	if o.Verbosity < 0 {
		return UsageErrorf("-v: must not be negative")
	}
	if o.TUI && !isTTY(o.Out) {
		return UsageErrorf("--tui: standard output is not a terminal")
	}
	return nil
}

// Run connects and schedules until ctx ends.
func (o *RunOptions) Run(ctx context.Context) error {
	var fs goflag.FlagSet
	klog.InitFlags(&fs)
	_ = fs.Set("v", strconv.Itoa(o.Verbosity))
	// The logs go to the verb's stderr (the process's, but for tests), all
	// of them there only.
	_ = fs.Set("logtostderr", "false")
	_ = fs.Set("stderrthreshold", "FATAL")
	_ = fs.Set("one_output", "true")
	klog.SetOutput(o.ErrOut)
	defer func() { // klog's defaults again, for whoever runs verbs in-process next
		_ = fs.Set("logtostderr", "true")
		_ = fs.Set("stderrthreshold", "ERROR")
		_ = fs.Set("one_output", "false")
		klog.SetOutput(os.Stderr)
	}()
	logger := klog.NewKlogr()

	cc := o.config.ClientConnection
	restCfg, err := kube.RESTConfig(o.ConfigFlags, cc.QPS, cc.Burst)
	if err != nil {
		return err
	}
	restCfg.ContentType = cc.ContentType
	restCfg.AcceptContentTypes = cc.AcceptContentTypes
	reporter := &kube.ConnectionReporter{Server: restCfg.Host, Logger: logger}
	restCfg.Wrap(reporter.Wrap)
	lo := live.Options{
		Config:              o.config,
		Registry:            o.registry,
		Features:            o.features,
		RESTConfig:          restCfg,
		LeaderElect:         o.leaderElect,
		LeaderElection:      o.election,
		MetricsBindAddress:  o.MetricsBindAddress,
		ShutdownGracePeriod: o.ShutdownGracePeriod,
		SyncTimeout:         o.SyncTimeout,
		Logger:              logger,
	}
	logger.Info("Connecting to the API server", "server", restCfg.Host, "syncTimeout", o.SyncTimeout.String())
	if o.TUI {
		err = o.runWithTUI(ctx, lo)
	} else {
		err = live.Run(ctx, lo)
	}
	switch {
	case errors.Is(err, engine.ErrConfig):
		return AsUsage(withConfigPath(o.engine.ConfigPath, err))
	case errors.Is(err, live.ErrSyncTimeout):
		if last := reporter.Err(); last != nil {
			return fmt.Errorf("%s: not ready after --sync-timeout %s: %w (last failure: %v)", restCfg.Host, o.SyncTimeout, err, last)
		}
		return fmt.Errorf("%s: not ready after --sync-timeout %s: %w", restCfg.Host, o.SyncTimeout, err)
	case errors.Is(err, live.ErrStartupInterrupted):
		if last := reporter.Err(); last != nil {
			return fmt.Errorf("%s: %w (last failure: %v)", restCfg.Host, err, last)
		}
		return fmt.Errorf("%s: %w", restCfg.Host, err)
	case err != nil:
		return err
	}
	return nil
}

// runWithTUI runs the scheduler in the background and the top UI in the
// foreground, fed from the scheduler's registry; quitting the UI stops the
// scheduler, and a scheduler that stops ends the UI.
func (o *RunOptions) runWithTUI(ctx context.Context, lo live.Options) error {
	// Logs would scribble over the UI.
	klog.LogToStderr(false)
	klog.SetOutput(io.Discard)
	lo.Logger = logr.Discard()
	gatherers := make(chan prometheus.Gatherer, 1)
	lo.OnMetrics = func(g prometheus.Gatherer) { gatherers <- g }
	runCtx, stop := context.WithCancel(ctx)
	defer stop()
	done := make(chan error, 1)
	go func() { done <- live.Run(runCtx, lo) }()
	var g prometheus.Gatherer
	select {
	case g = <-gatherers:
	case err := <-done:
		return err
	}
	t := &TopOptions{IOStreams: o.IOStreams, Settings: o.Settings, ConfigFlags: o.ConfigFlags,
		Interval: tui.DefaultInterval, Window: top.DefaultWindow, source: &top.GathererSource{Gatherer: g}, features: o.features}
	t.restConfig, t.restErr = o.ConfigFlags.ToRESTConfig()
	p := tea.NewProgram(tui.New(t.tuiOptions(runCtx, o.config)), tea.WithContext(runCtx), tea.WithInput(o.In), tea.WithOutput(o.Out))
	var runErr error
	ended := make(chan struct{})
	go func() {
		defer close(ended)
		select {
		case runErr = <-done:
			done <- runErr
			p.Quit()
		case <-runCtx.Done():
		}
	}()
	_, uiErr := p.Run()
	stop()
	<-ended
	err := <-done
	if uiErr != nil && !errors.Is(uiErr, tea.ErrProgramKilled) {
		return uiErr
	}
	return err
}
