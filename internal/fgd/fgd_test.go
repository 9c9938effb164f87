package fgd

import (
	"context"
	"encoding/xml"
	"io"
	"math"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubectl-sched/kubectl-sched/internal/gen/openb"
	"github.com/kubectl-sched/kubectl-sched/plugins/gpushare"
)

func TestRound2IsPythonsRound(t *testing.T) {
	tests := []struct{ in, want float64 }{
		{0.125, 0.12}, // exactly a tie in binary: to even
		{0.375, 0.38}, // a tie: to even
		{0.135, 0.14}, // 0.13500000000000000888: above the tie
		{95.2849, 95.28},
		{-1.005, -1}, // -1.00499999999999989...
	}
	for _, tt := range tests {
		if got := round2(tt.in); got != tt.want {
			t.Errorf("round2(%v) = %v, want %v", tt.in, got, tt.want)
		}
	}
}

// TestMeasure follows the artifact's bookkeeping on a hand-made run: one
// node with 2 GPUs and 8 cores, three pods arriving, the last one failing.
func TestMeasure(t *testing.T) {
	node := &v1.Node{}
	node.Name = "n"
	node.Labels = map[string]string{openb.LabelGPUModel: "T4"}
	node.Status.Allocatable = v1.ResourceList{"cpu": resource.MustParse("8"), openb.GPUResource: resource.MustParse("2")}
	pod := func(name string, milli int64, cpu string) *v1.Pod {
		p := &v1.Pod{}
		p.Name, p.Namespace, p.UID = name, "openb", types.UID(name)
		p.Annotations = map[string]string{openb.AnnotationGPUCount: "1", openb.AnnotationGPUMilli: strconv.FormatInt(milli, 10)}
		p.Spec.Containers = []v1.Container{{Resources: v1.ResourceRequirements{Requests: v1.ResourceList{"cpu": resource.MustParse(cpu)}}}}
		return p
	}
	pods := []*v1.Pod{pod("a", 500, "2"), pod("b", 1000, "2"), pod("c", 600, "2")}
	placed := map[string]string{"openb/a": "n", "openb/b": "n"}
	gpusOf := func(uid types.UID) (string, []int, bool) {
		return "n", map[types.UID][]int{"a": {0}, "b": {1}}[uid], uid != "c"
	}
	// One typical pod: 1x500m with 1 core, weight 1.
	model := gpushare.NewFragModel([]gpushare.TypicalPod{{MilliCPU: 1000, GPUMilli: 500, GPUCount: 1, Weight: 1}}, 100)
	m, err := measure([]*v1.Node{node}, 2000, pods, placed, gpusOf, model)
	if err != nil {
		t.Fatal(err)
	}
	// Events: (arrived 0, used 0), (500, 500), (1500, 1500), (2100, 1500);
	// of 2 GPUs: arrived 0%, 25%, 75%, 105%; allocated 0%, 25%, 75%, 75%.
	nan := math.NaN()
	want := map[int]float64{0: 0, 1: 0, 2: nan, 24: 25, 25: 25, 26: 25, 50: nan, 75: 75, 104: 75, 105: 75, 106: 75, 130: nan}
	for x, w := range want {
		if got := m.Alloc[x]; !(got == w || math.IsNaN(got) && math.IsNaN(w)) {
			t.Errorf("Alloc[%d] = %v, want %v", x, got, w)
		}
	}
	// Fragmentation of the typical 1x500m pod: empty [1000 1000]: 0; after
	// a: [500 1000]: 0 (both hold 500m); after b: [500 0]: 0 (the 0 GPU
	// is not free). A 1x600m typical pod would see 500m unusable.
	if m.Frag[75] != 0 || m.Frag[105] != 0 {
		t.Errorf("Frag[75], Frag[105] = %v, %v, want 0, 0", m.Frag[75], m.Frag[105])
	}
	model600 := gpushare.NewFragModel([]gpushare.TypicalPod{{MilliCPU: 1000, GPUMilli: 600, GPUCount: 1, Weight: 1}}, 100)
	m, err = measure([]*v1.Node{node}, 2000, pods, placed, gpusOf, model600)
	if err != nil {
		t.Fatal(err)
	}
	// After a: [500 1000]: 500 unusable to a 600m pod: 100*500/1000/2 =
	// 25%; after b: [500 0]: the pod fits nowhere: all 500 free: 25%.
	if m.Frag[25] != 25 || m.Frag[75] != 25 || m.Failed != 1 || m.MaxPodsPerNode != 2 {
		t.Errorf("Frag[25] %v Frag[75] %v Failed %d MaxPods %d, want 25 25 1 2", m.Frag[25], m.Frag[75], m.Failed, m.MaxPodsPerNode)
	}
	// A pod reported on a node its GPUs are not on is an error.
	if _, err := measure([]*v1.Node{node}, 2000, pods, placed, func(types.UID) (string, []int, bool) { return "other", nil, true }, model); err == nil ||
		!strings.Contains(err.Error(), "GpuShare recorded no GPUs") {
		t.Errorf("err = %v", err)
	}
}

