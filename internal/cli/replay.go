package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubectl-sched/kubectl-sched/internal/engine"
	"github.com/kubectl-sched/kubectl-sched/internal/gen/openb"
	"github.com/kubectl-sched/kubectl-sched/internal/memusage"
	"github.com/kubectl-sched/kubectl-sched/internal/replay"
	"github.com/kubectl-sched/kubectl-sched/internal/report"
	sharepkg "github.com/kubectl-sched/kubectl-sched/internal/share"
	"github.com/kubectl-sched/kubectl-sched/internal/snapshot"
)

// ReplayOptions are the settings of `kubectl sched replay`.
type ReplayOptions struct {
	genericiooptions.IOStreams
	Settings Settings

	OpenbNodes   string
	OpenbPods    string
	Output       string
	HTML         string
	Until        time.Duration
	WaitWindow   time.Duration
	NoPreemption bool

	engine engineFlags
}

// NewCmdReplay builds `kubectl sched replay`.
func NewCmdReplay(streams genericiooptions.IOStreams, settings Settings) *cobra.Command {
	o := &ReplayOptions{IOStreams: streams, Settings: settings, Output: "table"}
	o.engine = engineFlags{IOStreams: streams, settings: settings, dump: dumpFiles, readsFiles: true,
		filesUsage: "Cluster dump or trace file or directory (repeatable; '-' for stdin)",
		seedUsage:  "Break ties between equal best scores pseudo-randomly with this seed, and seed where the preemption scan starts"}
	cmd := &cobra.Command{
		Use:   "replay -f CLUSTER.yaml -f TRACE.yaml | --openb-nodes NODES.csv --openb-pods PODS.csv",
		Short: "Replay a workload over time on a virtual clock and chart what the scheduler did",
		Long: strings.TrimSpace(`
Replay a workload of arrivals and departures through the real scheduling
queue and cycle, on a virtual clock that jumps from event to event.

A trace is ordinary Kubernetes objects: a pod arrives at its
metadata.creationTimestamp and, if it has a metadata.deletionTimestamp,
leaves then (a pod still pending then is deleted from the queue). Nodes
arrive and leave the same way. Bound pods are running from their arrival;
the replay starts at the first pending pod's arrival, and whatever was
created before is the starting state. The Alibaba openb trace's CSVs are
read as they are with --openb-nodes and --openb-pods (mapping: docs/replay.md).

Between events the queue runs as kube-scheduler's does, in virtual time:
activeQ, backoff with kube's timings, the unschedulable pool and its
periodic flush, requeueing by the plugins' queueing hints when a pod leaves
or a node arrives, and preemption. A pod that did not fit at arrival is
placed when kube-scheduler would have retried it.

The output is a summary with the curves as terminal charts (-o table), the
event log, series and summary as JSON or YAML (a documented contract), or
the series as CSV (-o csv). --html writes a self-contained report with the
charts, the pending reasons over time and the busiest nodes.`),
		Example: `  # Replay a cluster dump and a trace of pods over time
  kubectl sched replay -f cluster.yaml -f trace.yaml

  # The Alibaba openb trace as it is, with an HTML report
  kubectl sched replay --openb-nodes openb_node_list_all_node.csv --openb-pods openb_pod_list_default.csv --html openb.html

  # The first day only, with your scheduler configuration
  kubectl sched replay -f cluster.yaml -f trace.yaml --config sched-config.yaml --until 24h

  # The time series as CSV, the event log as JSON (schema: docs/replay.md)
  kubectl sched replay -f cluster.yaml -f trace.yaml -o csv > series.csv
  kubectl sched replay -f cluster.yaml -f trace.yaml -o json | jq '.events[] | select(.type == "unschedulable")'`,
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
	f.StringVar(&o.OpenbNodes, "openb-nodes", "", "Alibaba openb node list CSV (sn,cpu_milli,memory_mib,gpu,model)")
	f.StringVar(&o.OpenbPods, "openb-pods", "", "Alibaba openb pod list CSV (name,cpu_milli,...,creation_time,deletion_time,...)")
	f.StringVarP(&o.Output, "output", "o", o.Output, "Output format: table, json, yaml or csv")
	f.StringVar(&o.HTML, "html", "", "Also write a self-contained HTML report to this file")
	f.DurationVar(&o.Until, "until", 0, "Stop this long after the start (default: when nothing is left to happen)")
	f.DurationVar(&o.WaitWindow, "wait-window", 0, "Window of the wait-time quantile curves (default: a fiftieth of the replay)")
	f.BoolVar(&o.NoPreemption, "no-preemption", false, "Turn PostFilter (preemption) off")
	_ = cmd.RegisterFlagCompletionFunc("output", fixedCompletion(report.ReplayFormats...))
	_ = cmd.MarkFlagFilename("openb-nodes", "csv")
	_ = cmd.MarkFlagFilename("openb-pods", "csv")
	_ = cmd.MarkFlagFilename("html", "html")
	return cmd
}

// Validate checks flags before anything is read.
func (o *ReplayOptions) Validate() error {
	if err := validateTraceFlags(o.engine.Snapshots, o.OpenbNodes, o.OpenbPods); err != nil {
		return err
	}
	if err := checkFormat(o.Output, report.ReplayFormats, replayOutputHint(o.Output)); err != nil {
		return err
	}
	if o.Until < 0 {
		return UsageErrorf("--until %s: must not be negative", o.Until)
	}
	if o.WaitWindow < 0 {
		return UsageErrorf("--wait-window %s: must not be negative", o.WaitWindow)
	}
	return checkOutputFile("--html", o.HTML)
}

// replayOutputHint is what -o FILE (or -o html) gets: the HTML report has
// its own flag, the rest is a redirect.
func replayOutputHint(value string) string {
	switch {
	case strings.EqualFold(value, "html"):
		return "the HTML report is written with --html report.html"
	case strings.EqualFold(filepath.Ext(value), ".html"), strings.EqualFold(filepath.Ext(value), ".htm"):
		return "the HTML report is written with --html %s"
	}
	return redirectHint
}

func validateTraceFlags(files []string, nodes, pods string) error {
	if (nodes == "") != (pods == "") {
		return UsageErrorf("--openb-nodes and --openb-pods go together")
	}
	if len(files) == 0 && nodes == "" {
		return UsageErrorf("-f/--filename (a cluster dump and trace) or --openb-nodes and --openb-pods are required")
	}
	return nil
}

func validIn(v string, values []string) bool {
	for _, x := range values {
		if x == v {
			return true
		}
	}
	return false
}

// loadTrace reads the trace from files and openb CSVs; bad input is a
// usage error (exit 2).
func loadTrace(files []string, nodesCSV, podsCSV string, stdin io.Reader) (*replay.Trace, []string, error) {
	// The cluster is the replay's own: its pods and nodes share their
	// equal parts as they are decoded (snapshot.Cluster.Sharer), so the
	// duplicates die young, and the trace's arrivals share them too
	// (Offline.Add).
	sh := sharepkg.New()
	cl := &snapshot.Cluster{Sharer: sh}
	if len(files) > 0 {
		if err := cl.AddPaths(files, stdin); err != nil {
			if errors.Is(err, snapshot.ErrInvalid) {
				return nil, nil, AsUsage(err)
			}
			return nil, nil, err
		}
	}
	if nodesCSV != "" {
		oo := openb.Options{Departures: true}
		nodes, pods, err := openb.LoadFiles(nodesCSV, podsCSV, oo)
		if err != nil {
			if errors.Is(err, openb.ErrInvalid) || errors.Is(err, os.ErrNotExist) {
				return nil, nil, AsUsage(err)
			}
			return nil, nil, err
		}
		for _, n := range nodes {
			sh.Node(n)
		}
		for _, p := range pods {
			sh.Pod(p)
		}
		cl.Nodes = append(cl.Nodes, nodes...)
		cl.Pods = append(cl.Pods, pods...)
		cl.Namespaces = append(cl.Namespaces, openb.NamespaceObject(oo))
	}
	tr, err := replay.FromCluster(cl)
	if err != nil {
		return nil, nil, AsUsage(err)
	}
	names := append([]string{}, files...)
	if nodesCSV != "" {
		names = append(names, nodesCSV, podsCSV)
	}
	inputs := strings.Join(names, ", ")
	if len(tr.Nodes) == 0 {
		return nil, nil, UsageErrorf("%s: %v", inputs, replay.ErrNoNodes)
	}
	if err := nodesAtStart(tr); err != nil {
		return nil, nil, AsUsage(fmt.Errorf("%s: %w", inputs, err))
	}
	return tr, cl.Warnings, nil
}

// nodesAtStart says, before the replay, that no node is there when it
// starts (a trace of arrivals given without the cluster it arrives in),
// and what to give.
func nodesAtStart(tr *replay.Trace) error {
	first := tr.Nodes[0].Arrive
	for _, n := range tr.Nodes {
		if !n.Arrive.After(tr.Start) {
			return nil
		}
		if n.Arrive.Before(first) {
			first = n.Arrive
		}
	}
	return fmt.Errorf("%w (it starts at %s, the first pending pod's arrival; the first node arrives at %s): give the nodes there from the start too, e.g. the cluster dump: -f cluster.yaml -f trace.yaml",
		replay.ErrNoNodesAtStart, tr.Start.UTC().Format(time.RFC3339), first.UTC().Format(time.RFC3339))
}

// Run loads, replays and prints. Everything is rendered before anything is
// written, so a failure leaves no partial report.
func (o *ReplayOptions) Run(ctx context.Context) error {
	if ctx == nil {
		ctx = context.Background()
	}
	in, err := o.engine.load(ctx)
	if err != nil {
		return err
	}
	tr, warnings, err := loadTrace(o.engine.Snapshots, o.OpenbNodes, o.OpenbPods, o.In)
	if err != nil {
		return err
	}
	cfg := in.Config
	ro := replay.Options{Options: engine.Options{Config: cfg, Registry: in.Registry, Features: in.Features, Seed: in.Seed, UseSeed: in.UseSeed, NoPreemption: o.NoPreemption}, Until: o.Until, WaitWindow: o.WaitWindow}
	// Only -o json and yaml print the event log.
	ro.NoUnschedulableEvents = o.Output != "json" && o.Output != "yaml"
	// A long replay holds much: its line says how much.
	progress := newProgress(o.ErrOut, "replaying").withMemory(memusage.Resident)
	ro.Progress = progress.steps
	res, err := replay.Run(ctx, tr, ro)
	progress.done()
	if err != nil {
		return o.engine.runError(err)
	}
	var out, page bytes.Buffer
	if err := report.WriteReplay(&out, res, o.Output); err != nil {
		return err
	}
	if o.HTML != "" {
		if err := report.WriteReplayHTML(&page, res); err != nil {
			return err
		}
		if err := writeOutputFile("--html", o.HTML, page.Bytes(), 0o644); err != nil {
			return err
		}
	}
	for _, w := range append(warnings, engine.UnservedWarnings(tr.Objects, cfg)...) {
		fmt.Fprintln(o.ErrOut, w)
	}
	_, err = o.Out.Write(out.Bytes())
	return err
}
