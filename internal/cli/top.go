package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/client-go/rest"
	configv1 "k8s.io/kube-scheduler/config/v1"
	"sigs.k8s.io/yaml"

	"github.com/kubectl-sched/kubectl-sched/internal/engine"
	"github.com/kubectl-sched/kubectl-sched/internal/explain"
	"github.com/kubectl-sched/kubectl-sched/internal/kube"
	"github.com/kubectl-sched/kubectl-sched/internal/report"
	"github.com/kubectl-sched/kubectl-sched/internal/top"
	"github.com/kubectl-sched/kubectl-sched/internal/tui"
	"github.com/kubectl-sched/kubectl-sched/schedcore"
)

// defaultSchedulerPort is kube-scheduler's secure port, where a
// --scheduler-pod without a port is scraped.
const defaultSchedulerPort = "10259"

// TopOptions are the settings of `kubectl sched top`.
type TopOptions struct {
	genericiooptions.IOStreams
	Settings    Settings
	ConfigFlags *genericclioptions.ConfigFlags

	MetricsURL       string
	SchedulerPod     string
	Interval         time.Duration
	Window           time.Duration
	Once             bool
	Output           string
	InsecureMetrics  bool
	ConfigPath       string
	AllNamespaces    bool
	SchedulerNames   []string
	metricsURLChosen bool

	source top.Source
	// features are the gates of the explain view (run --tui: run's;
	// zero: kube's defaults).
	features schedcore.Features
	// restConfig is nil without a usable kubeconfig; restErr says why.
	restConfig *rest.Config
	restErr    error
}

// NewCmdTop builds `kubectl sched top`.
func NewCmdTop(streams genericiooptions.IOStreams, settings Settings) *cobra.Command {
	o := &TopOptions{IOStreams: streams, Settings: settings, ConfigFlags: kube.NewConfigFlags(),
		MetricsURL: top.DefaultMetricsURL, Interval: tui.DefaultInterval, Window: top.DefaultWindow, Output: "json"}
	cmd := &cobra.Command{
		Use:   "top [--metrics-url URL | --scheduler-pod NS/NAME] [--once -o json]",
		Short: "Watch a scheduler's queue, attempts, latency and pending pods live in the terminal",
		Long: strings.TrimSpace(`
Scrape a scheduler's Prometheus /metrics every --interval and show, live:
pending pods per queue (active, backoff, unschedulable, gated) now and as
sparklines, how fast the queue fills (incoming pods/s) and drains (pods/s
popped, and bound), scheduling attempts per second by result, p50/p90/p99
latency over the --window of the pod scheduling SLI, the attempt duration,
each extension point and each plugin (from the increase of the histogram
buckets between scrapes, as Prometheus' histogram_quantile(rate(...))),
why pods wait (scheduler_unschedulable_pods by plugin) and preemption. With
a kubeconfig, a panel lists the scheduler's pending pods with their last
FailedScheduling message; Enter on one opens 'explain pod' inside the UI.

The metric names are kube-scheduler's, so top reads a local 'kubectl sched
run' (the default, http://127.0.0.1:10259/metrics), any URL, or a stock
kube-scheduler through the API server's pod proxy with the kubeconfig's
credentials (--scheduler-pod). An https --metrics-url is scraped with the
kubeconfig's client certificate or token.

--once scrapes twice, --interval apart, and prints one document (-o json or
yaml, which imply --once; schema in docs/top.md) instead of the UI; without
a terminal, --once is required.`),
		Example: `  # The local 'kubectl sched run'
  kubectl sched top

  # Any endpoint, every second
  kubectl sched top --metrics-url http://sched.example:10259/metrics --interval 1s

  # A stock kube-scheduler, through the API server
  kubectl sched top --scheduler-pod kube-system/kube-scheduler-node1

  # One sample for scripts
  kubectl sched top --once -o json | jq '.attempts'`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			o.metricsURLChosen = cmd.Flags().Changed("metrics-url")
			// -o is only for a printed sample: asking for a format asks
			// for one.
			o.Once = o.Once || cmd.Flags().Changed("output")
			if err := o.Validate(); err != nil {
				return err
			}
			if err := o.Complete(); err != nil {
				return err
			}
			ctx := cmd.Context()
			if ctx == nil {
				ctx = context.Background()
			}
			return o.Run(ctx)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.MetricsURL, "metrics-url", o.MetricsURL, "The scheduler's /metrics URL")
	f.StringVar(&o.SchedulerPod, "scheduler-pod", "", "Scrape NAMESPACE/[SCHEME:]POD[:PORT] through the API server's pod proxy (default scheme https, port "+defaultSchedulerPort+")")
	f.DurationVar(&o.Interval, "interval", o.Interval, "Time between scrapes")
	f.DurationVar(&o.Window, "window", o.Window, "How far back quantiles and sparklines look")
	f.BoolVar(&o.Once, "once", false, "Print one sample (two scrapes --interval apart) instead of the UI")
	f.StringVarP(&o.Output, "output", "o", o.Output, "Output format of --once: json or yaml (implies --once)")
	_ = cmd.RegisterFlagCompletionFunc("output", fixedCompletion(topFormats...))
	f.BoolVar(&o.InsecureMetrics, "metrics-insecure-skip-tls-verify", false, "Do not verify an https --metrics-url's certificate (kube-scheduler's is self-signed)")
	f.StringVar(&o.ConfigPath, "config", "", "KubeSchedulerConfiguration for the explain view (default: the default profile under the pod's schedulerName)")
	f.BoolVarP(&o.AllNamespaces, "all-namespaces", "A", false, "List pending pods of every namespace (the default unless -n is given)")
	f.StringSliceVar(&o.SchedulerNames, "scheduler-name", nil, "Pending pods of these schedulerNames (default: the profiles seen in the metrics)")
	o.ConfigFlags.AddFlags(f)
	return cmd
}

