package workload

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	resourcehelper "k8s.io/component-helpers/resource"

	"github.com/kubectl-sched/kubectl-sched/internal/gen/v1list"
)

func generate(t *testing.T, name string, p Params) *Workload {
	t.Helper()
	w, err := Generate(name, p)
	if err != nil {
		t.Fatal(err)
	}
	return w
}

func marshal(t *testing.T, w *Workload) []byte {
	t.Helper()
	b, err := v1list.Marshal("json", w.Objects()...)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestGeneratorsAreDeterministic(t *testing.T) {
	names := []string{"Mixed/500Nodes"}
	for _, n := range Names() {
		if strings.HasSuffix(n, "/5Nodes") {
			names = append(names, n)
		}
	}
	for _, name := range names {
		t.Run(name, func(t *testing.T) {
			a, b := marshal(t, generate(t, name, Params{Seed: 3})), marshal(t, generate(t, name, Params{Seed: 3}))
			if !bytes.Equal(a, b) {
				t.Errorf("two runs with seed 3 differ")
			}
			if c := marshal(t, generate(t, name, Params{Seed: 4})); bytes.Equal(a, c) {
				t.Errorf("seeds 3 and 4 give the same cluster")
			}
		})
	}
}

// mixed500Digest pins the output of Mixed/500Nodes with seed 1: the
// placements kube-scheduler made on it (testdata/kubebench) are only valid
// for these exact objects. If a change to the generator is intended,
// regenerate them with hack/kubebench and update the digest.
const mixed500Digest = "d762b7229474255e68734df82b79f84d0b310f1e0b78c1851593f2692767f277"

func TestMixedOutputIsPinned(t *testing.T) {
	sum := sha256.Sum256(marshal(t, generate(t, "Mixed/500Nodes", Params{Seed: 1})))
	if got := hex.EncodeToString(sum[:]); got != mixed500Digest {
		t.Errorf("Mixed/500Nodes seed 1 changed: sha256 %s, want %s; regenerate testdata/kubebench/mixed-*.place.json", got, mixed500Digest)
	}
}

func TestSchedulerPerfShapes(t *testing.T) {
	wantReq := v1.ResourceList{v1.ResourceCPU: resource.MustParse("100m"), v1.ResourceMemory: resource.MustParse("500Mi")}
	tests := []struct {
		name                 string
		nodes, init, pending int
		nodePrefix           string
		zones                map[string]int
		initNS, pendingNS    string
		pendingLabel         string // color label of the measured pods
	}{
		{"SchedulingBasic/500Nodes", 500, 500, 1000, "node-0-", nil, "namespace-1", "namespace-2", ""},
		{"SchedulingNodeAffinity/500Nodes", 500, 500, 1000, "scheduler-perf-", map[string]int{"zone1": 500}, "namespace-1", "namespace-2", ""},
		{"SchedulingPodAntiAffinity/500Nodes", 500, 100, 400, "node-0-", nil, "sched-0", "sched-1", "green"},
		{"TopologySpreading/500Nodes", 500, 1000, 1000, "scheduler-perf-", map[string]int{"moon-1": 167, "moon-2": 167, "moon-3": 166}, "namespace-1", "namespace-2", "blue"},
		{"PreferredTopologySpreading/500Nodes", 500, 1000, 1000, "scheduler-perf-", map[string]int{"moon-1": 167, "moon-2": 167, "moon-3": 166}, "namespace-1", "namespace-2", "blue"},
		{"MixedSchedulingBasePod/500Nodes", 500, 5 * 200, 1000, "scheduler-perf-", map[string]int{"zone1": 500}, "sched-0", "namespace-7", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := generate(t, tt.name, Params{})
			if len(w.Nodes) != tt.nodes || len(w.Existing) != tt.init || len(w.Pending) != tt.pending {
				t.Fatalf("got %d nodes, %d existing, %d pending; want %d, %d, %d", len(w.Nodes), len(w.Existing), len(w.Pending), tt.nodes, tt.init, tt.pending)
			}
			zones := map[string]int{}
			perNode := map[string]int{}
			for i, n := range w.Nodes {
				if !strings.HasPrefix(n.Name, tt.nodePrefix) || len(n.Name) != len(tt.nodePrefix)+5 {
					t.Errorf("node name %q, want %s + 5 characters", n.Name, tt.nodePrefix)
				}
				if i > 0 && w.Nodes[i-1].Name >= n.Name {
					t.Errorf("nodes not sorted by name at %d", i)
				}
				if n.Labels[v1.LabelHostname] != n.Name || n.Status.Allocatable.Cpu().String() != "4" ||
					n.Status.Allocatable.Memory().String() != "32Gi" || n.Status.Allocatable.Pods().Value() != 110 {
					t.Errorf("node %s: labels %v, allocatable %v", n.Name, n.Labels, n.Status.Allocatable)
				}
				if z, ok := n.Labels[ZoneLabel]; ok {
					zones[z]++
				}
			}
			if diff := cmp.Diff(tt.zones, zones, cmp.Transformer("nilIsEmpty", func(m map[string]int) map[string]int {
				if m == nil {
					return map[string]int{}
				}
				return m
			})); diff != "" {
				t.Errorf("zones (-want +got):\n%s", diff)
			}
			last := ""
			for _, p := range append(append([]*v1.Pod{}, w.Existing...), w.Pending...) {
				if ts := p.CreationTimestamp.UTC().Format("20060102150405"); ts <= last {
					t.Fatalf("pod %s: creation times not strictly increasing", p.Name)
				} else {
					last = ts
				}
				c := p.Spec.Containers[0]
				if diff := cmp.Diff(wantReq, c.Resources.Requests); diff != "" || c.Image != pauseImage || c.Ports[0].ContainerPort != 80 || c.Ports[0].HostPort != 0 {
					t.Fatalf("pod %s: container %+v", p.Name, c)
				}
			}
			for _, p := range w.Existing {
				if p.Namespace != tt.initNS || p.Spec.NodeName == "" || p.Status.Phase != v1.PodRunning {
					t.Fatalf("existing pod %s/%s on %q, phase %s", p.Namespace, p.Name, p.Spec.NodeName, p.Status.Phase)
				}
				perNode[p.Spec.NodeName]++
			}
			for n, c := range perNode {
				if want := (tt.init + tt.nodes - 1) / tt.nodes; c > want {
					t.Errorf("node %s has %d existing pods, want at most %d (round-robin)", n, c, want)
				}
			}
			for _, p := range w.Pending {
				if p.Namespace != tt.pendingNS || p.Spec.NodeName != "" || p.Labels["color"] != tt.pendingLabel {
					t.Fatalf("pending pod %s/%s on %q, labels %v", p.Namespace, p.Name, p.Spec.NodeName, p.Labels)
				}
			}
		})
	}
}

