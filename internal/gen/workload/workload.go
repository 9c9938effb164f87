// Package workload generates cluster snapshots for benchmarks: the
// workloads of kube-scheduler's own benchmark (test/integration/
// scheduler_perf in k8s.io/kubernetes v1.37.2, names kept so results read
// next to its published thresholds) and a "mixed" cluster of any size in
// the spirit of the conformance mixed cases.
//
// Every generator is deterministic: the same name, parameters and seed give
// the same objects, byte for byte once written.
//
// scheduler_perf creates its init pods through the API and lets the
// scheduler place them; a snapshot has them already bound. They are bound
// round-robin over the nodes in name order, which is where kube's
// LeastAllocated and BalancedAllocation scores send identical pods on
// identical nodes (up to its random tie-breaking), and keeps every
// required anti-affinity satisfied. The measured pods are pending, created
// one second apart so that the queue order is the creation order.
package workload

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"sort"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// Epoch is the creationTimestamp of the first generated pod.
var Epoch = time.Date(2026, time.January, 1, 0, 0, 0, 0, time.UTC)

// Workload is one generated cluster: objects to load and pods to place.
type Workload struct {
	// Name is "<case>/<workload>", as in scheduler_perf when it is one of its.
	Name       string
	Namespaces []*v1.Namespace
	Nodes      []*v1.Node
	// Services give default topology spreading its selectors (mixed only).
	Services []*v1.Service
	// Existing pods are bound (spec.nodeName set) and Running.
	Existing []*v1.Pod
	// Pending pods have no node; they are what a dry-run places.
	Pending []*v1.Pod
	// DRA holds the resource.k8s.io objects of DRA workloads; nil for others.
	DRA *DRAObjects
}

// Objects returns everything in the order a v1 List of the cluster lists
// it: namespaces, nodes, services, DRA objects (classes, slices, taint
// rules, templates, claims), existing pods, pending pods.
func (w *Workload) Objects() []runtime.Object {
	objs := make([]runtime.Object, 0, len(w.Namespaces)+len(w.Nodes)+len(w.Services)+len(w.Existing)+len(w.Pending))
	for _, o := range w.Namespaces {
		objs = append(objs, o)
	}
	for _, o := range w.Nodes {
		objs = append(objs, o)
	}
	for _, o := range w.Services {
		objs = append(objs, o)
	}
	if d := w.DRA; d != nil {
		for _, o := range d.Classes {
			objs = append(objs, o)
		}
		for _, o := range d.Slices {
			objs = append(objs, o)
		}
		for _, o := range d.TaintRules {
			objs = append(objs, o)
		}
		for _, o := range d.Templates {
			objs = append(objs, o)
		}
		for _, o := range d.Claims {
			objs = append(objs, o)
		}
	}
	for _, o := range w.Existing {
		objs = append(objs, o)
	}
	for _, o := range w.Pending {
		objs = append(objs, o)
	}
	return objs
}

// Params size a scheduler_perf workload, with its parameter names.
type Params struct {
	Nodes int // initNodes
	// InitPods is initPods: pods already running (for MixedSchedulingBasePod,
	// per each of its five init templates, as there).
	InitPods int
	// MeasurePods is measurePods: the pending pods.
	MeasurePods int
	// Seed drives the random name suffixes (kube's generateName).
	Seed uint64
}

// MixedParams size a mixed cluster.
type MixedParams struct {
	Nodes int
	// Pending pods to place; 0 means as many as nodes.
	Pending int
	// RunningPerNode is the average number of running pods per node; 0
	// means 2.
	RunningPerNode float64
	Seed           uint64
}

// Case is one scheduler_perf test case (or "Mixed") with its named sizes.
type Case struct {
	Name string
	// Workloads maps a workload name ("5000Nodes_10000Pods") to its sizes.
	Workloads map[string]Params
	gen       func(name string, p Params) *Workload
}

// Generate builds the case at the given sizes under the given workload name.
func (c *Case) Generate(workload string, p Params) *Workload {
	return c.gen(c.Name+"/"+workload, p)
}

