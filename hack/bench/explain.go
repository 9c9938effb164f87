package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/pprof"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	v1 "k8s.io/api/core/v1"
	configv1 "k8s.io/kube-scheduler/config/v1"

	"github.com/kubectl-sched/kubectl-sched/internal/engine"
	"github.com/kubectl-sched/kubectl-sched/internal/explain"
	"github.com/kubectl-sched/kubectl-sched/internal/report"
	"github.com/kubectl-sched/kubectl-sched/internal/snapshot"
	"github.com/kubectl-sched/kubectl-sched/schedcore"
)

// explainOut, when set, is a file that -explain writes the first round's
// reports to, as JSON, one line per pod: comparing two builds' files shows
// whether a change altered what explain reports.
var explainOut = flag.String("explainout", "", "with -explain: write the first round's reports to this file (JSON lines), to compare builds")

// explainSlow, when positive, lists that many of the slowest explanations
// of each workload with their round, pod and the collections that ended
// during them: whether the tail is the first explanation's warm-up, a pod
// of its own or the GC.
var explainSlow = flag.Int("explainslow", 0, "with -explain: list the N slowest explanations of each workload (round, pod, GC cycles during it)")

// explainFirsts, when above 1, loads each workload that many times and
// explains its first pending pod on each load: the first explanation after
// loading, what `explain` of one pod pays, is one sample per load, and one
// sample on a shared machine says little. The first ms column is then their
// median, and first p90 their p90.
var explainFirsts = flag.Int("explainfirsts", 1, "with -explain: load each workload this many times and report the median (and p90) of the first explanation after each load")

// explainCollect, when set, leaves the collector on during the first
// explanation after each load; by default it is off during it, as
// `explain` has it (internal/cli.explainUncollected), and the wait for a
// collection the load started counts in the load.
var explainCollect = flag.Bool("explaincollect", false, "with -explain: leave the collector on during the first explanation after each load (explain pauses it)")

// pauseGC is what `explain` does before its one explanation, unless
// -explaincollect: the returned resume puts the collector back.
func pauseGC() (resume func()) {
	if *explainCollect {
		return func() {}
	}
	old := debug.SetGCPercent(-1)
	return func() { debug.SetGCPercent(old) }
}

// explainSample is how many pending pods of each workload -explain explains.
const explainSample = 50