func TestTemplateConstraints(t *testing.T) {
	aff := generate(t, "SchedulingNodeAffinity/5Nodes", Params{}).Pending[0].Spec.Affinity.NodeAffinity
	if got := aff.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms[0].MatchExpressions[0]; got.Key != ZoneLabel || strings.Join(got.Values, ",") != "zone1,zone2" {
		t.Errorf("node affinity %+v", got)
	}
	anti := generate(t, "SchedulingPodAntiAffinity/5Nodes", Params{}).Pending[0].Spec.Affinity.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution[0]
	if anti.TopologyKey != v1.LabelHostname || anti.LabelSelector.MatchLabels["color"] != "green" || strings.Join(anti.Namespaces, ",") != "sched-1,sched-0" {
		t.Errorf("anti-affinity %+v", anti)
	}
	for name, when := range map[string]v1.UnsatisfiableConstraintAction{"TopologySpreading/5Nodes": v1.DoNotSchedule, "PreferredTopologySpreading/5Nodes": v1.ScheduleAnyway} {
		c := generate(t, name, Params{}).Pending[0].Spec.TopologySpreadConstraints[0]
		if c.MaxSkew != 5 || c.TopologyKey != ZoneLabel || c.WhenUnsatisfiable != when || c.LabelSelector.MatchLabels["color"] != "blue" {
			t.Errorf("%s: constraint %+v", name, c)
		}
	}
	mixed := generate(t, "MixedSchedulingBasePod/5Nodes", Params{})
	colors := map[string]int{}
	for _, p := range mixed.Existing {
		colors[p.Labels["color"]]++
	}
	if diff := cmp.Diff(map[string]int{"": 2, "blue": 2, "green": 2, "red": 2, "yellow": 2}, colors); diff != "" {
		t.Errorf("init pods per template (-want +got):\n%s", diff)
	}
}

func TestExplicitSizesAndUnknownNames(t *testing.T) {
	w := generate(t, "SchedulingBasic", Params{Nodes: 7, InitPods: 3, MeasurePods: 11})
	if w.Name != "SchedulingBasic/7Nodes_11Pods" || len(w.Nodes) != 7 || len(w.Existing) != 3 || len(w.Pending) != 11 {
		t.Errorf("got %s with %d nodes, %d existing, %d pending", w.Name, len(w.Nodes), len(w.Existing), len(w.Pending))
	}
	for _, name := range []string{"Nope/5Nodes", "SchedulingBasic/6Nodes", "SchedulingBasic"} {
		if _, err := Generate(name, Params{}); !errors.Is(err, ErrUnknown) {
			t.Errorf("%s: got %v, want ErrUnknown", name, err)
		}
	}
}