// topFormats are the formats of --once.
var topFormats = []string{"json", "yaml"}

// Validate checks the flags.
func (o *TopOptions) Validate() error {
	if o.Interval < 100*time.Millisecond {
		return UsageErrorf("--interval: must be at least 100ms, got %s", o.Interval)
	}
	if o.Window < o.Interval {
		return UsageErrorf("--window (%s) must not be shorter than --interval (%s)", o.Window, o.Interval)
	}
	if err := checkFormat(o.Output, topFormats, redirectHint); err != nil {
		return err
	}
	if o.SchedulerPod != "" && o.metricsURLChosen {
		return UsageErrorf("give --metrics-url or --scheduler-pod, not both")
	}
	if o.SchedulerPod != "" {
		if _, _, err := splitSchedulerPod(o.SchedulerPod); err != nil {
			return AsUsage(err)
		}
	} else if u, err := url.Parse(o.MetricsURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return UsageErrorf("--metrics-url: want an http:// or https:// URL, got %q", o.MetricsURL)
	}
	if !o.Once && !isTTY(o.Out) {
		return UsageErrorf("standard output is not a terminal: use --once (or -o json)")
	}
	return nil
}

// splitSchedulerPod splits NAMESPACE/[SCHEME:]NAME[:PORT] into the
// namespace and the pod proxy id, with kube-scheduler's https and port by
// default.
func splitSchedulerPod(s string) (ns, id string, err error) {
	ns, rest, ok := strings.Cut(s, "/")
	if !ok || ns == "" || rest == "" {
		return "", "", fmt.Errorf("--scheduler-pod: want NAMESPACE/POD, got %q", s)
	}
	parts := strings.Split(rest, ":")
	var scheme, name, port string
	switch len(parts) {
	case 1:
		name = parts[0]
	case 2:
		if parts[0] == "http" || parts[0] == "https" {
			scheme, name = parts[0], parts[1]
		} else {
			name, port = parts[0], parts[1]
		}
	case 3:
		scheme, name, port = parts[0], parts[1], parts[2]
	default:
		return "", "", fmt.Errorf("--scheduler-pod: want NAMESPACE/[SCHEME:]POD[:PORT], got %q", s)
	}
	if scheme == "" {
		scheme = "https"
	}
	if port == "" {
		port = defaultSchedulerPort
	}
	if name == "" || (scheme != "http" && scheme != "https") {
		return "", "", fmt.Errorf("--scheduler-pod: want NAMESPACE/[http|https:]POD[:PORT], got %q", s)
	}
	return ns, scheme + ":" + name + ":" + port, nil
}

