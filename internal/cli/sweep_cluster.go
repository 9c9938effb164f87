package cli

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/cli-runtime/pkg/genericclioptions"

	"github.com/kubectl-sched/kubectl-sched/internal/kube"
	"github.com/kubectl-sched/kubectl-sched/internal/sweep"
)

// The values of --dry-run, as kubectl's.
const (
	dryRunNone   = "none"
	dryRunClient = "client"
	dryRunServer = "server"
)

// clusterSweep are the settings of `sweep --on-cluster`: the study runs as
// a Kubernetes Indexed Job whose pods put each cell's result in a
// ConfigMap (docs/sweep.md, "On a cluster").
type clusterSweep struct {
	ConfigFlags *genericclioptions.ConfigFlags

	OnCluster      bool
	Image          string
	Name           string
	Parallelism    int32
	CellsPerPod    int
	ServiceAccount string
	ImageStudy     string
	DryRun         string
	Wait           bool
	CPU, Memory    string

	namespace string
	requests  v1.ResourceList
	// changed says whether a flag was given.
	changed func(string) bool
	// pollInterval is how often --wait looks at the results.
	pollInterval time.Duration
	newClients   func() (*kube.Clients, error)
}

func (c *clusterSweep) init(settings Settings) {
	c.ConfigFlags = kube.NewConfigFlags()
	c.DryRun = dryRunNone
	c.Wait = true
	c.pollInterval = 2 * time.Second
	c.newClients = func() (*kube.Clients, error) { return settings.clients(c.ConfigFlags) }
}

func (c *clusterSweep) addFlags(cmd *cobra.Command) {
	f := cmd.Flags()
	c.changed = f.Changed
	f.BoolVar(&c.OnCluster, "on-cluster", false, "Run the study on the cluster as an Indexed Job (one pod per cell, or per --cells-per-pod), each cell's result in a ConfigMap; with --collect, merge those results")
	f.StringVar(&c.Image, "image", "", "With --on-cluster: the image the Job's pods run, with kubectl-sched as its entrypoint (docs/operations.md)")
	f.StringVar(&c.Name, "name", "", "With --on-cluster: the Job's name; its ConfigMaps, ServiceAccount and Role are named after it (default: sweep-<study file's name>)")
	f.Int32Var(&c.Parallelism, "parallelism", 0, "With --on-cluster: the Job's pods at once (default 1)")
	f.IntVar(&c.CellsPerPod, "cells-per-pod", 1, "With --on-cluster: the cells each index of the Job runs (--cell I runs cells I*N to I*N+N-1)")
	f.StringVar(&c.ServiceAccount, "service-account", "", "With --on-cluster: an existing ServiceAccount for the pods, allowed to create and get ConfigMaps (default: one is made, with its Role and RoleBinding)")
	f.StringVar(&c.ImageStudy, "image-study", "", "With --on-cluster: the study file's path in the image, for a study too large for ConfigMaps (no study ConfigMap is made)")
	f.StringVar(&c.DryRun, "dry-run", c.DryRun, `With --on-cluster: "client" prints the objects (-o yaml|json) without creating them, "server" has the API server check them without keeping them`)
	f.BoolVar(&c.Wait, "wait", c.Wait, "With --on-cluster: wait for every cell's result, then print the merged results as a local sweep does (--wait=false returns once the Job is created)")
	f.StringVar(&c.CPU, "cpu", "1", "With --on-cluster: each pod's cpu request (its cells run one after another, each on one core)")
	f.StringVar(&c.Memory, "memory", "", "With --on-cluster: each pod's memory request (default: none)")
	c.ConfigFlags.AddFlags(f)
}

// clusterOnly are the flags that go with --on-cluster only.
var clusterOnly = []string{"image", "name", "parallelism", "cells-per-pod", "service-account", "image-study", "dry-run", "wait", "cpu", "memory"}

func (c *clusterSweep) validateLocal() error {
	if c.changed != nil {
		for _, name := range clusterOnly {
			if c.changed(name) {
				return UsageErrorf("--%s goes with --on-cluster", name)
			}
		}
	}
	return nil
}

// validateCluster checks the flags of --on-cluster before anything is
// read or created.
func (o *SweepOptions) validateCluster() error {
	c := &o.Cluster
	ns, _, err := kube.Namespace(c.ConfigFlags, true)
	if err != nil {
		return err
	}
	if errs := validation.IsDNS1123Label(ns); len(errs) > 0 {
		return UsageErrorf("--namespace %q: %s", ns, errs[0])
	}
	c.namespace = ns
	if c.Name == "" {
		c.Name = sweep.DefaultName(o.Filename)
	}
	if err := sweep.CheckName(c.Name); err != nil {
		return UsageErrorf("%v", err)
	}
	if c.CellsPerPod < 1 {
		return UsageErrorf("--cells-per-pod %d: at least 1", c.CellsPerPod)
	}
	if c.Parallelism < 0 {
		return UsageErrorf("--parallelism %d: must not be negative", c.Parallelism)
	}
	c.requests = v1.ResourceList{}
	for _, r := range []struct {
		flag, value string
		name        v1.ResourceName
	}{{"--cpu", c.CPU, v1.ResourceCPU}, {"--memory", c.Memory, v1.ResourceMemory}} {
		if r.value == "" {
			continue
		}
		q, err := resource.ParseQuantity(r.value)
		if err != nil || q.Sign() < 0 {
			return UsageErrorf("%s %q: not a quantity such as 1, 500m or 2Gi", r.flag, r.value)
		}
		c.requests[r.name] = q
	}
	switch c.DryRun {
	case dryRunNone, dryRunClient, dryRunServer:
	default:
		return UsageErrorf(`--dry-run %q: want "none", "client" or "server"`, c.DryRun)
	}
	creating := !o.Collect && len(o.Cells) == 0
	if o.Resume && !creating {
		return UsageErrorf("--resume goes with creating the Job (it keeps the results of an earlier one), not with --collect or --cell")
	}
	switch {
	case creating && c.Image == "":
		return UsageErrorf("--on-cluster: --image is required: an image with kubectl-sched as its entrypoint (docs/operations.md)")
	case !creating && c.DryRun != dryRunNone:
		return UsageErrorf("--dry-run goes with creating the Job, not with --collect or --cell")
	case !creating && c.Image != "":
		return UsageErrorf("--image goes with creating the Job, not with --collect or --cell")
	case c.DryRun != dryRunNone:
		if err := checkFormat(o.Output, []string{"table", "yaml", "json"}, ""); err != nil {
			return err
		}
		if o.HTML != "" {
			return UsageErrorf("--html goes with the merged results, not with --dry-run")
		}
	}
	return nil
}