// TestRunOne runs every policy of the table on a small trace (7 nodes, 40
// pods): the runs are deterministic and the metrics consistent.
func TestRunOne(t *testing.T) {
	tr, err := LoadTrace("testdata/nodes.csv", "testdata/pods.csv")
	if err != nil {
		t.Fatal(err)
	}
	if len(tr.Nodes) != 6 || tr.CapacityMilli != 26000 || len(tr.Pods) != 40 {
		t.Fatalf("trace: %d nodes, %d milli, %d pods; want the 6 GPU nodes, 26000, every row", len(tr.Nodes), tr.CapacityMilli, len(tr.Pods))
	}
	policies, err := Policies(tr.Typical)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, p := range policies {
		got = append(got, p.Name)
		for _, ratio := range []float64{1.3, 2.0} {
			r, err := RunOne(context.Background(), tr, p, 42, ratio, 2)
			if err != nil {
				t.Fatalf("%s: %v", p.Name, err)
			}
			again, err := RunOne(context.Background(), tr, p, 42, ratio, 1)
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(r.Metrics, again.Metrics, cmp.Comparer(func(a, b float64) bool { return a == b || math.IsNaN(a) && math.IsNaN(b) })); d != "" {
				t.Errorf("%s at %v: not deterministic across parallelism (-first +second):\n%s", p.Name, ratio, d)
			}
			// With 26 GPUs one 8-GPU pod is 31% of the cluster: the
			// percentages measured stop short of the target.
			last := -1
			for x, a := range r.Metrics.Alloc {
				if !math.IsNaN(a) {
					last = x
				}
			}
			if a := r.Metrics.Alloc[last]; last < 100 || a <= 0 || a > 100 || a > float64(last) {
				t.Errorf("%s at %v: last measured Alloc[%d] = %v", p.Name, ratio, last, a)
			}
			if r.Placed+r.Metrics.Failed != r.Pods {
				t.Errorf("%s: %d placed + %d failed != %d pods", p.Name, r.Placed, r.Metrics.Failed, r.Pods)
			}
		}
	}
	if d := cmp.Diff([]string{"Random", "DotProd", "GpuClustering", "GpuPacking", "BestFit", "FGD", KubeDefaultName}, got); d != "" {
		t.Errorf("policies (-want +got):\n%s", d)
	}
}

// The table's paper figures are the means of the artifact's expected
// results, as the issue quotes them.
func TestPaperRowsAreTheArtifactsMeans(t *testing.T) {
	pc, err := LoadPaper()
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range PaperPolicies {
		row := PaperRows[p.Name]
		got := Row{Policy: p.Name, Seeds: 10, AllocAt100: round2(pc.Alloc[p.Name][100]), AllocAt130: round2(pc.Alloc[p.Name][130]),
			UnallocatedGPUsAt130: math.Round(6212 * (100 - pc.Alloc[p.Name][130]) / 100), FragAt130: round2(pc.Frag[p.Name][130])}
		if d := cmp.Diff(row, got); d != "" {
			t.Errorf("%s (-table +artifact):\n%s", p.Name, d)
		}
	}
}

func TestWriteAllocSVG(t *testing.T) {
	pc, err := LoadPaper()
	if err != nil {
		t.Fatal(err)
	}
	curve := make([]float64, MaxPct+1)
	for x := range curve {
		curve[x] = math.Min(float64(x), 93)
	}
	curve[5] = math.NaN()
	var b strings.Builder
	if err := WriteAllocSVG(&b, []Row{{Policy: "FGD", Curve: curve}, {Policy: "kube-default/GpuShare", Curve: curve}}, pc.Alloc); err != nil {
		t.Fatal(err)
	}
	dec := xml.NewDecoder(strings.NewReader(b.String()))
	lines := 0
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("not well-formed XML: %v", err)
		}
		if se, ok := tok.(xml.StartElement); ok && se.Name.Local == "polyline" {
			lines++
		}
	}
	// Full range: each of our two curves broken at 5% (2 pieces each),
	// the paper's FGD (1; the kube row has none); zoom (84..98%): each of
	// ours from 84% on (1 each), the paper's FGD (1).
	if lines != 8 {
		t.Errorf("got %d polylines, want 8", lines)
	}
}
