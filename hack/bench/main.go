// Command bench measures the dry-run's throughput (pods/s) on the shipped
// snapshots and on generated workloads named after kube-scheduler's
// scheduler_perf ones. `make bench` runs it. Speed is measured here, never
// asserted in a test.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
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
	"github.com/kubectl-sched/kubectl-sched/internal/featuregates"
	"github.com/kubectl-sched/kubectl-sched/internal/gen/v1list"
	workload_ "github.com/kubectl-sched/kubectl-sched/internal/gen/workload"
	"github.com/kubectl-sched/kubectl-sched/internal/report"
	"github.com/kubectl-sched/kubectl-sched/internal/snapshot"
	"github.com/kubectl-sched/kubectl-sched/schedcore"
)

type workload struct {
	name   string
	config string
	load   func() (*snapshot.Cluster, error)
	// file is the snapshot's file, or marshal writes the workload as one
	// (for kubebench).
	file    string
	marshal func() ([]byte, error)
	// defaultProfile: run with the default profile (kube's adaptive
	// percentageOfNodesToScore and preemption), whatever -percentage and
	// -preemption say; kube's figures are neither recorded nor run (at
	// these sizes kubebench needs hours).
	defaultProfile bool
	// optional: run only when -run names it.
	optional bool
	// gates are kube's feature gates the workload runs with ("A=true,B=true",
	// "" for the defaults): ours through internal/featuregates, kube's
	// through kubebench -feature-gates, its pod-group loop (-gang).
	gates string
}