// explainBench measures `explain` (-explain): on each selected generated
// workload, the state is loaded once (as `explain` does for a snapshot) and
// then the first explainSample pending pods are explained one by one against
// it, every node evaluated with full diagnosis, the gaps of the nearest
// rejected nodes and preemption's answer. The time per pod is what a user
// waits for after the snapshot is loaded; the load itself is printed apart,
// and so is the first explanation (what `explain` of one pod pays: the
// plugins' indexes are built on first use).
// With -count N the sample is explained N times over (for a steadier
// median and a profile with more samples); every explanation counts.
// KB/pod is what an explanation allocates (with -explainout, also the
// first round's encoding) and GCs the collections that ended meanwhile:
// the tail follows them, and they follow the allocation.
func explainBench(only string, pct, rounds int) {
	tw := tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', tabwriter.AlignRight)
	var out *json.Encoder
	if *explainOut != "" {
		f, err := os.Create(*explainOut)
		if err != nil {
			fatal("-explainout", err)
		}
		defer func() {
			if err := f.Close(); err != nil {
				fatal("-explainout", err)
			}
		}()
		out = json.NewEncoder(f)
	}
	fmt.Fprintln(tw, "workload\tnodes\texplained\tschedulable\tload s\tfirst ms\tfirst p90 ms\tfirst cpu ms\tfirst GCs\tmedian ms\tp90 ms\tmax ms\tp90 cpu ms\tcpu ms/pod\tKB/pod\tGCs\t")
	for _, w := range generated() {
		if !w.picked(only) || w.gates != "" {
			continue
		}
		cl, cfg, reg, pods := explainInputs(w, pct)
		ctx := context.Background()
		if len(pods) == 0 {
			continue
		}
		// -explainfirsts: the first explanation after each of that many
		// loads but the last, which the rounds below use.
		// firstCPUs are the process's CPU time during each first
		// explanation (the collector's included): steadier than the wall
		// clock on a shared machine.
		var firsts, firstCPUs, loads []time.Duration
		// firstGCs counts the collections that ended during the first
		// explanations: the load's garbage, collected lazily.
		var firstGCs uint32
		var ms0, ms1 runtime.MemStats
		for range max(*explainFirsts, 1) - 1 {
			runtime.GC()
			t0 := time.Now()
			st, err := explain.NewState(ctx, cl, explain.Options{Config: cfg, Registry: reg, OwnPods: true})
			if err != nil {
				fatal(w.name, err)
			}
			resume := pauseGC()
			loads = append(loads, time.Since(t0))
			runtime.ReadMemStats(&ms0)
			t, c := time.Now(), cpuTime()
			pprof.Do(ctx, pprof.Labels("explain", "pod0"), func(ctx context.Context) { _, err = st.Explain(ctx, pods[0]) })
			if err != nil {
				fatal(w.name+" "+pods[0].Namespace+"/"+pods[0].Name, err)
			}
			firsts, firstCPUs = append(firsts, time.Since(t)), append(firstCPUs, cpuTime()-c)
			resume()
			runtime.ReadMemStats(&ms1)
			firstGCs += ms1.NumGC - ms0.NumGC
		}
		runtime.GC()
		t0 := time.Now()
		st, err := explain.NewState(ctx, cl, explain.Options{Config: cfg, Registry: reg, OwnPods: true})
		if err != nil {
			fatal(w.name, err)
		}
		resume := pauseGC()
		load := time.Since(t0)
		loads = append(loads, load)
		rounds = max(rounds, 1)
		times := make([]time.Duration, 0, rounds*len(pods))
		// cpus are the process's CPU time during each explanation: on a
		// shared machine the wall clock also counts the waits for a core.
		cpus := make([]time.Duration, 0, rounds*len(pods))
		type slow struct {
			d, cpu     time.Duration
			round, pod int
			gcs        uint32
		}
		var slows []slow
		schedulable := 0
		var mem0, mem1 runtime.MemStats
		runtime.ReadMemStats(&mem0)
		c0 := cpuTime()
		seenTmpl := map[string]bool{}
		for r := 0; r < rounds; r++ {
			for k, p := range pods {
				if *explainSlow > 0 {
					runtime.ReadMemStats(&ms0)
				}
				// The profile label tells apart the explanations that
				// fill shared caches (the first after loading, the first
				// of each app template) from the rest: with -cpuprofile,
				// pprof -tagfocus explain=tmplfirst shows what they cost.
				kind, tmpl := "other", templateOf(p.Name)
				if r == 0 && k == 0 {
					kind = "pod0"
				} else if r == 0 && !seenTmpl[tmpl] {
					kind = "tmplfirst"
				}
				seenTmpl[tmpl] = true
				t, c := time.Now(), cpuTime()
				var rep *report.Explanation
				var err error
				pprof.Do(ctx, pprof.Labels("explain", kind, "pod", p.Name), func(ctx context.Context) { rep, err = st.Explain(ctx, p) })
				if err != nil {
					fatal(w.name+" "+p.Namespace+"/"+p.Name, err)
				}
				times = append(times, time.Since(t))
				spent := cpuTime() - c
				if r == 0 && k == 0 {
					resume()
				}
				cpus = append(cpus, spent)
				if r == 0 && k == 0 {
					firstCPUs = append(firstCPUs, spent)
					if *explainSlow > 0 {
						runtime.ReadMemStats(&ms1)
						firstGCs += ms1.NumGC - ms0.NumGC
					}
				}
				if *explainSlow > 0 {
					runtime.ReadMemStats(&ms1)
					slows = append(slows, slow{times[len(times)-1], spent, r, k, ms1.NumGC - ms0.NumGC})
				}
				if r == 0 && rep.NumFeasible > 0 {
					schedulable++
				}
				if r == 0 && out != nil {
					if err := out.Encode(rep); err != nil {
						fatal(w.name+" "+p.Namespace+"/"+p.Name, err)
					}
				}
			}
		}
		cpu := cpuTime() - c0
		firsts = append(firsts, times[0])
		sort.Slice(firsts, func(i, j int) bool { return firsts[i] < firsts[j] })
		sort.Slice(loads, func(i, j int) bool { return loads[i] < loads[j] })
		sort.Slice(firstCPUs, func(i, j int) bool { return firstCPUs[i] < firstCPUs[j] })
		first, firstP90, load := firsts[(len(firsts)-1)/2], firsts[len(firsts)*9/10], loads[(len(loads)-1)/2]
		firstCPU := firstCPUs[(len(firstCPUs)-1)/2]
		runtime.ReadMemStats(&mem1)
		sort.Slice(slows, func(i, j int) bool { return slows[i].d > slows[j].d })
		for _, s := range slows[:min(*explainSlow, len(slows))] {
			fmt.Fprintf(os.Stderr, "%s: round %d pod %d (%s): %.1f ms (%.1f ms CPU), %d GC cycle(s) ended\n", w.name, s.round, s.pod, pods[s.pod].Name, float64(s.d)/float64(time.Millisecond), float64(s.cpu)/float64(time.Millisecond), s.gcs)
		}
		sort.Slice(times, func(i, j int) bool { return times[i] < times[j] })
		sort.Slice(cpus, func(i, j int) bool { return cpus[i] < cpus[j] })
		ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%.2f\t%.1f\t%.1f\t%.1f\t%d\t%.1f\t%.1f\t%.1f\t%.1f\t%.1f\t%.0f\t%d\t\n", w.name, len(cl.Nodes), len(pods), schedulable, load.Seconds(),
			ms(first), ms(firstP90), ms(firstCPU), firstGCs, ms(times[len(times)/2]), ms(times[len(times)*9/10]), ms(times[len(times)-1]), ms(cpus[len(cpus)*9/10]), ms(cpu)/float64(len(times)),
			float64(mem1.TotalAlloc-mem0.TotalAlloc)/1024/float64(len(times)), mem1.NumGC-mem0.NumGC)
	}
	_ = tw.Flush()
	fmt.Printf("explain: the first %d pending pods of each workload, one by one against a state loaded once, %d time(s) over; percentage %d\n", explainSample, max(rounds, 1), pct)
}

// templateOf is a pod name without its last dash-separated part: pods of
// one app template share it.
func templateOf(name string) string {
	if i := strings.LastIndexByte(name, '-'); i > 0 {
		return name[:i]
	}
	return name
}

// explainInputs loads w for the explain benches: the cluster, its
// configuration (with pct as percentageOfNodesToScore unless w keeps the
// default profile), the registry, and the first explainSample pending pods.
func explainInputs(w workload, pct int) (*snapshot.Cluster, *configv1.KubeSchedulerConfiguration, schedcore.Registry, []*v1.Pod) {
	cl, err := w.load()
	if err != nil {
		fatal(w.name, err)
	}
	cfg, err := engine.LoadConfig(w.config)
	if err != nil {
		fatal(w.name, err)
	}
	if !w.defaultProfile {
		p := int32(pct)
		cfg.PercentageOfNodesToScore = &p
	}
	reg, err := engine.Registry(nil)
	if err != nil {
		fatal(w.name, err)
	}
	var pods []*v1.Pod
	for _, p := range cl.Pods {
		if p.Spec.NodeName == "" && len(pods) < explainSample {
			pods = append(pods, p)
		}
	}
	return cl, cfg, reg, pods
}
