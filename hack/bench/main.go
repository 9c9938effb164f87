// Command bench measures the dry-run's throughput (pods/s) on the shipped
// snapshots and on generated workloads named after kube-scheduler's
// scheduler_perf ones. `make bench` runs it. Speed is measured here, never
// asserted in a test.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	configv1 "k8s.io/kube-scheduler/config/v1"

	"github.com/kubectl-sched/kubectl-sched/internal/dryrun"
	"github.com/kubectl-sched/kubectl-sched/internal/engine"
	"github.com/kubectl-sched/kubectl-sched/internal/report"
	"github.com/kubectl-sched/kubectl-sched/internal/snapshot"
	"github.com/kubectl-sched/kubectl-sched/schedcore"
)

type workload struct {
	name   string
	config string
	load   func() (*snapshot.Cluster, error)
}

func main() {
	only := flag.String("run", "", "only workloads whose name contains this")
	pct := flag.Int("percentage", 100, "percentageOfNodesToScore (100 = every node, kube's reference setting; 0 = kube's adaptive default)")
	repeat := flag.Int("count", 1, "runs per workload (the best is reported)")
	cpuprofile := flag.String("cpuprofile", "", "write a CPU profile of the runs to this file")
	flag.Parse()
	if *cpuprofile != "" {
		f, err := os.Create(*cpuprofile)
		if err != nil {
			fmt.Fprintln(os.Stderr, "bench:", err)
			os.Exit(2)
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			fmt.Fprintln(os.Stderr, "bench:", err)
			os.Exit(2)
		}
		defer pprof.StopCPUProfile()
	}

	var ws []workload
	dirs, _ := filepath.Glob("testdata/conformance/*/snapshot.json")
	sort.Strings(dirs)
	for _, d := range dirs {
		d := d
		dir := filepath.Dir(d)
		cfg := filepath.Join(dir, "config.yaml")
		if _, err := os.Stat(cfg); err != nil {
			cfg = ""
		}
		ws = append(ws, workload{name: "snapshot/" + filepath.Base(dir), config: cfg, load: func() (*snapshot.Cluster, error) {
			return snapshot.LoadPaths([]string{d}, nil)
		}})
	}
	ws = append(ws, generated()...)

	tw := tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "workload\tnodes\tpending\tscheduled\tseconds\tpods/s\theap MiB\t\n")
	for _, w := range ws {
		if *only != "" && !strings.Contains(w.name, *only) {
			continue
		}
		cl, err := w.load()
		if err != nil {
			fatal(w.name, err)
		}
		cfg, err := engine.LoadConfig(w.config)
		if err != nil {
			fatal(w.name, err)
		}
		p := int32(*pct)
		cfg.PercentageOfNodesToScore = &p
		for i := range cfg.Profiles {
			cfg.Profiles[i].PercentageOfNodesToScore = nil
		}
		reg, err := engine.Registry(nil)
		if err != nil {
			fmt.Fprintln(os.Stderr, "bench:", err)
			os.Exit(1)
		}
		best := time.Duration(1<<63 - 1)
		var sched, pending int
		var heap uint64
		for r := 0; r < *repeat; r++ {
			runtime.GC()
			rep, err := run(cl, cfg, reg)
			if err != nil {
				fmt.Fprintf(os.Stderr, "bench: %s: %v\n", w.name, err)
				os.Exit(1)
			}
			var ms runtime.MemStats
			runtime.ReadMemStats(&ms)
			heap = ms.HeapAlloc
			d := time.Duration(rep.Summary.DurationSeconds * float64(time.Second))
			if d < best {
				best = d
			}
			sched, pending = rep.Summary.Scheduled, rep.Summary.Pending
		}
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%.2f\t%.0f\t%d\t\n", w.name, len(cl.Nodes), pending, sched, best.Seconds(), float64(pending)/best.Seconds(), heap>>20)
	}
	_ = tw.Flush()
}

func run(cl *snapshot.Cluster, cfg *configv1.KubeSchedulerConfiguration, reg schedcore.Registry) (*report.DryRun, error) {
	return dryrun.Run(context.Background(), cl, dryrun.Options{Config: cfg, Registry: reg, NoPreemption: true})
}

// generated lists the generated workloads (filled in once the generators land).
func generated() []workload { return nil }

func fatal(name string, err error) {
	pprof.StopCPUProfile()
	fmt.Fprintf(os.Stderr, "bench: %s: %v\n", name, err)
	os.Exit(1)
}