func main() {
	only := flag.String("run", "", "only workloads whose name contains this (or one of these, comma-separated)")
	pct := flag.Int("percentage", 100, "percentageOfNodesToScore (100 = every node, kube's reference setting; 0 = kube's adaptive default)")
	repeat := flag.Int("count", 1, "runs per workload (the best is reported)")
	cpuprofile := flag.String("cpuprofile", "", "write a CPU profile of the runs to this file")
	limit := flag.Int("limit", 0, "place only the first N pending pods of each workload (for profiling)")
	memprofile := flag.String("memprofile", "", "write an allocation profile to this file at the end")
	what := flag.Bool("whatif", false, "measure capacity and drain instead of the dry-run")
	expl := flag.Bool("explain", false, "measure explain (ms per pod, on a state loaded once) instead of the dry-run")
	flag.BoolVar(&withPreemption, "preemption", false, "run DefaultPreemption for pods that do not fit (off by default, as in the kube-scheduler reference runs)")
	kube := flag.String("kube", "recorded", "kube-scheduler's figures for the ratio: recorded (from "+kubeFiguresFile+"), run (hack/kubebench on the same snapshot right after ours: minutes per 5000-node workload) or off")
	record := flag.Bool("record", false, "with -kube run: write kube's figures (with date, load and commit) into "+kubeFiguresFile)
	recordHeap := flag.Bool("record-heap", false, "with -kube run: write only the live heaps (kube's and ours) into "+kubeFiguresFile+", keeping the recorded speed figures (a workload not recorded yet is recorded whole)")
	allocs := flag.Bool("allocs", false, "add the bytes allocated and the collections run while scheduling (from the loaded engine to the last pod), averaged over the runs")
	nRounds := flag.Int("rounds", 1, "with -kube run: measure ours then kube this many times in turn, a row per round, and print the median ratio (the round with the median ratio is the one -record keeps)")
	flag.StringVar(&kubeGangOut, "kube-gang-out", "", "with -kube run: keep kube's outcome of a gang workload (hack/kubebench -gang's JSON, the last round's) in this file")
	liveprofile := flag.String("liveprofile", "", "write a heap profile taken at the live-heap point (after the last pod, forced collections, the scheduler still in use) to this file: go tool pprof -sample_index=inuse_space")
	flag.Parse()
	if *kube != "recorded" && *kube != "run" && *kube != "off" {
		fmt.Fprintf(os.Stderr, "bench: -kube %q: want recorded, run or off\n", *kube)
		os.Exit(2)
	}
	if (*record || *recordHeap) && *kube != "run" {
		fmt.Fprintln(os.Stderr, "bench: -record and -record-heap need -kube run")
		os.Exit(2)
	}
	if *nRounds < 1 || (*nRounds > 1 && *kube != "run") {
		fmt.Fprintln(os.Stderr, "bench: -rounds wants a count of 1 or more, and more than 1 only with -kube run")
		os.Exit(2)
	}
	if *seed != 1 && *kube != "off" {
		fmt.Fprintf(os.Stderr, "bench: -seed %d wants -kube off: kube's figures are of seed 1\n", *seed)
		os.Exit(2)
	}
	if *limit > 0 && *kube != "off" {
		// kubebench places every pending pod: no ratio for a partial run.
		*kube = "off"
	}
	if withPreemption && *kube != "off" {
		// kubebench's figures are without preemption.
		*kube = "off"
	}
	figs, err := readKubeFigures(kubeFiguresFile)
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(2)
	}
	if *memprofile != "" || *liveprofile != "" {
		runtime.MemProfileRate = 64 << 10
	}
	if *memprofile != "" {
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
	if *expl && *explainWarm > 0 {
		explainWarmBench(*only, *pct)
		return
	}
	if *expl {
		explainBench(*only, *pct, *repeat)
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
		ws = append(ws, workload{name: "snapshot/" + filepath.Base(dir), config: cfg, file: d, load: func() (*snapshot.Cluster, error) {
			return snapshot.LoadPaths([]string{d}, nil)
		}})
	}
	ws = append(ws, generated()...)

	tw := tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "workload\tnodes\tpending\tscheduled\tload s\tseconds\tpods/s\tcpu-s\tpods/cpu-s\theap MiB\tpeak MiB\t")
	if *allocs {
		fmt.Fprintf(tw, "alloc MB/run\tGCs/run\t")
	}
	if *kube != "off" {
		fmt.Fprintf(tw, "kube pods/s\tkube pods/cpu-s\tkube heap MiB\tkube peak MiB\t× pods/cpu-s\theap ÷ kube\tkube from\t")
	}
	fmt.Fprintln(tw)
	var used []kubeFigure
	// decisions are the gang workloads' comparisons with kube (-kube run).
	var decisions []string
	allSame := true
	st, _ := os.Stderr.Stat()
	progress := st != nil && st.Mode()&os.ModeCharDevice != 0
	for _, w := range ws {
		if !w.picked(*only) {
			continue
		}
		features, err := workloadFeatures(w.gates)
		if err != nil {
			fatal(w.name, err)
		}
		cfg, err := engine.LoadConfigWithFeatures(w.config, features)
		if err != nil {
			fatal(w.name, err)
		}
		if !w.defaultProfile {
			p := int32(*pct)
			cfg.PercentageOfNodesToScore = &p
			for i := range cfg.Profiles {
				cfg.Profiles[i].PercentageOfNodesToScore = nil
			}
		}
		reg, err := engine.Registry(nil)
		if err != nil {
			fmt.Fprintln(os.Stderr, "bench:", err)
			os.Exit(1)
		}
		opts := oursOptions{repeat: *repeat, limit: *limit, allocs: *allocs, liveprofile: *liveprofile, preemption: withPreemption || w.defaultProfile, features: features}
		// With -rounds, ours and kube's runs alternate, a row per round,
		// and the median ratio closes the workload: one side-by-side
		// round on a shared machine moves by a fifth or more.
		var rounds []roundFigures
		for r := 0; r < *nRounds; r++ {
			o := measureOurs(w, cfg, reg, opts)
			perCPU := o.perCPU()
			name := w.name
			if *nRounds > 1 {
				name = fmt.Sprintf("%s #%d", w.name, r+1)
			}
			fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%.2f\t%.2f\t%.0f\t%.2f\t%.0f\t%.0f\t%.0f\t", name, o.nodes, o.pending, o.scheduled, o.load.Seconds(), o.best.Seconds(), float64(o.pending)/o.best.Seconds(),
				o.cpu.Seconds(), perCPU, mib(o.heap.live), mib(o.heap.peak))
			if *allocs {
				fmt.Fprintf(tw, "%.1f\t%.2f\t", o.allocBytes/1e6, o.gcs)
			}
			switch kubeMode := *kube; {
			case kubeMode != "off" && w.defaultProfile:
				fmt.Fprintf(tw, "-\t-\t-\t-\t-\tdefault profile: not compared\t")
			case kubeMode == "run":
				runtime.GC()
				file, cleanup, err := tempSnapshot(w)
				if err != nil {
					fatal(w.name, err)
				}
				k, kubeBound, err := runKube(file, w.config, *pct, w.gates)
				cleanup()
				if err != nil {
					fatal(w.name, err)
				}
				k.Workload, k.OursPodsPerCPU, k.OursHeapLiveMiB, k.OursHeapLivePeakMiB = w.name, perCPU, mib(o.heap.live), mib(o.heap.peak)
				if w.gates != "" {
					// kube's loop on a gang workload: its decisions beside ours.
					msg, same := sameDecisions(o.bound, kubeBound)
					decisions = append(decisions, fmt.Sprintf("decisions: %s round %d: %s", w.name, r+1, msg))
					allSame = allSame && same
				}
				rounds = append(rounds, roundFigures{kube: k, ours: o})
				printKube(tw, k, perCPU, o.heap, "now")
			case kubeMode == "recorded":
				if k, ok := figs.lookup(w.name, *pct); ok {
					if r == 0 {
						used = append(used, k)
					}
					printKube(tw, k, perCPU, o.heap, k.Date[:10])
				} else {
					fmt.Fprintf(tw, "-\t-\t-\t-\t-\tnot recorded\t")
				}
			}
			if r < *nRounds-1 {
				fmt.Fprintln(tw)
			}
		}
		// A gang workload whose decisions differ from kube's is not
		// recorded.
		if len(rounds) > 0 && (*record || *recordHeap) && allSame {
			// The round whose ratio is the median is the one recorded.
			k := medianRound(rounds).kube
			if *record {
				figs.put(k)
			} else {
				figs.putHeap(k)
			}
			if err := figs.write(kubeFiguresFile); err != nil {
				fatal(w.name, err)
			}
		}
		if len(rounds) > 1 {
			fmt.Fprintln(tw)
			m := medianRound(rounds)
			fmt.Fprintf(tw, "%s median of %d\t\t\t\t\t\t\t%.0f\t\t\t", w.name, len(rounds), m.ours.perCPU())
			if *allocs {
				fmt.Fprintf(tw, "\t\t")
			}
			fmt.Fprintf(tw, "\t%.1f\t\t\t%.1f×\t\t%s\t", m.kube.PodsPerCPU, m.ratio(), ratios(rounds))
		}
		fmt.Fprintln(tw)
		if progress {
			fmt.Fprintf(os.Stderr, "bench: %s done\n", w.name)
		}
	}
	_ = tw.Flush()
	switch *kube {
	case "run":
		for _, d := range decisions {
			fmt.Println(d)
		}
		fmt.Printf("kube: hack/kubebench (kube-scheduler v1.37.2) run on each snapshot right after ours, percentage %d; × = our pods/cpu-s over kube's\n", *pct)
		if *nRounds > 1 {
			fmt.Printf("kube: %d rounds in turn; the median row is the round whose ratio is the median (of an even count, the lower middle one)\n", *nRounds)
		}
		fmt.Println(heapNote)
		if *record || *recordHeap {
			fmt.Printf("kube: figures recorded in %s\n", kubeFiguresFile)
		}
		if !allSame {
			pprof.StopCPUProfile()
			fmt.Fprintln(os.Stderr, "bench: decisions differ from kube's")
			os.Exit(1)
		}
	case "recorded":
		fmt.Printf("kube: RECORDED figures from %s (not run now; `make bench-kube` refreshes them, `-kube run` runs kube beside ours); × = our pods/cpu-s now over kube's recorded\n", kubeFiguresFile)
		fmt.Println(heapNote)
		for _, k := range used {
			fmt.Printf("kube:   %s recorded %s, load %s, commit %s, %d cores; ours then %.0f pods/cpu-s (%.1f×)\n", k.Workload, k.Date, k.Load, k.Commit, k.Cores, k.OursPodsPerCPU, k.OursPodsPerCPU/k.PodsPerCPU)
		}
	}
}

