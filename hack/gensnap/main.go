// Command gensnap writes a generated benchmark cluster (internal/gen/workload)
// as a v1 List that `kubectl sched dryrun -f` and hack/kubebench read:
//
//	go run ./hack/gensnap -list
//	go run ./hack/gensnap -w SchedulingBasic/5000Nodes_10000Pods -output-file /tmp/basic.json
//	go run ./hack/gensnap -w Mixed -nodes 5000 -init 10000 -pending 5000 -seed 7 > /tmp/mixed.yaml
//	go run ./hack/gensnap -gang mixed -nodes 64 -seed 1 -output-file /tmp/gang.yaml
//
// -gang mixed|topology|bench writes a GPU cluster with Workload API groups
// (internal/gen/gang), the input of hack/kubebench's -gang mode (bench:
// make bench's Gang workload).
//
// Named workloads keep scheduler_perf's sizes; -nodes (with -init and
// -pending) sets explicit sizes for the case instead.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/kubectl-sched/kubectl-sched/internal/gen/gang"
	"github.com/kubectl-sched/kubectl-sched/internal/gen/v1list"
	"github.com/kubectl-sched/kubectl-sched/internal/gen/workload"
)

func main() { os.Exit(run(os.Args[1:], os.Stdout, os.Stderr)) }

func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("gensnap", flag.ContinueOnError)
	fs.SetOutput(stderr)
	name := fs.String("w", "", `workload, "<case>/<workload>" (see -list), or "<case>" with -nodes`)
	list := fs.Bool("list", false, "list the named workloads and exit")
	nodes := fs.Int("nodes", 0, "explicit node count (then -init and -pending too)")
	initPods := fs.Int("init", 0, "explicit running pods (per init template for MixedSchedulingBasePod)")
	pending := fs.Int("pending", 0, "explicit pending pods")
	seed := fs.Uint64("seed", 1, "seed of the random parts (names, mixed features)")
	out := fs.String("output-file", "-", "output file (- is standard output)")
	format := fs.String("o", "", "output format: json or yaml (default: json for a .json -output-file, else yaml)")
	fs.StringVar(format, "format", "", "the former name of -o")
	gangShape := fs.String("gang", "", `a GPU cluster with workload groups (internal/gen/gang): "mixed", "topology" or "bench" (make bench's Gang workload), sized by -nodes`)
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *gangShape != "" {
		return runGang(*gangShape, *nodes, *seed, *format, *out, stdout, stderr)
	}
	if *list {
		for _, n := range workload.Names() {
			fmt.Fprintln(stdout, n)
		}
		return 0
	}
	if *name == "" || fs.NArg() > 0 {
		fmt.Fprintln(stderr, "gensnap: want -w NAME (see -list) and no arguments")
		return 2
	}
	if *nodes < 0 || *initPods < 0 || *pending < 0 {
		fmt.Fprintln(stderr, "gensnap: sizes must not be negative")
		return 2
	}
	w, err := workload.Generate(*name, workload.Params{Nodes: *nodes, InitPods: *initPods, MeasurePods: *pending, Seed: *seed})
	if err != nil {
		fmt.Fprintf(stderr, "gensnap: %v\n", err)
		if errors.Is(err, workload.ErrUnknown) {
			return 2
		}
		return 1
	}
	f, err := v1list.Format(*format, *out)
	if err != nil {
		fmt.Fprintf(stderr, "gensnap: %v\n", err)
		return 2
	}
	b, err := v1list.Marshal(f, w.Objects()...)
	if err != nil {
		fmt.Fprintf(stderr, "gensnap: %v\n", err)
		return 2
	}
	if err := v1list.WriteOutput(*out, b, stdout); err != nil {
		fmt.Fprintf(stderr, "gensnap: writing %s: %v\n", *out, err)
		return 1
	}
	fmt.Fprintf(stderr, "gensnap: %s: %d nodes, %d running, %d pending pods\n", w.Name, len(w.Nodes), len(w.Existing), len(w.Pending))
	return 0
}

func runGang(shape string, nodes int, seed uint64, format, out string, stdout, stderr io.Writer) int {
	var c *gang.Cluster
	var err error
	switch shape {
	case "mixed", "topology":
		c, err = gang.Generate(gang.Params{Nodes: nodes, Seed: seed, Topology: shape == "topology"})
	case "bench":
		c, err = gang.GenerateBench(gang.BenchParams{Nodes: nodes, Seed: seed})
	default:
		fmt.Fprintf(stderr, "gensnap: -gang %q: want mixed, topology or bench\n", shape)
		return 2
	}
	if err != nil {
		fmt.Fprintf(stderr, "gensnap: %v\n", err)
		return 2
	}
	f, err := v1list.Format(format, out)
	if err != nil {
		fmt.Fprintf(stderr, "gensnap: %v\n", err)
		return 2
	}
	b, err := v1list.Marshal(f, c.Objects()...)
	if err != nil {
		fmt.Fprintf(stderr, "gensnap: %v\n", err)
		return 1
	}
	if err := v1list.WriteOutput(out, b, stdout); err != nil {
		fmt.Fprintf(stderr, "gensnap: writing %s: %v\n", out, err)
		return 1
	}
	fmt.Fprintf(stderr, "gensnap: %s: %d nodes, %d running, %d pending pods, %d PodGroups\n", c.Name, len(c.Nodes), len(c.Running), len(c.Pending), len(c.PodGroups))
	return 0
}