func TestMixedRunningPodsFitAndFeaturesAppear(t *testing.T) {
	w := Mixed(MixedParams{Nodes: 500, Seed: 1})
	if w.Name != "Mixed/500Nodes_500Pods" || len(w.Nodes) != 500 || len(w.Pending) != 500 {
		t.Fatalf("got %s: %d nodes, %d pending", w.Name, len(w.Nodes), len(w.Pending))
	}
	if len(w.Existing) < 900 {
		t.Errorf("got %d running pods, want about 1000", len(w.Existing))
	}
	nodes := map[string]*v1.Node{}
	for _, n := range w.Nodes {
		nodes[n.Name] = n
	}
	type use struct {
		cpu, mem, gpu int64
		pods          int
		ports         map[int32]bool
		apps          map[string]bool
	}
	used := map[string]*use{}
	for _, p := range w.Existing {
		n := nodes[p.Spec.NodeName]
		if n == nil || n.Spec.Unschedulable {
			t.Fatalf("pod %s on node %q (unschedulable: %v)", p.Name, p.Spec.NodeName, n != nil)
		}
		u := used[n.Name]
		if u == nil {
			u = &use{ports: map[int32]bool{}, apps: map[string]bool{}}
			used[n.Name] = u
		}
		req := resourcehelper.PodRequests(p, resourcehelper.PodResourcesOptions{})
		u.cpu += req.Cpu().MilliValue()
		u.mem += req.Memory().Value()
		g := req[GPUResource]
		u.gpu += g.Value()
		u.pods++
		for _, c := range p.Spec.Containers {
			for _, port := range c.Ports {
				if port.HostPort != 0 {
					if u.ports[port.HostPort] {
						t.Errorf("node %s: host port %d used twice", n.Name, port.HostPort)
					}
					u.ports[port.HostPort] = true
				}
			}
		}
		if a := p.Spec.Affinity; a != nil && a.PodAntiAffinity != nil && len(a.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution) > 0 {
			if u.apps[p.Labels["app"]] {
				t.Errorf("node %s: two pods of %s despite required anti-affinity", n.Name, p.Labels["app"])
			}
		}
		u.apps[p.Labels["app"]] = true
	}
	for name, u := range used {
		a := nodes[name].Status.Allocatable
		g := a[GPUResource]
		if u.cpu > a.Cpu().MilliValue() || u.mem > a.Memory().Value() || u.gpu > g.Value() || int64(u.pods) > a.Pods().Value() {
			t.Errorf("node %s over-committed: %+v of %v", name, u, a)
		}
	}

	features := map[string]int{}
	for _, p := range w.Pending {
		s := p.Spec
		count := func(f string, ok bool) {
			if ok {
				features[f]++
			}
		}
		count("nodeSelector", len(s.NodeSelector) > 0)
		count("requiredNodeAffinity", s.Affinity != nil && s.Affinity.NodeAffinity != nil && s.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution != nil)
		count("preferredNodeAffinity", s.Affinity != nil && s.Affinity.NodeAffinity != nil && len(s.Affinity.NodeAffinity.PreferredDuringSchedulingIgnoredDuringExecution) > 0)
		count("podAntiAffinity", s.Affinity != nil && s.Affinity.PodAntiAffinity != nil)
		count("podAffinity", s.Affinity != nil && s.Affinity.PodAffinity != nil)
		count("topologySpread", len(s.TopologySpreadConstraints) > 0)
		count("initContainers", len(s.InitContainers) > 0)
		count("overhead", s.Overhead != nil)
		count("priority", s.Priority != nil && *s.Priority > 0)
		count("gpu", !s.Containers[0].Resources.Requests.Name(GPUResource, resource.DecimalSI).IsZero())
		count("hostPort", len(s.Containers[0].Ports) > 0)
	}
	for _, f := range []string{"nodeSelector", "requiredNodeAffinity", "preferredNodeAffinity", "podAntiAffinity", "podAffinity",
		"topologySpread", "initContainers", "overhead", "priority", "gpu", "hostPort"} {
		if features[f] == 0 {
			t.Errorf("no pending pod with %s (counts %v)", f, features)
		}
	}
	if len(w.Services) == 0 {
		t.Errorf("no Services")
	}
}