// runCluster runs the cluster mode: a pod's share (--cell), a collection
// (--collect), or the Job's creation, then the wait and the merge.
func (o *SweepOptions) runCluster(ctx context.Context, plan *sweep.Plan) error {
	c := &o.Cluster
	if len(o.Cells) > 0 {
		var only []int
		for _, i := range o.Cells {
			if i < 0 || i >= sweep.Completions(len(plan.Cells), c.CellsPerPod) {
				return UsageErrorf("--cell %d: the study has %d cells, %d indexes of %d cells (0 to %d)", i, len(plan.Cells), sweep.Completions(len(plan.Cells), c.CellsPerPod), c.CellsPerPod, sweep.Completions(len(plan.Cells), c.CellsPerPod)-1)
			}
			only = append(only, sweep.ChunkCells(i, c.CellsPerPod, len(plan.Cells))...)
		}
		clients, err := c.newClients()
		if err != nil {
			return err
		}
		err = plan.RunToCluster(ctx, clients.Kube, c.namespace, c.Name, sweep.RunOptions{Dir: o.Results, Workers: o.Workers, Only: only, CellDone: o.cellDone})
		if sweep.IsInput(err) {
			return AsUsage(err)
		}
		return err
	}
	if o.Collect {
		return o.collectCluster(ctx, plan)
	}
	objs, err := plan.ClusterObjects(sweep.ClusterOptions{
		Name: c.Name, Namespace: c.namespace, Image: c.Image, Parallelism: c.Parallelism,
		CellsPerPod: c.CellsPerPod, ServiceAccount: c.ServiceAccount, ImageStudy: c.ImageStudy,
		Requests: c.requests,
	})
	if err != nil {
		return AsUsage(err)
	}
	if c.DryRun == dryRunClient {
		if o.Output == "table" {
			for _, obj := range objs.List() {
				fmt.Fprintf(o.Out, "%s created (dry run)\n", objectRef(obj.GetObjectKind().GroupVersionKind().Kind, nameOf(obj)))
			}
			return nil
		}
		data, err := objs.Marshal(o.Output)
		if err != nil {
			return err
		}
		_, err = o.Out.Write(data)
		return err
	}
	clients, err := c.newClients()
	if err != nil {
		return err
	}
	if err := plan.Preflight(ctx, clients.Kube, objs, o.Resume); err != nil {
		if sweep.IsInput(err) {
			return AsUsage(err)
		}
		return err
	}
	suffix := ""
	if c.DryRun == dryRunServer {
		suffix = " (server dry run)"
	}
	err = sweep.Create(ctx, clients.Kube, objs, c.DryRun == dryRunServer, func(kind, name string) {
		fmt.Fprintf(o.ErrOut, "%s created%s\n", objectRef(kind, name), suffix)
	})
	if err != nil {
		return err
	}
	if c.DryRun == dryRunServer {
		return nil
	}
	collect := fmt.Sprintf("kubectl sched sweep -f %s --on-cluster --collect -n %s --name %s", o.Filename, c.namespace, c.Name)
	if !c.Wait {
		fmt.Fprintf(o.ErrOut, "%d cells in %d indexes; when the Job is done: %s\n", len(plan.Cells), sweep.Completions(len(plan.Cells), c.CellsPerPod), collect)
		return nil
	}
	progress := newProgress(o.ErrOut, "waiting for the Job's cells")
	err = plan.Wait(ctx, clients.Kube, clients.Metadata, c.namespace, c.Name, c.pollInterval, progress.cells)
	progress.done()
	if err != nil {
		if ctx.Err() != nil {
			return fmt.Errorf("stopped waiting (the Job goes on; when it is done: %s): %w", collect, err)
		}
		return err
	}
	return o.collectCluster(ctx, plan)
}

// collectCluster merges the results on the cluster and prints them.
func (o *SweepOptions) collectCluster(ctx context.Context, plan *sweep.Plan) error {
	clients, err := o.Cluster.newClients()
	if err != nil {
		return err
	}
	merged, err := plan.Collect(ctx, clients.Kube, o.Cluster.namespace, o.Cluster.Name)
	if err != nil {
		if sweep.IsInput(err) {
			return AsUsage(err)
		}
		return err
	}
	return o.print(merged)
}

func nameOf(obj runtime.Object) string {
	m, err := meta.Accessor(obj)
	if err != nil {
		return ""
	}
	return m.GetName()
}

// objectRef is kubectl's resource/name: configmap/x, job.batch/y.
func objectRef(kind, name string) string {
	group := map[string]string{"Job": ".batch", "Role": ".rbac.authorization.k8s.io", "RoleBinding": ".rbac.authorization.k8s.io"}[kind]
	return strings.ToLower(kind) + group + "/" + name
}
