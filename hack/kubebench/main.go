// Command kubebench is the reference benchmark: the real kube-scheduler
// v1.37.2 framework, in-process, placing the pending pods of a snapshot
// one at a time, as the conformance fixtures were made:
//
//	go run . -percentage 100 [-config sched.yaml] [-placements out.json] SNAPSHOT
//
// Objects are loaded into a fake clientset; kube-scheduler's own informers,
// cache and profiles (scheduler.New: frameworkruntime.NewFramework over the
// in-tree registry) are built on it. Pending pods are taken in queue order
// (priority descending, creationTimestamp, namespace/name); each placement
// is assumed into the cache before the next pod; no preemption; ties
// between equal best totals go to the lowest node name. It prints
//
//	pods=N scheduled=S duration=D pods/s=X
//
// (the scheduling loop only), the heap after loading and at the end, and
//
//	heap_live=L heap_live_peak=P heap_clientset=C heap_pending=Q
//
// L: the live heap after the last pod (HeapAlloc after forced
// collections, heap.go), holding the fake clientset's copy of every
// object (C of it: the API server's copy, measured when the clientset is
// built), the informers' copies, the scheduler's cache (with kube's
// assumed deep copies of the placed pods), queue and framework, and the
// pending pods as decoded (Q of it: this harness's copy, which run is
// handed, measured by dropping it); P: the largest live heap a
// collection found during the scheduling loop.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"strings"
	"syscall"
	"time"

	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/klog/v2"
	schedulerapi "k8s.io/kubernetes/pkg/scheduler/apis/config"
	"k8s.io/kubernetes/pkg/scheduler/apis/config/latest"
	schedscheme "k8s.io/kubernetes/pkg/scheduler/apis/config/scheme"
	"k8s.io/kubernetes/pkg/scheduler/apis/config/validation"
)

func main() { os.Exit(run(os.Args[1:], os.Stdout, os.Stderr)) }

