// Command fgd runs the FGD paper's experiment on the engine (see
// docs/fgd.md): every policy on every seed, in parallel, and prints the
// table beside the paper's.
//
//	go run ./hack/fgd                  # 6 policies + kube rows x 10 seeds
//	go run ./hack/fgd -policy FGD -seeds 1
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
	"runtime/debug"
	"runtime/pprof"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/kubectl-sched/kubectl-sched/internal/fgd"
	"github.com/kubectl-sched/kubectl-sched/internal/gen/v1list"
	"github.com/kubectl-sched/kubectl-sched/internal/memusage"
)

func main() { os.Exit(run(os.Args[1:], os.Stdout, os.Stderr)) }

func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("fgd", flag.ContinueOnError)
	fs.SetOutput(stderr)
	nodes := fs.String("nodes", "testdata/openb/openb_node_list_all_node.csv", "openb node list")
	podsCSV := fs.String("pods", "testdata/openb/openb_pod_list_default.csv", "openb pod list")
	seeds := fs.Int("seeds", 10, "number of seeds (42, 43, ...: the artifact's)")
	firstSeed := fs.Int64("first-seed", 42, "the first seed (-first-seed 44 -seeds 2: seeds 44 and 45)")
	only := fs.String("policy", "", "comma-separated policies to run (default: all)")
	workers := fs.Int("workers", runtime.NumCPU(), "runs in parallel")
	jsonOut := fs.String("json", "", "write the rows as JSON to this file")
	svgOut := fs.String("svg", "", "draw the allocation curves (the paper's Fig. 9a) into this SVG file")
	uniform := fs.Bool("uniform-ties", false, "break ties uniformly at random in the paper's rows too, as kube-scheduler does (the artifact picks the lowest node name)")
	from := fs.String("from", "", "print the table (and -svg) from rows saved with -json, without running")
	configsDir := fs.String("configs", "", "write each policy's KubeSchedulerConfiguration into this directory and exit")
	dumpDir := fs.String("dump", "", "write each seed's workload as cluster dumps (seed-N.json; seed-N-dra.json in the DRA mapping) into this directory and exit, for kubectl sched dryrun -f with a -configs file")
	cpuProfile := fs.String("cpuprofile", "", "write a CPU profile to this file")
	gogc := fs.Int("gogc", 400, "garbage collector target percentage (the runs allocate much, briefly)")
	study := fs.String("study", "", "compare the results of a sweep of this study (kubectl sched sweep -f STUDY; hack/fgd/study.yaml is the artifact's whole study) with the artifact's expected curves, without running")
	figures := fs.String("figures", "", "with -study: draw the artifact's four bar charts of unallocated GPU at 100% arrived (the paper's Figs. 11-13), ours beside the artifact's, as SVG files into this directory, and print their numbers as Markdown tables")
	studyResults := fs.String("results", "", "with -study: the sweep's results directory (default: STUDY.results beside the study)")
	memLimit := fs.String("memlimit", "3Gi", "soft limit of the Go runtime's memory (debug.SetMemoryLimit; 0: none): near it the collector runs more often than -gogc says, so two DRA replays at a time stay under 4 GB resident")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *cpuProfile != "" {
		f, err := os.Create(*cpuProfile)
		if err != nil {
			fmt.Fprintf(stderr, "fgd: %v\n", err)
			return 1
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			fmt.Fprintf(stderr, "fgd: %v\n", err)
			return 1
		}
		defer pprof.StopCPUProfile()
	}
	if *study != "" {
		rows, err := compareStudy(*study, *studyResults)
		if err != nil {
			fmt.Fprintf(stderr, "fgd: %v\n", err)
			return 2
		}
		printStudy(stdout, rows)
		if *figures != "" {
			if err := writeFigures(*figures, rows, stdout); err != nil {
				fmt.Fprintf(stderr, "fgd: %v\n", err)
				return 1
			}
		}
		return 0
	}
	if *from != "" {
		data, err := os.ReadFile(*from)
		if err != nil {
			fmt.Fprintf(stderr, "fgd: %v\n", err)
			return 2
		}
		var saved struct{ Rows []fgd.Row }
		if err := json.Unmarshal(data, &saved); err != nil {
			fmt.Fprintf(stderr, "fgd: %s: %v\n", *from, err)
			return 2
		}
		fgd.PrintTable(stdout, saved.Rows)
		return writeSVG(*svgOut, saved.Rows, stderr)
	}
	debug.SetGCPercent(*gogc)
	limit, err := resource.ParseQuantity(*memLimit)
	if err != nil || limit.Sign() < 0 {
		fmt.Fprintf(stderr, "fgd: -memlimit %q: want a size such as 3Gi\n", *memLimit)
		return 2
	}
	if limit.Sign() > 0 {
		debug.SetMemoryLimit(limit.Value())
	}
	t, err := fgd.LoadTrace(*nodes, *podsCSV)
	if err != nil {
		fmt.Fprintf(stderr, "fgd: %v\n", err)
		return 2
	}
	policies, err := fgd.Policies(t.Typical)
	if err != nil {
		fmt.Fprintf(stderr, "fgd: %v\n", err)
		return 1
	}
	if *uniform {
		for i := range policies {
			if !policies[i].UniformTies {
				policies[i].UniformTies = true
				policies[i].Name += "/uniform-ties"
			}
		}
	}
	if *configsDir != "" {
		if err := os.MkdirAll(*configsDir, 0o755); err != nil {
			fmt.Fprintf(stderr, "fgd: %v\n", err)
			return 1
		}
		for _, p := range policies {
			name := strings.ReplaceAll(strings.ToLower(p.Name), "/", "-") + ".yaml"
			if err := os.WriteFile(filepath.Join(*configsDir, name), []byte(p.Config), 0o644); err != nil {
				fmt.Fprintf(stderr, "fgd: %v\n", err)
				return 1
			}
		}
		return 0
	}
	if *dumpDir != "" {
		return dump(t, *dumpDir, *firstSeed, *seeds, stderr)
	}
	if *only != "" {
		var sel []fgd.Policy
		for _, name := range strings.Split(*only, ",") {
			found := false
			for _, p := range policies {
				if name == p.Name || name == strings.TrimSuffix(p.Name, "/uniform-ties") {
					sel, found = append(sel, p), true
				}
			}
			if !found {
				var all []string
				for _, p := range policies {
					all = append(all, p.Name)
				}
				fmt.Fprintf(stderr, "fgd: -policy: unknown policy %q (want %s)\n", name, strings.Join(all, ", "))
				return 2
			}
		}
		policies = sel
	}
	jobs := fgd.Jobs(policies, *seeds)
	for i := range jobs {
		jobs[i].Seed += *firstSeed - 42
	}
	start := time.Now()
	fmt.Fprintf(stderr, "fgd: %d replays (%d policies x %d seeds), %d at a time\n", len(jobs), len(policies), *seeds, *workers)
	results, err := fgd.Sweep(context.Background(), t, jobs, 1.3, *workers, func(done, total int) {
		fmt.Fprintf(stderr, "fgd: [%d/%d] replays done, %.0fs\n", done, total, time.Since(start).Seconds())
	})
	if err != nil {
		fmt.Fprintf(stderr, "fgd: %v\n", err)
		return 1
	}
	for _, r := range results {
		fmt.Fprintf(stderr, "%-22s seed %d: %d/%d placed, alloc@100 %.2f @130 %.2f frag@130 %.2f, at most %d pods on a node (%.1fs)\n",
			r.Policy, r.Seed, r.Placed, r.Pods, r.Metrics.Alloc[100], r.Metrics.Alloc[fgd.MaxPct], r.Metrics.Frag[fgd.MaxPct], r.Metrics.MaxPodsPerNode, r.Elapsed.Seconds())
	}
	rows := fgd.Summarize(results)
	fgd.PrintTable(stdout, rows)
	if code := writeSVG(*svgOut, rows, stderr); code != 0 {
		return code
	}
	if *jsonOut != "" {
		b, _ := json.MarshalIndent(map[string]any{"rows": rows}, "", "  ")
		if err := os.WriteFile(*jsonOut, append(b, '\n'), 0o644); err != nil {
			fmt.Fprintf(stderr, "fgd: %v\n", err)
			return 1
		}
	}
	fmt.Fprintf(stderr, "fgd: %d runs in %.1fs, %s\n", len(jobs), time.Since(start).Seconds(), peakLine())
	return 0
}

