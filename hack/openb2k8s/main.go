// Command openb2k8s converts the Alibaba GPU trace "openb" (see
// internal/gen/openb for the mapping) into a v1 List of a Namespace, Nodes
// and pending Pods that `kubectl sched dryrun -f` reads:
//
//	go run ./hack/openb2k8s -limit 400 > /tmp/openb.yaml
//	go run ./hack/openb2k8s -pods testdata/openb/openb_pod_list_gpuspec33.csv -o /tmp/openb.json
//	go run ./hack/openb2k8s -departures -o /tmp/openb-trace.yaml   # a trace for kubectl sched replay
//
// The first command reproduces testdata/conformance/openb-400/snapshot.json
// (as YAML, with canonical quantities).
package main

import (
	"bufio"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kubectl-sched/kubectl-sched/internal/gen/openb"
	"github.com/kubectl-sched/kubectl-sched/internal/gen/v1list"
)

func main() { os.Exit(run(os.Args[1:], os.Stdout, os.Stderr)) }

func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("openb2k8s", flag.ContinueOnError)
	fs.SetOutput(stderr)
	nodes := fs.String("nodes", "testdata/openb/openb_node_list_all_node.csv", "node list CSV (sn,cpu_milli,memory_mib,gpu,model)")
	pods := fs.String("pods", "testdata/openb/openb_pod_list_default.csv", "pod list CSV (name,cpu_milli,memory_mib,num_gpu,...)")
	limit := fs.Int("limit", 0, "keep the first N non-failed pods (0: all)")
	ns := fs.String("namespace", openb.Namespace, "namespace of the pods")
	out := fs.String("o", "-", "output file; .json writes JSON, anything else YAML; - is standard output")
	format := fs.String("format", "", "json or yaml (default: from the -o extension, else yaml)")
	departures := fs.Bool("departures", false, "set each pod's deletionTimestamp from deletion_time: a trace for kubectl sched replay")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "openb2k8s: unexpected arguments %q\n", fs.Args())
		return 2
	}
	if *limit < 0 {
		fmt.Fprintln(stderr, "openb2k8s: -limit must not be negative")
		return 2
	}
	f := *format
	if f == "" {
		f = "yaml"
		if strings.EqualFold(filepath.Ext(*out), ".json") {
			f = "json"
		}
	}
	opts := openb.Options{Limit: *limit, Namespace: *ns, Departures: *departures}
	n, p, err := openb.LoadFiles(*nodes, *pods, opts)
	if err != nil {
		fmt.Fprintf(stderr, "openb2k8s: %v\n", err)
		if errors.Is(err, openb.ErrInvalid) || errors.Is(err, os.ErrNotExist) {
			return 2
		}
		return 1
	}
	objs := make([]runtime.Object, 0, 1+len(n)+len(p))
	objs = append(objs, openb.NamespaceObject(opts))
	for _, x := range n {
		objs = append(objs, x)
	}
	for _, x := range p {
		objs = append(objs, x)
	}
	b, err := v1list.Marshal(f, objs...)
	if err != nil {
		fmt.Fprintf(stderr, "openb2k8s: %v\n", err)
		return 2
	}
	if err := writeOut(*out, b, stdout); err != nil {
		fmt.Fprintf(stderr, "openb2k8s: writing %s: %v\n", *out, err)
		return 1
	}
	fmt.Fprintf(stderr, "openb2k8s: %d nodes, %d pending pods\n", len(n), len(p))
	return 0
}

func writeOut(path string, b []byte, stdout io.Writer) error {
	if path == "-" || path == "" {
		w := bufio.NewWriter(stdout)
		if _, err := w.Write(b); err != nil {
			return err
		}
		return w.Flush()
	}
	return os.WriteFile(path, b, 0o644)
}