func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("kubebench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	configPath := fs.String("config", "", "KubeSchedulerConfiguration file (default: the default profile)")
	percentage := fs.Int("percentage", 100, "percentageOfNodesToScore (0: kube's adaptive default); a profile's own value wins")
	placements := fs.String("placements", "", `write {"placements":[{"pod","node"}],"unschedulable":[...]} to this file`)
	cpuprofile := fs.String("cpuprofile", "", "write a CPU profile of the scheduling loop")
	explainOut := fs.String("explain", "", `explain every pending pod against the snapshot as loaded (nothing placed) and write {"cases":[...]} in the conformance explain format to this file`)
	explainRun := fs.String("explain-run", "", `place the pending pods as without it, explaining each one before its cycle against the state the earlier placements left; write {"cases":[...]} (with afterPlacements) to this file`)
	explainUnsched := fs.Bool("explain-unschedulable", false, "with -explain: only the pods that fit on no node")
	preemption := fs.String("preemption", "", `run kube-scheduler's own loop with preemption and write {"placements","evictions","nominations","unschedulable"} to this file`)
	capacitySpec := fs.String("capacity", "", "place copies of this Pod (a manifest) one after another until one fits nowhere; write {count,nodes,placements,stoppedBy} to -out")
	maxCopies := fs.Int("max", 0, "with -capacity: stop at this many copies (0: no limit)")
	nodeTemplate := fs.String("node-template", "", "with -capacity or -drain: a Node manifest to add -add-nodes copies of")
	addNodes := fs.Int("add-nodes", 0, "with -node-template: how many nodes to add")
	drainNodes := fs.String("drain", "", "drain these nodes (comma-separated, in order) with kubectl's drain helper and place the recreated pods; write the result to -out")
	drainDelete := fs.Bool("drain-delete", false, "with -drain: delete the nodes instead of cordoning them")
	drainForce := fs.Bool("drain-force", false, "with -drain: --force (delete pods without a controller)")
	drainPreempt := fs.Bool("drain-preemption", false, "with -drain: place the recreated pods in kube-scheduler's own loop, with preemption")
	out := fs.String("out", "", "with -capacity or -drain: the result file")
	gangOut := fs.String("gang", "", `run kube-scheduler's own loop with workload-aware scheduling and write the groups' outcome ({"groups","placements","evictions","unschedulable"}) to this file`)
	gangRuns := fs.Int("gang-runs", 2, "with -gang: run this many times; the decisions must agree, differing messages are listed (alsoSeen)")
	fs.BoolVar(&untilDecided, "gang-until-decided", false, "with -gang: end the loop once every pending pod has had a decision (bound, or failed once) and none came for 3 s, or none came for 30 s (hack/bench's gang workloads), not only when it is quiet")
	featureGates := fs.String("feature-gates", "", "kube feature gates, A=true,B=false, set before the configuration is defaulted (with -gang: GenericWorkload=true unless given)")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: kubebench [flags] SNAPSHOT")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() != 1 || *percentage < 0 || *percentage > 100 {
		fs.Usage()
		return 2
	}
	klog.SetOutput(io.Discard)
	klog.LogToStderr(false)

	gateSpec := *featureGates
	if *gangOut != "" && !strings.Contains(gateSpec, "GenericWorkload=") {
		gateSpec = strings.TrimPrefix(gateSpec+",GenericWorkload=true", ",")
	}
	gates, err := setGates(gateSpec)
	if err != nil {
		fmt.Fprintf(stderr, "kubebench: %v\n", err)
		return 2
	}
	cfg, err := loadConfig(*configPath)
	if err != nil {
		fmt.Fprintf(stderr, "kubebench: config: %v\n", err)
		return 2
	}
	loadStart := time.Now()
	cl, err := loadSnapshot(fs.Arg(0))
	if err != nil {
		fmt.Fprintf(stderr, "kubebench: %v\n", err)
		return 2
	}
	for _, k := range cl.skipped {
		fmt.Fprintf(stderr, "kubebench: skipped an object of unknown kind %s\n", k)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if *capacitySpec != "" || *drainNodes != "" {
		w := withoutPending(cl)
		if *nodeTemplate != "" {
			if err := templateNodes(w, *nodeTemplate, *addNodes); err != nil {
				fmt.Fprintf(stderr, "kubebench: %v\n", err)
				return 2
			}
		}
		var res any
		var err error
		if *capacitySpec != "" {
			res, err = runCapacity(ctx, w, cfg, int32(*percentage), *capacitySpec, *maxCopies)
		} else {
			res, err = runDrain(ctx, w, cfg, int32(*percentage), strings.Split(*drainNodes, ","), *drainDelete, *drainForce, *drainPreempt)
		}
		if err == nil {
			err = writeJSON(*out, res)
		}
		if err != nil {
			fmt.Fprintf(stderr, "kubebench: %v\n", err)
			return 1
		}
		return 0
	}
	if *gangOut != "" {
		res, err := runGangN(ctx, filepath.Base(fs.Arg(0)), cl, cfg, int32(*percentage), gates, *gangRuns)
		if err == nil {
			err = writeJSON(*gangOut, res)
		}
		if err != nil {
			fmt.Fprintf(stderr, "kubebench: %v\n", err)
			return 1
		}
		bound := 0
		for _, g := range res.Groups {
			bound += len(g.Bound)
		}
		fmt.Fprintf(stdout, "groups=%d bound_members=%d placements=%d evictions=%d unschedulable=%d\n", len(res.Groups), bound, len(res.Placements), len(res.Evictions), len(res.Unschedulable))
		// The first run's loop, in the placement mode's format (hack/bench
		// reads it): wall and CPU time from Scheduler.Run to the last new
		// decision (a binding, or a pod's first failure; retries of failed
		// gangs in between are counted, those after are not); no
		// live-heap figures (the scheduler is gone by now).
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		fmt.Fprintf(stdout, "pods=%d scheduled=%d duration=%s pods/s=%.1f\n", res.pods, res.scheduled, res.loopWall.Round(time.Millisecond), float64(res.pods)/res.loopWall.Seconds())
		fmt.Fprintf(stdout, "cpu=%s pods/cpu-s=%.1f\n", res.loopCPU.Round(time.Millisecond), float64(res.pods)/res.loopCPU.Seconds())
		fmt.Fprintf(stdout, "nodes=%d attempts=%d heap_end=%.1fMiB percentage=%d parallelism=%d\n", cl.nodes, res.attempts, mib(ms.HeapAlloc), *percentage, cfg.Parallelism)
		return 0
	}
	if *preemption != "" {
		res, err := runPreemption(ctx, cl, cfg, int32(*percentage))
		if err != nil {
			fmt.Fprintf(stderr, "kubebench: %v\n", err)
			return 1
		}
		data, err := json.MarshalIndent(res, "", "  ")
		if err == nil {
			err = os.WriteFile(*preemption, append(data, '\n'), 0o644)
		}
		if err != nil {
			fmt.Fprintf(stderr, "kubebench: writing %s: %v\n", *preemption, err)
			return 1
		}
		fmt.Fprintf(stdout, "placements=%d evictions=%d nominations=%d unschedulable=%d\n", len(res.Placements), len(res.Evictions), len(res.Nominations), len(res.Unschedulable))
		return 0
	}
	// The fake clientset keeps its own copy of every object (the API
	// server's, which a kube-scheduler process does not hold): measured
	// apart (heap_clientset). The decoded objects are dropped once it has
	// them; the pending pods stay (cl.pending, placed by run).
	heapDecoded := liveHeap()
	client := fake.NewClientset(cl.objects...)
	heapWithClientset := liveHeap()
	heapClientset := heapWithClientset - min(heapDecoded, heapWithClientset)
	cl.objects = nil
	simulateDeviceDrivers(client)
	b, factory, err := newBench(ctx, client, cfg, int32(*percentage))
	if err != nil {
		fmt.Fprintf(stderr, "kubebench: building the scheduler: %v\n", err)
		return 1
	}
	factory.Start(ctx.Done())
	factory.WaitForCacheSync(ctx.Done())
	bound := cl.bound
	if err := b.waitCache(cl); err != nil {
		fmt.Fprintf(stderr, "kubebench: %v\n", err)
		return 1
	}
	// The DRA manager's claim cache (an assume cache fed by the claim
	// informer's handler) lags behind the informer: wait for every claim.
	if cl.claims > 0 {
		for _, f := range b.sched.Profiles {
			for {
				claims, err := f.SharedDRAManager().ResourceClaims().List()
				if err == nil && len(claims) >= cl.claims {
					break
				}
				time.Sleep(10 * time.Millisecond)
			}
			break
		}
	}
	loadTime := time.Since(loadStart)
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	heapLoaded := ms.HeapAlloc

	pods := cl.pending
	queueOrder(pods)
	b.draPods = cl.dra
	if *explainOut != "" {
		res, err := b.explainAll(ctx, pods, *explainUnsched)
		if err != nil {
			fmt.Fprintf(stderr, "kubebench: %v\n", err)
			return 1
		}
		data, err := json.MarshalIndent(res, "", "  ")
		if err == nil {
			err = os.WriteFile(*explainOut, append(data, '\n'), 0o644)
		}
		if err != nil {
			fmt.Fprintf(stderr, "kubebench: writing %s: %v\n", *explainOut, err)
			return 1
		}
		unsched := 0
		for _, c := range res.Cases {
			if c.NumFeasible == 0 {
				unsched++
			}
		}
		fmt.Fprintf(stdout, "explained=%d unschedulable=%d\n", len(res.Cases), unsched)
		return 0
	}
	if *cpuprofile != "" {
		f, err := os.Create(*cpuprofile)
		if err != nil {
			fmt.Fprintf(stderr, "kubebench: %v\n", err)
			return 1
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			fmt.Fprintf(stderr, "kubebench: %v\n", err)
			return 1
		}
	}
	b.explainRun = *explainRun != ""
	peak := watchPeak()
	cpu0 := cpuTime()
	start := time.Now()
	res, err := b.run(ctx, pods)
	dur := time.Since(start)
	cpu := cpuTime() - cpu0
	if *cpuprofile != "" {
		pprof.StopCPUProfile()
	}
	if err != nil {
		fmt.Fprintf(stderr, "kubebench: %v\n", err)
		return 1
	}
	runtime.ReadMemStats(&ms)
	// The live heap with the scheduler (its cache, queue, informers and
	// their stores) and the clientset still reachable.
	heapLive := liveHeap()
	heapPeak := peak.stop(heapLive)
	// The pending pods as decoded, which run was handed one by one (a
	// kube-scheduler takes them from its informers, which hold their
	// own copies): measured apart (heap_pending) by dropping them.
	clear(pods)
	heapNoPending := liveHeap()
	heapPending := heapLive - min(heapLive, heapNoPending)
	runtime.KeepAlive(b)
	runtime.KeepAlive(client)
	n := len(pods) - res.skipped
	fmt.Fprintf(stdout, "pods=%d scheduled=%d duration=%s pods/s=%.1f\n", n, len(res.Placements), dur.Round(time.Millisecond), float64(n)/dur.Seconds())
	// CPU time is less sensitive than wall time to other load on the machine.
	fmt.Fprintf(stdout, "cpu=%s pods/cpu-s=%.1f\n", cpu.Round(time.Millisecond), float64(n)/cpu.Seconds())
	perNode := 0.0
	if cl.nodes > 0 {
		perNode = float64(heapLoaded) / float64(cl.nodes) / 1024
	}
	fmt.Fprintf(stdout, "nodes=%d bound=%d load=%s heap_loaded=%.1fMiB heap_per_node=%.1fKiB heap_end=%.1fMiB percentage=%d parallelism=%d\n",
		cl.nodes, bound, loadTime.Round(time.Millisecond), float64(heapLoaded)/(1<<20), perNode, float64(ms.HeapAlloc)/(1<<20), *percentage, cfg.Parallelism)
	fmt.Fprintf(stdout, "heap_live=%.1fMiB heap_live_peak=%.1fMiB heap_clientset=%.1fMiB heap_pending=%.1fMiB\n", mib(heapLive), mib(heapPeak), mib(heapClientset), mib(heapPending))
	if *explainRun != "" {
		out := explainResult{Cases: []explainCase{}}
		for _, c := range b.explained {
			if !*explainUnsched || c.NumFeasible == 0 {
				out.Cases = append(out.Cases, c)
			}
		}
		data, err := json.MarshalIndent(out, "", "  ")
		if err == nil {
			err = os.WriteFile(*explainRun, append(data, '\n'), 0o644)
		}
		if err != nil {
			fmt.Fprintf(stderr, "kubebench: writing %s: %v\n", *explainRun, err)
			return 1
		}
	}
	if *placements != "" {
		data, err := json.MarshalIndent(res, "", "  ")
		if err == nil {
			err = os.WriteFile(*placements, append(data, '\n'), 0o644)
		}
		if err != nil {
			fmt.Fprintf(stderr, "kubebench: writing %s: %v\n", *placements, err)
			return 1
		}
	}
	return 0
}