// heapNote says what the heap columns hold.
const heapNote = "heap: the live heap after the last pod (HeapAlloc after forced collections, the scheduler still in use); peak: the largest live heap a collection found during the run. " +
	"Ours holds the cluster the run was handed (the engine's own: equal parts of its pods and nodes shared at loading) and the engine's state; " +
	"kube's (hack/kubebench) the informers' copies of the objects, its cache (with kube's assumed deep copies of the placed pods), queue and framework, " +
	"without the fake clientset's copy of every object (the API server's) and kubebench's own decoded copy of the pending pods (both measured apart and subtracted); heap ÷ kube = ours over kube's"

// printKube prints kube's columns and the ratios.
func printKube(tw io.Writer, k kubeFigure, perCPU float64, heap heapFigures, from string) {
	fmt.Fprintf(tw, "%.1f\t%.1f\t", k.PodsPerSec, k.PodsPerCPU)
	if kh := k.kubeHeapMiB(); kh > 0 {
		fmt.Fprintf(tw, "%.0f\t%.0f\t%.1f×\t%.2f\t%s\t", kh, k.HeapLivePeakMiB-k.HeapClientsetMiB-k.HeapPendingMiB, perCPU/k.PodsPerCPU, mib(heap.live)/kh, from)
	} else {
		// Recorded before the live heap was.
		fmt.Fprintf(tw, "-\t-\t%.1f×\t-\t%s\t", perCPU/k.PodsPerCPU, from)
	}
}

