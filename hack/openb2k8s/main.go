// Command openb2k8s converts the Alibaba GPU trace "openb" (see
// internal/gen/openb for the mapping) into a v1 List of a Namespace, Nodes
// and pending Pods that `kubectl sched dryrun -f` reads:
//
//	go run ./hack/openb2k8s -limit 400 > /tmp/openb.yaml
//	go run ./hack/openb2k8s -pods testdata/openb/openb_pod_list_gpuspec33.csv -output-file /tmp/openb.json
//	go run ./hack/openb2k8s -departures -output-file /tmp/openb-trace.yaml   # a trace for kubectl sched replay
//
// -o is the format (yaml or json), as in kubectl; -output-file the file,
// written as snapshot's --output-file is (atomically, links followed).
//
// The first command reproduces testdata/conformance/openb-400/snapshot.json
// (as YAML, with canonical quantities). -gpu chooses how GPU requests are
// written (internal/gen/openb): whole (nvidia.com/gpu, the default),
// gpushare (the gpushare plugins' annotations) or dra (resource claims;
// the DeviceClass, the GPU nodes' ResourceSlices and the claim templates
// are written too). The FGD paper's cluster and pod list:
//
//	go run ./hack/openb2k8s -gpu gpushare -gpu-nodes-only -keep-failed -output-file /tmp/fgd.yaml
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

	v1 "k8s.io/api/core/v1"
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
	out := fs.String("output-file", "-", "output file (- is standard output)")
	format := fs.String("o", "", "output format: json or yaml (default: json for a .json -output-file, else yaml)")
	fs.StringVar(format, "format", "", "the former name of -o")
	gpu := fs.String("gpu", "whole", "GPU requests as whole (nvidia.com/gpu), gpushare (annotations) or dra (resource claims)")
	keepFailed := fs.Bool("keep-failed", false, "keep the pods whose pod_phase is Failed (the FGD artifact does)")
	gpuNodesOnly := fs.Bool("gpu-nodes-only", false, "keep only the nodes with GPUs (the FGD paper's cluster)")
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
	f, err := v1list.Format(*format, *out)
	if err != nil {
		fmt.Fprintf(stderr, "openb2k8s: %v\n", err)
		return 2
	}
	mapping, ok := map[string]openb.GPUMapping{"whole": openb.GPUWhole, "gpushare": openb.GPUShare, "dra": openb.GPUDRA}[*gpu]
	if !ok {
		fmt.Fprintf(stderr, "openb2k8s: -gpu: unsupported value %q (want whole, gpushare or dra)\n", *gpu)
		return 2
	}
	opts := openb.Options{Limit: *limit, Namespace: *ns, GPU: mapping, KeepFailed: *keepFailed, Departures: *departures}
	n, p, err := openb.LoadFiles(*nodes, *pods, opts)
	if err != nil {
		fmt.Fprintf(stderr, "openb2k8s: %v\n", err)
		if errors.Is(err, openb.ErrInvalid) || errors.Is(err, os.ErrNotExist) {
			return 2
		}
		return 1
	}
	if *gpuNodesOnly {
		var gpuNodes []*v1.Node
		for _, x := range n {
			if q := x.Status.Allocatable[openb.GPUResource]; q.Value() > 0 {
				gpuNodes = append(gpuNodes, x)
			}
		}
		n = gpuNodes
	}
	objs := make([]runtime.Object, 0, 1+len(n)+len(p))
	objs = append(objs, openb.NamespaceObject(opts))
	for _, x := range n {
		objs = append(objs, x)
	}
	if mapping == openb.GPUDRA {
		tmpls, err := openb.DRAClaimTemplates(p)
		if err != nil {
			fmt.Fprintf(stderr, "openb2k8s: %v\n", err)
			return 1
		}
		objs = append(objs, openb.DRADeviceClass())
		for _, x := range openb.DRAResourceSlices(n) {
			objs = append(objs, x)
		}
		for _, x := range tmpls {
			objs = append(objs, x)
		}
	}
	for _, x := range p {
		objs = append(objs, x)
	}
	b, err := v1list.Marshal(f, objs...)
	if err != nil {
		fmt.Fprintf(stderr, "openb2k8s: %v\n", err)
		return 2
	}
	if err := v1list.WriteOutput(*out, b, stdout); err != nil {
		fmt.Fprintf(stderr, "openb2k8s: writing %s: %v\n", *out, err)
		return 1
	}
	fmt.Fprintf(stderr, "openb2k8s: %d nodes, %d pending pods\n", len(n), len(p))
	return 0
}
