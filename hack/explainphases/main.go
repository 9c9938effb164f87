// Command explainphases times `kubectl sched explain pod --snapshot` on a
// dump phase by phase, with the calls the CLI makes: the dump's decoding
// (once), then -n times the load (explain.NewState, and the wait for a
// collection the load started: explain pauses the collector for its one
// explanation), the explanation, and the turn check (State.CheckTurn, on
// the explanation's engine). The explanation's time is what the user waits
// for beyond the load; its process CPU time is printed beside the wall
// clock, steadier on a shared machine.
//
//	go run ./hack/explainphases -dump mixed-5000.json -queue 3 -n 10
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/pprof"
	"sort"
	"strings"
	"syscall"
	"time"

	v1 "k8s.io/api/core/v1"

	"github.com/kubectl-sched/kubectl-sched/internal/engine"
	"github.com/kubectl-sched/kubectl-sched/internal/explain"
	"github.com/kubectl-sched/kubectl-sched/internal/report"
	"github.com/kubectl-sched/kubectl-sched/internal/snapshot"
)

func main() {
	dump := flag.String("dump", "", "the cluster dump")
	podName := flag.String("pod", "", "the pod to explain, NAMESPACE/NAME")
	queue := flag.Int("queue", -1, "explain the pending pod at this place of the queue (0: the head) instead of -pod")
	n := flag.Int("n", 1, "loads, each followed by one explanation")
	collect := flag.Bool("collect", false, "leave the collector on during the explanation (explain pauses it)")
	check := flag.Bool("check", true, "check the turn after each explanation, as explain does")
	cpuProfile := flag.String("cpuprofile", "", "write a CPU profile to this file (the explanations are labelled phase=explain: pprof -tagfocus phase=explain)")
	flag.Parse()
	var prof *os.File
	if *cpuProfile != "" {
		f, err := os.Create(*cpuProfile)
		if err != nil {
			fatal(err)
		}
		prof = f
		defer f.Close()
		if err := pprof.StartCPUProfile(prof); err != nil {
			fatal(err)
		}
		defer pprof.StopCPUProfile()
	}
	t0, c0 := time.Now(), cpuTime()
	cl, err := snapshot.LoadPaths([]string{*dump}, nil)
	if err != nil {
		fatal(err)
	}
	cl.ResolvePriorities()
	fmt.Printf("decode %.0f ms (CPU %.0f ms)\n", ms(time.Since(t0)), ms(cpuTime()-c0))
	cfg, err := engine.LoadConfig("")
	if err != nil {
		fatal(err)
	}
	reg, err := engine.Registry(nil)
	if err != nil {
		fatal(err)
	}
	pod, err := pick(cl, *podName, *queue)
	if err != nil {
		fatal(err)
	}
	fmt.Printf("pod %s/%s\n", pod.Namespace, pod.Name)
	ctx := context.Background()
	var loads, exps, cpus, checks []time.Duration
	var gcs []uint32
	var m0, m1 runtime.MemStats
	for range *n {
		t := time.Now()
		s, err := explain.NewState(ctx, cl, explain.Options{Config: cfg, Registry: reg, OwnPods: true})
		if err != nil {
			fatal(err)
		}
		old := 100
		if !*collect {
			old = debug.SetGCPercent(-1)
		}
		loads = append(loads, time.Since(t))
		runtime.ReadMemStats(&m0)
		t, c := time.Now(), cpuTime()
		var rep *report.Explanation
		pprof.Do(ctx, pprof.Labels("phase", "explain"), func(ctx context.Context) { rep, err = s.Explain(ctx, pod) })
		if err != nil {
			fatal(err)
		}
		exps, cpus = append(exps, time.Since(t)), append(cpus, cpuTime()-c)
		runtime.ReadMemStats(&m1)
		gcs = append(gcs, m1.NumGC-m0.NumGC)
		if !*collect {
			debug.SetGCPercent(old)
		}
		if *check {
			t = time.Now()
			if err := s.CheckTurn(ctx, pod, rep, explain.DefaultTurnBudget, nil); err != nil {
				fatal(err)
			}
			checks = append(checks, time.Since(t))
			if len(checks) == 1 && rep.AtTurn != nil {
				fmt.Printf("turn check: checked %v, agrees %v, skipped %q\n", rep.AtTurn.Checked, rep.AtTurn.Agrees, rep.AtTurn.Skipped)
			}
		}
	}
	fmt.Printf("load        %s\nexplain     %s\nexplain CPU %s\nturn check  %s\ncollections ended during each explanation: %v\n",
		stats(loads), stats(exps), stats(cpus), stats(checks), gcs)
}

// pick returns the pod named ns/name, or with queue >= 0 the pending pod
// at that place of the queue.
func pick(cl *snapshot.Cluster, name string, queue int) (*v1.Pod, error) {
	if queue < 0 {
		ns, n, _ := strings.Cut(name, "/")
		return explain.FindPod(cl, ns, n)
	}
	var pending []*v1.Pod
	for _, p := range cl.Pods {
		if p.Spec.NodeName == "" {
			pending = append(pending, p)
		}
	}
	engine.SortQueueOrder(pending)
	if queue >= len(pending) {
		return nil, fmt.Errorf("-queue %d: the dump has %d pending pods", queue, len(pending))
	}
	return pending[queue], nil
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// stats is the median, p90 and max of ds.
func stats(ds []time.Duration) string {
	if len(ds) == 0 {
		return "-"
	}
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return fmt.Sprintf("median %.1f ms, p90 %.1f ms, max %.1f ms (%d)", ms(s[(len(s)-1)/2]), ms(s[len(s)*9/10]), ms(s[len(s)-1]), len(s))
}

func fatal(err error) {
	fmt.Fprintln(os.Stderr, "explainphases:", err)
	os.Exit(1)
}