// Cases are the generators, by case name. Workload sizes are
// scheduler_perf's (misc/, affinity/ and topology_spreading/
// performance-config.yaml). For Mixed, InitPods is the number of running
// pods and MeasurePods the pending ones.
var Cases = map[string]*Case{
	"SchedulingBasic": {Name: "SchedulingBasic", gen: SchedulingBasic, Workloads: map[string]Params{
		"5Nodes": {Nodes: 5, InitPods: 5, MeasurePods: 10}, "500Nodes": {Nodes: 500, InitPods: 500, MeasurePods: 1000},
		"5000Nodes": {Nodes: 5000, InitPods: 1000, MeasurePods: 1000}, "5000Nodes_10000Pods": {Nodes: 5000, InitPods: 1000, MeasurePods: 10000},
		"5000Nodes_50000Pods": {Nodes: 5000, InitPods: 5000, MeasurePods: 50000},
	}},
	"SchedulingNodeAffinity": {Name: "SchedulingNodeAffinity", gen: SchedulingNodeAffinity, Workloads: map[string]Params{
		"5Nodes": {Nodes: 5, InitPods: 5, MeasurePods: 10}, "500Nodes": {Nodes: 500, InitPods: 500, MeasurePods: 1000},
		"5000Nodes": {Nodes: 5000, InitPods: 5000, MeasurePods: 1000}, "5000Nodes_10000Pods": {Nodes: 5000, InitPods: 5000, MeasurePods: 10000},
	}},
	"SchedulingPodAntiAffinity": {Name: "SchedulingPodAntiAffinity", gen: SchedulingPodAntiAffinity, Workloads: map[string]Params{
		"5Nodes": {Nodes: 5, InitPods: 1, MeasurePods: 4}, "500Nodes": {Nodes: 500, InitPods: 100, MeasurePods: 400},
		"5000Nodes": {Nodes: 5000, InitPods: 1000, MeasurePods: 1000}, "5000Nodes_2000Pods": {Nodes: 5000, InitPods: 1000, MeasurePods: 2000},
	}},
	"TopologySpreading": {Name: "TopologySpreading", gen: TopologySpreading, Workloads: map[string]Params{
		"5Nodes": {Nodes: 5, InitPods: 10, MeasurePods: 10}, "500Nodes": {Nodes: 500, InitPods: 1000, MeasurePods: 1000},
		"5000Nodes": {Nodes: 5000, InitPods: 5000, MeasurePods: 2000}, "5000Nodes_5000Pods": {Nodes: 5000, InitPods: 5000, MeasurePods: 5000},
	}},
	"PreferredTopologySpreading": {Name: "PreferredTopologySpreading", gen: PreferredTopologySpreading, Workloads: map[string]Params{
		"5Nodes": {Nodes: 5, InitPods: 10, MeasurePods: 10}, "500Nodes": {Nodes: 500, InitPods: 1000, MeasurePods: 1000},
		"5000Nodes": {Nodes: 5000, InitPods: 5000, MeasurePods: 2000}, "5000Nodes_5000Pods": {Nodes: 5000, InitPods: 5000, MeasurePods: 5000},
	}},
	"MixedSchedulingBasePod": {Name: "MixedSchedulingBasePod", gen: MixedSchedulingBasePod, Workloads: map[string]Params{
		"5Nodes": {Nodes: 5, InitPods: 2, MeasurePods: 10}, "500Nodes": {Nodes: 500, InitPods: 200, MeasurePods: 1000},
		"5000Nodes": {Nodes: 5000, InitPods: 2000, MeasurePods: 1000}, "5000Nodes_5000Pods": {Nodes: 5000, InitPods: 2000, MeasurePods: 5000},
	}},
	"SchedulingWithResourceClaimTemplate": {Name: "SchedulingWithResourceClaimTemplate", gen: SchedulingWithResourceClaimTemplate, Workloads: map[string]Params{
		"fast": {Nodes: 1, InitPods: 0, MeasurePods: 10}, "2000pods_200nodes": {Nodes: 200, InitPods: 1000, MeasurePods: 1000},
		"5000pods_500nodes": {Nodes: 500, InitPods: 2500, MeasurePods: 2500},
	}},
	// DRA: InitPods are running pods (most hold a GPU), MeasurePods pending.
	"DRA": {Name: "DRA", gen: DRACluster, Workloads: map[string]Params{
		"40Nodes": {Nodes: 40, InitPods: 60, MeasurePods: 120}, "150Nodes": {Nodes: 150, InitPods: 250, MeasurePods: 300},
		"500Nodes": {Nodes: 500, InitPods: 800, MeasurePods: 1000}, "2000Nodes": {Nodes: 2000, InitPods: 3000, MeasurePods: 3000},
	}},
	"Mixed": {Name: "Mixed", gen: mixedCase, Workloads: map[string]Params{
		"500Nodes": {Nodes: 500, InitPods: 1000, MeasurePods: 1000}, "1000Nodes": {Nodes: 1000, InitPods: 2000, MeasurePods: 2000},
		"5000Nodes": {Nodes: 5000, InitPods: 10000, MeasurePods: 5000}, "15000Nodes": {Nodes: 15000, InitPods: 30000, MeasurePods: 15000},
		// The scale series of issue 36 (the largest clusters in
		// production: 65,000 nodes on GKE, 100,000 on EKS), measured
		// with the default profile.
		"10000Nodes": {Nodes: 10000, InitPods: 30000, MeasurePods: 2000}, "50000Nodes": {Nodes: 50000, InitPods: 150000, MeasurePods: 10000},
		"100000Nodes": {Nodes: 100000, InitPods: 300000, MeasurePods: 20000},
	}},
}