// heapFigures are a run's live heap at the end and at its peak.
type heapFigures struct{ live, peak uint64 }

func mib(b uint64) float64 { return float64(b) / (1 << 20) }

// writeHeapProfile writes the heap profile (as of the last collection).
func writeHeapProfile(path string) {
	f, err := os.Create(path)
	if err == nil {
		_ = pprof.Lookup("heap").WriteTo(f, 0)
		_ = f.Close()
	}
}

// withPreemption is the -preemption flag.
var withPreemption bool

// run is one dry-run; ran is called after the last pod, the engine still
// in use.
func run(cl *snapshot.Cluster, cfg *configv1.KubeSchedulerConfiguration, reg schedcore.Registry, features schedcore.Features, preemption bool, loaded, ran func()) (*report.DryRun, error) {
	return dryrun.Run(context.Background(), cl, dryrun.Options{Config: cfg, Registry: reg, Features: features, NoPreemption: !preemption, Loaded: loaded, Ran: ran, InPlace: true})
}

// workloadFeatures are the engine's features under a workload's gates.
func workloadFeatures(gates string) (schedcore.Features, error) {
	g := featuregates.New()
	if gates != "" {
		if err := g.Set(gates); err != nil {
			return schedcore.Features{}, err
		}
	}
	return g.Features(), nil
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
	// The scale series (issue 36), with the default profile: 100,000
	// nodes, 300,000 running and 20,000 pending pods by default; the
	// 10,000- and 50,000-node steps when -run names them.
	"Mixed/10000Nodes",
	"Mixed/50000Nodes",
	"Mixed/100000Nodes",
}

// defaultProfileNames are the generated workloads run with the default
// profile (workload.defaultProfile), and optionalNames those run only when
// -run names them (workload.optional).
var (
	defaultProfileNames = map[string]bool{"Mixed/10000Nodes": true, "Mixed/50000Nodes": true, "Mixed/100000Nodes": true}
	optionalNames       = map[string]bool{"Mixed/10000Nodes": true, "Mixed/50000Nodes": true}
)

// seed is the generator's seed for the generated workloads: another than
// kube's recorded one (1) shows whether a figure holds for other pods and
// templates (with -kube off: kube's figures are of seed 1).
var seed = flag.Uint64("seed", 1, "the generator's seed for the generated workloads (kube's figures are of seed 1: another wants -kube off)")

func generated() []workload {
	var out []workload
	for _, name := range generatedNames {
		name := name
		gen := func() (*workload_.Workload, error) { return workload_.Generate(name, workload_.Params{Seed: *seed}) }
		out = append(out, workload{name: name, defaultProfile: defaultProfileNames[name], optional: optionalNames[name], marshal: func() ([]byte, error) {
			w, err := gen()
			if err != nil {
				return nil, err
			}
			return v1list.Marshal("json", w.Objects()...)
		}, load: func() (*snapshot.Cluster, error) {
			w, err := gen()
			if err != nil {
				return nil, err
			}
			return w.Cluster(), nil
		}})
	}
	out = append(out, gangWorkloads()...)
	return out
}

func fatal(name string, err error) {
	pprof.StopCPUProfile()
	fmt.Fprintf(os.Stderr, "bench: %s: %v\n", name, err)
	os.Exit(1)
}

// picked says whether the workload runs: -run picks it, and an optional
// one only when -run is given.
func (w workload) picked(only string) bool {
	return selected(w.name, only) && (!w.optional || only != "")
}

// selected says whether the -run flag picks a workload.
func selected(name, only string) bool {
	if only == "" {
		return true
	}
	for _, s := range strings.Split(only, ",") {
		if s != "" && strings.Contains(name, s) {
			return true
		}
	}
	return false
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
