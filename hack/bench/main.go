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
	"syscall"
	"text/tabwriter"
	"time"

	configv1 "k8s.io/kube-scheduler/config/v1"

	"github.com/kubectl-sched/kubectl-sched/internal/dryrun"
	"github.com/kubectl-sched/kubectl-sched/internal/engine"
	workload_ "github.com/kubectl-sched/kubectl-sched/internal/gen/workload"
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
	limit := flag.Int("limit", 0, "place only the first N pending pods of each workload (for profiling)")
	memprofile := flag.String("memprofile", "", "write an allocation profile to this file at the end")
	what := flag.Bool("whatif", false, "measure capacity and drain instead of the dry-run")
	flag.BoolVar(&withPreemption, "preemption", false, "run DefaultPreemption for pods that do not fit (off by default, as in the kube-scheduler reference runs)")
	flag.Parse()
	if *memprofile != "" {
		runtime.MemProfileRate = 64 << 10
		defer func() {
			f, err := os.Create(*memprofile)
			if err == nil {
				_ = pprof.Lookup("allocs").WriteTo(f, 0)
				_ = f.Close()
			}
		}()
	}
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

	if *what {
		whatif(*only)
		return
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
	fmt.Fprintf(tw, "workload\tnodes\tpending\tscheduled\tseconds\tpods/s\tcpu-s\tpods/cpu-s\theap MiB\t\n")
	for _, w := range ws {
		if *only != "" && !strings.Contains(w.name, *only) {
			continue
		}
		cl, err := w.load()
		if err != nil {
			fatal(w.name, err)
		}
		if *limit > 0 {
			limitPending(cl, *limit)
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
		var cpu time.Duration
		for r := 0; r < *repeat; r++ {
			runtime.GC()
			c0 := cpuTime()
			rep, err := run(cl, cfg, reg)
			c := cpuTime() - c0
			if err != nil {
				fmt.Fprintf(os.Stderr, "bench: %s: %v\n", w.name, err)
				os.Exit(1)
			}
			var ms runtime.MemStats
			runtime.ReadMemStats(&ms)
			heap = ms.HeapAlloc
			d := time.Duration(rep.Summary.DurationSeconds * float64(time.Second))
			if d < best {
				best, cpu = d, c
			}
			sched, pending = rep.Summary.Scheduled, rep.Summary.Pending
		}
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%.2f\t%.0f\t%.2f\t%.0f\t%d\t\n", w.name, len(cl.Nodes), pending, sched, best.Seconds(), float64(pending)/best.Seconds(),
			cpu.Seconds(), float64(pending)/cpu.Seconds(), heap>>20)
	}
	_ = tw.Flush()
}

// withPreemption is the -preemption flag.
var withPreemption bool

func run(cl *snapshot.Cluster, cfg *configv1.KubeSchedulerConfiguration, reg schedcore.Registry) (*report.DryRun, error) {
	return dryrun.Run(context.Background(), cl, dryrun.Options{Config: cfg, Registry: reg, NoPreemption: !withPreemption})
}

// generatedNames are the generated workloads: scheduler_perf's, at 5000
// nodes, and the mixed cluster at 500, 5000 and 15000 nodes (seed 1, the
// seed of testdata/kubebench's reference placements).
var generatedNames = []string{
	"SchedulingBasic/5000Nodes_10000Pods",
	"SchedulingNodeAffinity/5000Nodes_10000Pods",
	"SchedulingPodAntiAffinity/5000Nodes_2000Pods",
	"TopologySpreading/5000Nodes_5000Pods",
	"PreferredTopologySpreading/5000Nodes_5000Pods",
	"MixedSchedulingBasePod/5000Nodes_5000Pods",
	"Mixed/500Nodes",
	"Mixed/5000Nodes",
	"Mixed/15000Nodes",
	// DRA: scheduler_perf's DRA benchmark (500 nodes, 10 devices each) and
	// the DRA GPU cluster.
	"SchedulingWithResourceClaimTemplate/5000pods_500nodes",
	"DRA/500Nodes",
	"DRA/2000Nodes",
}

func generated() []workload {
	var out []workload
	for _, name := range generatedNames {
		name := name
		out = append(out, workload{name: name, load: func() (*snapshot.Cluster, error) {
			w, err := workload_.Generate(name, workload_.Params{Seed: 1})
			if err != nil {
				return nil, err
			}
			cl := &snapshot.Cluster{Namespaces: w.Namespaces, Nodes: w.Nodes, Services: w.Services}
			cl.Pods = append(append(cl.Pods, w.Existing...), w.Pending...)
			if d := w.DRA; d != nil {
				cl.DRA = snapshot.DRA{DeviceClasses: d.Classes, ResourceSlices: d.Slices, DeviceTaintRules: d.TaintRules, ResourceClaimTemplates: d.Templates, ResourceClaims: d.Claims}
			}
			return cl, nil
		}})
	}
	return out
}

func fatal(name string, err error) {
	pprof.StopCPUProfile()
	fmt.Fprintf(os.Stderr, "bench: %s: %v\n", name, err)
	os.Exit(1)
}

// limitPending keeps the first n pending pods (in input order).
func limitPending(cl *snapshot.Cluster, n int) {
	out := cl.Pods[:0]
	for _, p := range cl.Pods {
		if p.Spec.NodeName == "" {
			if n == 0 {
				continue
			}
			n--
		}
		out = append(out, p)
	}
	cl.Pods = out
}

// cpuTime is the user+system time of the process so far: a figure less
// sensitive than wall time to other work on the machine.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