func mib(b uint64) float64 { return float64(b) / (1 << 20) }

// writeJSON writes v, indented, to path ("" or "-": stdout).
func writeJSON(path string, v any) error {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	data = append(data, '\n')
	if path == "" || path == "-" {
		_, err = os.Stdout.Write(data)
		return err
	}
	return os.WriteFile(path, data, 0o644)
}

// loadConfig decodes a KubeSchedulerConfiguration as kube-scheduler does
// (defaults applied), or returns the default one.
func loadConfig(path string) (*schedulerapi.KubeSchedulerConfiguration, error) {
	if path == "" {
		return latest.Default()
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	obj, gvk, err := schedscheme.Codecs.UniversalDecoder().Decode(data, nil, nil)
	if err != nil {
		return nil, err
	}
	cfg, ok := obj.(*schedulerapi.KubeSchedulerConfiguration)
	if !ok {
		return nil, fmt.Errorf("%s: got %s, want a KubeSchedulerConfiguration", path, gvk)
	}
	cfg.TypeMeta.APIVersion = gvk.GroupVersion().String()
	if errs := validation.ValidateKubeSchedulerConfiguration(cfg); errs != nil {
		return nil, fmt.Errorf("%s: %w", path, errs)
	}
	return cfg, nil
}

// cpuTime is the user+system time of the process so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
