package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"runtime"
	"runtime/pprof"
	"sort"
	"text/tabwriter"
	"time"

	"github.com/kubectl-sched/kubectl-sched/internal/explain"
)

// explainWarm, when above 0, loads each workload that many times and, on
// each load, explains the sample twice over: the per-pod median CPU time of
// the first pass against the second shows which explanations build what
// later ones reuse (the first pod of a template), and by how much. With
// -cpuprofile the passes are labelled explain=pass1 and explain=pass2.
var explainWarm = flag.Int("explainwarm", 0, "with -explain: load each workload this many times, explain the sample twice on each load and list the pods whose first pass costs more CPU than the second (median over loads)")

func explainWarmBench(only string, pct int) {
	tw := tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', tabwriter.AlignRight)
	defer tw.Flush()
	fmt.Fprintln(tw, "workload\tpod\tpass1 cpu ms\tpass2 cpu ms\t")
	for _, w := range generated() {
		if !w.picked(only) || w.gates != "" {
			continue
		}
		cl, cfg, reg, pods := explainInputs(w, pct)
		ctx := context.Background()
		pass := [2][][]time.Duration{make([][]time.Duration, len(pods)), make([][]time.Duration, len(pods))}
		var loads []time.Duration
		for range *explainWarm {
			runtime.GC()
			c := cpuTime()
			st, err := explain.NewState(ctx, cl, explain.Options{Config: cfg, Registry: reg, OwnPods: true})
			if err != nil {
				fatal(w.name, err)
			}
			loads = append(loads, cpuTime()-c)
			resume := pauseGC()
			for r := range 2 {
				for k, p := range pods {
					c := cpuTime()
					pprof.Do(ctx, pprof.Labels("explain", fmt.Sprintf("pass%d", r+1), "pass_pod", fmt.Sprintf("pass%d/%s", r+1, p.Name)), func(ctx context.Context) { _, err = st.Explain(ctx, p) })
					if err != nil {
						fatal(w.name+" "+p.Name, err)
					}
					pass[r][k] = append(pass[r][k], cpuTime()-c)
				}
			}
			resume()
		}
		med := func(d []time.Duration) time.Duration {
			d = append([]time.Duration(nil), d...)
			sort.Slice(d, func(i, j int) bool { return d[i] < d[j] })
			return d[(len(d)-1)/2]
		}
		var all1, all2 []time.Duration
		for k, p := range pods {
			m1, m2 := med(pass[0][k]), med(pass[1][k])
			all1, all2 = append(all1, pass[0][k]...), append(all2, pass[1][k]...)
			fmt.Fprintf(tw, "%s\t%s\t%.1f\t%.1f\t\n", w.name, p.Name, float64(m1)/1e6, float64(m2)/1e6)
		}
		p90 := func(d []time.Duration) float64 {
			sort.Slice(d, func(i, j int) bool { return d[i] < d[j] })
			return float64(d[len(d)*9/10]) / 1e6
		}
		fmt.Fprintf(tw, "%s\tp90 / load CPU ms\t%.1f\t%.1f\t%.0f\t\n", w.name, p90(all1), p90(all2), float64(med(loads))/1e6)
	}
}