// given says whether a kubeconfig string flag was set.
func given(f *string) bool { return f != nil && *f != "" }

// Complete builds the source and, when the kubeconfig loads, the cluster
// access of the pods panel.
func (o *TopOptions) Complete() error {
	o.restConfig, o.restErr = kube.ToRESTConfig(o.ConfigFlags)
	if o.restErr != nil && (given(o.ConfigFlags.KubeConfig) || given(o.ConfigFlags.Context)) {
		// Without them a missing kubeconfig only leaves the pods panel
		// out; a kubeconfig or context asked for must load.
		return kube.KubeconfigError(o.restErr)
	}
	if o.SchedulerPod != "" {
		if o.restErr != nil {
			return fmt.Errorf("--scheduler-pod needs a kubeconfig: %w", o.restErr)
		}
		ns, id, _ := splitSchedulerPod(o.SchedulerPod)
		clients, err := o.Settings.clients(o.ConfigFlags)
		if err != nil {
			return err
		}
		o.source = &top.ProxySource{Client: clients.Kube.CoreV1().RESTClient(), Namespace: ns, Pod: id}
		return nil
	}
	client := &http.Client{Timeout: 10 * time.Second}
	if strings.HasPrefix(o.MetricsURL, "https://") {
		rt, err := o.metricsTransport()
		if err != nil {
			return err
		}
		client.Transport = rt
	}
	o.source = &top.HTTPSource{URL: o.MetricsURL, Client: client}
	return nil
}

// metricsTransport authenticates an https scrape with the kubeconfig's
// credentials, if any: kube-scheduler authorizes /metrics with them.
func (o *TopOptions) metricsTransport() (http.RoundTripper, error) {
	cfg := &rest.Config{}
	if o.restConfig != nil {
		cfg = rest.CopyConfig(o.restConfig)
	}
	cfg.Host = o.MetricsURL
	if o.InsecureMetrics {
		cfg.Insecure = true
		cfg.CAData, cfg.CAFile = nil, ""
	}
	rt, err := rest.TransportFor(cfg)
	if err != nil {
		return nil, fmt.Errorf("building the metrics transport: %w", err)
	}
	return rt, nil
}

// Run shows the UI, or prints one sample with --once.
func (o *TopOptions) Run(ctx context.Context) error {
	if o.Once {
		return o.runOnce(ctx)
	}
	m := tui.New(o.tuiOptions(ctx, nil))
	_, err := tea.NewProgram(m, tea.WithContext(ctx), tea.WithInput(o.In), tea.WithOutput(o.Out)).Run()
	if errors.Is(err, tea.ErrProgramKilled) && ctx.Err() != nil {
		return nil
	}
	return err
}

// tuiOptions wire the pods panel and the explain view to the cluster;
// cfg, when set, is the scheduler configuration to explain with.
func (o *TopOptions) tuiOptions(ctx context.Context, cfg *configv1.KubeSchedulerConfiguration) tui.Options {
	opts := tui.Options{Source: o.source, Interval: o.Interval, Window: o.Window, Context: ctx, NoSourceHint: o.noSourceHint()}
	if o.restErr != nil || o.restConfig == nil {
		opts.NoPods = fmt.Sprintf("no cluster access for the pending pods: %v", o.restErr)
		return opts
	}
	clients, err := o.Settings.clients(o.ConfigFlags)
	if err != nil {
		opts.NoPods = fmt.Sprintf("no cluster access for the pending pods: %v", err)
		return opts
	}
	ns := ""
	if n, explicit, err := kube.Namespace(o.ConfigFlags, false); err == nil && explicit && !o.AllNamespaces {
		ns = n
	}
	names := o.SchedulerNames
	opts.Pods = func(ctx context.Context, profiles []string) ([]top.PendingPod, error) {
		if len(names) > 0 {
			profiles = names
		}
		return top.ListPending(ctx, clients.Kube, ns, profiles, time.Now())
	}
	// The Workload API PodGroups the pending pods name: a scheduler with
	// GenericWorkload on queues each as one entity.
	opts.Groups = func(ctx context.Context, pods []top.PendingPod) ([]top.PendingGroup, error) {
		return top.ListPendingGroups(ctx, clients.Kube, ns, pods)
	}
	opts.Explain = func(ctx context.Context, namespace, name string, width int) (string, error) {
		return o.explainText(ctx, clients, cfg, namespace, name)
	}
	return opts
}