// peakLine says the most memory the process held: its resident set's
// peak, or where the system does not tell it, what it holds now.
func peakLine() string {
	if p, ok := memusage.Peak(); ok {
		return "peak " + memusage.Format(p) + " resident"
	}
	return memusage.Format(memusage.Resident()) + " held at the end"
}

// writeSVG draws the rows' curves with the paper's into path ("" = none).
func writeSVG(path string, rows []fgd.Row, stderr io.Writer) int {
	if path == "" {
		return 0
	}
	pc, err := fgd.LoadPaper()
	if err != nil {
		fmt.Fprintf(stderr, "fgd: %v\n", err)
		return 1
	}
	var b strings.Builder
	if err := fgd.WriteAllocSVG(&b, rows, pc.Alloc); err != nil {
		fmt.Fprintf(stderr, "fgd: %v\n", err)
		return 1
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		fmt.Fprintf(stderr, "fgd: %v\n", err)
		return 1
	}
	return 0
}

// dump writes the workloads of seeds first.. in both mappings into dir.
func dump(t *fgd.Trace, dir string, first int64, seeds int, stderr io.Writer) int {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		fmt.Fprintf(stderr, "fgd: %v\n", err)
		return 1
	}
	for s := 0; s < seeds; s++ {
		seed := first + int64(s)
		for _, dra := range []bool{false, true} {
			objs, err := t.Dump(seed, 1.3, dra)
			if err != nil {
				fmt.Fprintf(stderr, "fgd: %v\n", err)
				return 1
			}
			b, err := v1list.Marshal("json", objs...)
			if err != nil {
				fmt.Fprintf(stderr, "fgd: %v\n", err)
				return 1
			}
			name := fmt.Sprintf("seed-%d.json", seed)
			if dra {
				name = fmt.Sprintf("seed-%d-dra.json", seed)
			}
			if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
				fmt.Fprintf(stderr, "fgd: %v\n", err)
				return 1
			}
		}
	}
	return 0
}
