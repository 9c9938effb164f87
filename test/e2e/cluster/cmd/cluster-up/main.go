// Command cluster-up starts a test control plane (etcd + kube-apiserver, and
// optionally kube-scheduler and fake nodes) and keeps it running until
// SIGTERM or SIGINT, for poking at by hand with kubectl and kubectl sched.
// hack/cluster.sh runs it in the background; see `make cluster-up`.
//
// In -dir it writes kubeconfig, cluster-up.pid and, once the cluster is ready,
// env (`export KUBECONFIG=...`); the control plane's own state and logs live
// in -dir/cluster until shutdown.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	"github.com/kubectl-sched/kubectl-sched/test/e2e/cluster"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintf(os.Stderr, "cluster-up: %v\n", err)
		os.Exit(1)
	}
}

func run() error {
	dir := flag.String("dir", "", "directory for the kubeconfig, pid file and cluster state (required)")
	nodes := flag.Int("nodes", 0, "number of fake nodes to create (GenerateNodes, seed 1)")
	scheduler := flag.Bool("scheduler", false, "also run the real kube-scheduler")
	schedulerConfig := flag.String("scheduler-config", "", "KubeSchedulerConfiguration for -scheduler (default profile if empty)")
	workloads := flag.Bool("workloads", false, "serve kube's Workload API (scheduling.k8s.io/v1beta1) with the gates "+cluster.WorkloadGates+", kube-scheduler's too")
	flag.Parse()
	if *dir == "" {
		return fmt.Errorf("-dir is required")
	}
	abs, err := filepath.Abs(*dir)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(abs, 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(abs, "cluster-up.pid"), []byte(strconv.Itoa(os.Getpid())+"\n"), 0o644); err != nil {
		return err
	}

	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP)
	defer stop()

	start := time.Now()
	opts := cluster.Options{StateDir: filepath.Join(abs, "cluster"), Progress: os.Stderr}
	if *workloads {
		opts.ExtraAPIServerArgs, opts.ExtraSchedulerArgs = cluster.WorkloadAPIServerArgs, cluster.WorkloadSchedulerArgs
	}
	c, err := cluster.Start(ctx, opts)
	if err != nil {
		return err
	}
	defer c.Stop()

	if *nodes > 0 {
		if err := cluster.CreateNodes(ctx, c.Client, cluster.Nodes(cluster.GenerateNodes(*nodes, cluster.GenerateOptions{Seed: 1}))); err != nil {
			return err
		}
		fmt.Fprintf(os.Stderr, "cluster-up: created %d nodes\n", *nodes)
	}
	if *scheduler {
		if _, err := c.StartScheduler(ctx, *schedulerConfig); err != nil {
			return err
		}
		fmt.Fprintln(os.Stderr, "cluster-up: kube-scheduler ready")
	}

	// A copy outside the state directory, so it survives until cluster-down.
	kubeconfig := filepath.Join(abs, "kubeconfig")
	b, err := os.ReadFile(c.Kubeconfig)
	if err != nil {
		return err
	}
	if err := os.WriteFile(kubeconfig, b, 0o600); err != nil {
		return err
	}
	line := "export KUBECONFIG=" + kubeconfig
	if err := os.WriteFile(filepath.Join(abs, "env"), []byte(line+"\n"), 0o644); err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "cluster-up: ready in %v at %s\n", time.Since(start).Round(time.Millisecond), c.Host)
	fmt.Println(line)

	// Stay up until told to stop, or until a control-plane program dies.
	procs := c.Processes()
	exited := make(chan string, len(procs))
	for _, p := range procs {
		go func() { <-p.Exited(); exited <- p.Name }()
	}
	select {
	case <-ctx.Done():
		fmt.Fprintln(os.Stderr, "cluster-up: stopping")
		return nil
	case name := <-exited:
		c.DumpLogs(os.Stderr, 40)
		return fmt.Errorf("%s exited; stopping the cluster", name)
	}
}