// explainText lists the cluster once and renders `explain pod` as a table.
func (o *TopOptions) explainText(ctx context.Context, clients *kube.Clients, cfg *configv1.KubeSchedulerConfiguration, namespace, name string) (string, error) {
	cl, err := kube.ListCluster(ctx, clients, kube.ListOptions{})
	if err != nil {
		return "", err
	}
	pod, err := explain.FindPod(cl, namespace, name)
	if err != nil {
		return "", err
	}
	if cfg == nil {
		// Without --config, the default profile under the name the pod
		// asks for (as `run` names its default profile kubectl-sched).
		var names []string
		if pod.Spec.SchedulerName != "" {
			names = []string{pod.Spec.SchedulerName}
		}
		if cfg, err = loadConfig(o.ConfigPath, names...); err != nil {
			return "", err
		}
	}
	reg, err := engine.Registry(o.Settings.ExtraPlugins)
	if err != nil {
		return "", err
	}
	rep, err := explain.Run(ctx, cl, pod, explain.Options{Config: cfg, Registry: reg, Features: o.features, Source: explain.SourceCluster, Live: true})
	if err != nil {
		return "", err
	}
	var b bytes.Buffer
	view := report.ExplainView{}
	if isTerminal(o.Out) {
		view.Styles = terminalStyles()
	}
	if err := report.WriteExplain(&b, rep, "table", view); err != nil {
		return "", err
	}
	return b.String(), nil
}

// noSourceHint tells the UI how to give top something to scrape.
func (o *TopOptions) noSourceHint() []string {
	if o.SchedulerPod != "" {
		return []string{
			"top scrapes the pod's /metrics through the API server's pod proxy (" + o.SchedulerPod + "): is it running, with that port and scheme?",
			"• Its pods: kubectl get pods -n kube-system -l component=kube-scheduler",
			"• Or scrape a URL: --metrics-url URL, or start kubectl-sched's own scheduler: kubectl sched run",
		}
	}
	return []string{
		"top reads a scheduler's Prometheus /metrics, and nothing answered there.",
		"• Start kubectl-sched's scheduler, which serves " + top.DefaultMetricsURL + ": kubectl sched run (or schedule and watch in one: kubectl sched run --tui)",
		"• Or point top at a scheduler: --metrics-url URL (kube-scheduler serves https://HOST:10259/metrics; with --metrics-insecure-skip-tls-verify for its self-signed certificate)",
		"• Or at kube-scheduler's pod through the API server: --scheduler-pod kube-system/kube-scheduler-NODE",
	}
}

// scrapeHint is the one-line form of noSourceHint, for --once.
func (o *TopOptions) scrapeHint() string {
	if o.SchedulerPod != "" {
		return "is the pod running, with that port and scheme? --metrics-url URL scrapes a URL instead"
	}
	return "start a scheduler with 'kubectl sched run', or point top at one with --metrics-url URL or --scheduler-pod NAMESPACE/POD"
}

// runOnce scrapes twice, --interval apart, and prints the stats.
func (o *TopOptions) runOnce(ctx context.Context) error {
	w := &top.Window{Span: o.Window}
	for i := 0; i < 2; i++ {
		if i > 0 {
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(o.Interval):
			}
		}
		s, err := o.source.Scrape(ctx)
		if err != nil {
			return fmt.Errorf("scraping %s: %w (%s)", o.source, err, o.scrapeHint())
		}
		w.Add(s)
	}
	st := top.Compute(w)
	st.Source = o.source.String()
	b, err := json.MarshalIndent(st, "", "  ")
	if err != nil {
		return err
	}
	if o.Output == "yaml" {
		if b, err = yaml.JSONToYAML(b); err != nil {
			return err
		}
	} else {
		b = append(b, '\n')
	}
	_, err = o.Out.Write(b)
	return err
}