// Names lists every "<case>/<workload>", sorted.
func Names() []string {
	var names []string
	for c, cs := range Cases {
		for w := range cs.Workloads {
			names = append(names, c+"/"+w)
		}
	}
	sort.Strings(names)
	return names
}

// ErrUnknown is returned for a name that is no case or workload.
var ErrUnknown = errors.New("unknown workload")

// Generate builds a named workload: "<case>/<workload>" with the sizes of
// that workload, or "<case>/<N>Nodes" ... with explicit sizes in p when p
// has Nodes set (then the name only picks the case).
func Generate(name string, p Params) (*Workload, error) {
	cname, wname, _ := strings.Cut(name, "/")
	c, ok := Cases[cname]
	if !ok {
		return nil, fmt.Errorf("%w %q: cases are %s", ErrUnknown, name, strings.Join(caseNames(), ", "))
	}
	if p.Nodes > 0 {
		if wname == "" {
			wname = fmt.Sprintf("%dNodes_%dPods", p.Nodes, p.MeasurePods)
		}
		return c.Generate(wname, p), nil
	}
	sizes, ok := c.Workloads[wname]
	if !ok {
		var ws []string
		for w := range c.Workloads {
			ws = append(ws, w)
		}
		sort.Strings(ws)
		return nil, fmt.Errorf("%w %q: workloads of %s are %s", ErrUnknown, name, cname, strings.Join(ws, ", "))
	}
	sizes.Seed = p.Seed
	return c.Generate(wname, sizes), nil
}

func caseNames() []string {
	var names []string
	for c := range Cases {
		names = append(names, c)
	}
	sort.Strings(names)
	return names
}

// nameGen hands out generateName-style names, unique per prefix, with
// kube's alphabet for random suffixes (k8s.io/apimachinery/pkg/util/rand).
type nameGen struct {
	rng  *rand.Rand
	used map[string]bool
}

const suffixAlphabet = "bcdfghjklmnpqrstvwxz2456789"

func newNameGen(seed uint64) *nameGen {
	return &nameGen{rng: rand.New(rand.NewPCG(seed, 0x5eed)), used: map[string]bool{}}
}

// next returns prefix + 5 random characters, never the same twice (kube
// retries a create whose generated name is taken).
func (g *nameGen) next(prefix string) string {
	var b [5]byte
	for {
		for i := range b {
			b[i] = suffixAlphabet[g.rng.IntN(len(suffixAlphabet))]
		}
		n := prefix + string(b[:])
		if !g.used[n] {
			g.used[n] = true
			return n
		}
	}
}

// clock hands out creation timestamps one second apart.
type clock struct{ n int }

func (c *clock) next() metav1.Time {
	t := metav1.NewTime(Epoch.Add(time.Duration(c.n) * time.Second))
	c.n++
	return t
}

func namespaces(names ...string) []*v1.Namespace {
	out := make([]*v1.Namespace, 0, len(names))
	seen := map[string]bool{}
	for _, n := range names {
		if !seen[n] {
			seen[n] = true
			out = append(out, &v1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: n}})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}
