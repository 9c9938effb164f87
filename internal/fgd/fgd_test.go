package fgd

import (
	"context"
	"encoding/json"
	"encoding/xml"
	"io"
	"math"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubectl-sched/kubectl-sched/internal/engine"
	"github.com/kubectl-sched/kubectl-sched/internal/gen/openb"
	"github.com/kubectl-sched/kubectl-sched/plugins/gpushare"
	"github.com/kubectl-sched/kubectl-sched/schedcore"
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

// TestMeasure follows the artifact's bookkeeping on a hand-made log: 2
// GPUs, three pods arriving (500m, 1000m, 600m), the last one failing.
func TestMeasure(t *testing.T) {
	// Arrived 0%, 25%, 75%, 105% of 2 GPUs; allocated 0%, 25%, 75%, 75%.
	events := []event{{0, 0, 0}, {500, 500, 500}, {1500, 1500, 500}, {2100, 1500, 300}}
	m := measure(events, 2000)
	nan := math.NaN()
	want := map[int]float64{0: 0, 1: 0, 2: nan, 24: 25, 25: 25, 26: 25, 50: nan, 75: 75, 104: 75, 105: 75, 106: 75, 130: nan}
	for x, w := range want {
		if got := m.Alloc[x]; !(got == w || math.IsNaN(got) && math.IsNaN(w)) {
			t.Errorf("Alloc[%d] = %v, want %v", x, got, w)
		}
	}
	// Frag: 100*frag/1000/GPUs: 500 -> 25%, 300 -> 15%.
	if m.Frag[25] != 25 || m.Frag[75] != 25 || m.Frag[105] != 15 || !math.IsNaN(m.Frag[50]) {
		t.Errorf("Frag[25], [75], [105], [50] = %v %v %v %v, want 25 25 15 NaN", m.Frag[25], m.Frag[75], m.Frag[105], m.Frag[50])
	}
	if !math.IsNaN(m.UnallocatedAt130) {
		t.Errorf("UnallocatedAt130 = %v with no event near 130%%, want NaN", m.UnallocatedAt130)
	}
	// Two events at 130% (129.5 and 130.4: round half to even) average;
	// 130% is the unallocated GPUs' point.
	m = measure([]event{{0, 0, 0}, {2590, 1800, 0}, {2608, 1900, 0}}, 2000)
	if m.Alloc[130] != 92.5 || m.UnallocatedAt130 != 0.15 {
		t.Errorf("Alloc[130], UnallocatedAt130 = %v, %v, want 92.5, 0.15", m.Alloc[130], m.UnallocatedAt130)
	}
}

// TestGPUBooks checks the probes' books against hand-computed states as
// pods land and a node leaves: each node is recomputed when its NodeInfo
// changes (and only then: the books must see every change).
func TestGPUBooks(t *testing.T) {
	cache := schedcore.NewCache(schedcore.DefaultFeatures)
	node := func(name string, gpus int) *v1.Node {
		n := &v1.Node{}
		n.Name = name
		n.Labels = map[string]string{openb.LabelGPUModel: "T4"}
		n.Status.Allocatable = v1.ResourceList{"cpu": resource.MustParse("8"), "pods": resource.MustParse("110"), openb.GPUResource: resource.MustParse(strconv.Itoa(gpus))}
		return n
	}
	n1, n2 := node("n1", 2), node("n2", 1)
	cache.AddNode(n1)
	cache.AddNode(n2)
	pod := func(name, node string, milli int64, gpu int) *v1.Pod {
		p := &v1.Pod{}
		p.Name, p.Namespace, p.UID, p.Spec.NodeName = name, "openb", types.UID(name), node
		p.Annotations = map[string]string{openb.AnnotationGPUCount: "1", openb.AnnotationGPUMilli: strconv.FormatInt(milli, 10), gpushare.AnnotationGPUIndex: strconv.Itoa(gpu)}
		p.Spec.Containers = []v1.Container{{Resources: v1.ResourceRequirements{Requests: v1.ResourceList{"cpu": resource.MustParse("2")}}}}
		return p
	}
	share, err := gpushare.New(context.Background(), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	// One typical pod, 1x600m with 1 core: a GPU with less than 600m
	// free (and more than 0) is fragmented.
	b := &gpuBooks{model: gpushare.NewFragModel([]gpushare.TypicalPod{{MilliCPU: 1000, GPUMilli: 600, GPUCount: 1, Weight: 1}}, 100), share: share.(*gpushare.GpuShare)}
	snap := schedcore.NewEmptySnapshot()
	at := time.Unix(0, 0)
	step := func(what string, wantUsed int64, wantFrag float64, wantMaxPods int) {
		t.Helper()
		cache.UpdateSnapshot(snap)
		at = at.Add(time.Millisecond)
		b.update(at, snap)
		if b.used != wantUsed || b.frag != wantFrag || b.maxPods != wantMaxPods || b.err != nil {
			t.Errorf("%s: used %d frag %v max pods %d err %v, want %d %v %d nil", what, b.used, b.frag, b.maxPods, b.err, wantUsed, wantFrag, wantMaxPods)
		}
	}
	step("empty", 0, 0, 0)
	if err := cache.AddPod(pod("a", "n1", 500, 0)); err != nil {
		t.Fatal(err)
	}
	step("a takes 500m of n1's GPU 0", 500, 500, 1)
	if err := cache.AddPod(pod("b", "n2", 1000, 0)); err != nil {
		t.Fatal(err)
	}
	step("b takes n2's GPU", 1500, 500, 1)
	if err := cache.AddPod(pod("c", "n1", 400, 1)); err != nil {
		t.Fatal(err)
	}
	// n1: [500 600]: GPU 1 holds the typical pod, GPU 0 does not.
	step("c takes 400m of n1's GPU 1", 1900, 500, 2)
	cache.RemoveNode(n2)
	step("n2 leaves", 900, 500, 2)
	if err := cache.AddPod(pod("d", "n1", 600, 0)); err != nil {
		t.Fatal(err)
	}
	cache.UpdateSnapshot(snap)
	b.update(at.Add(time.Millisecond), snap)
	if b.err == nil || !strings.Contains(b.err.Error(), "GPU 0 of node n1 is overcommitted") {
		t.Errorf("overcommitted GPU: err = %v", b.err)
	}
}

// smallTrace is testdata's trace (the 6 GPU nodes of 7, 40 pods), the
// table's policies on it and the registry.
func smallTrace(t *testing.T) (*Trace, []Policy, schedcore.Registry) {
	t.Helper()
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
	reg, err := engine.Registry(nil)
	if err != nil {
		t.Fatal(err)
	}
	if !DRAAvailable(reg) {
		t.Fatal("this build has no DynamicResources: the DRA row cannot run")
	}
	return tr, policies, reg
}

// TestRunOne runs every policy of the table on a small trace (7 nodes, 40
// pods): the runs are deterministic and the metrics consistent.
func TestRunOne(t *testing.T) {
	tr, policies, _ := smallTrace(t)
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
			// The fragmentation is measured from the GPU each share took
			// (GpuShare's record, or the DRA claim's allocation).
			if f := r.Metrics.Frag[last]; math.IsNaN(f) || f < 0 {
				t.Errorf("%s: Frag[%d] = %v", p.Name, last, f)
			}
		}
	}
	if d := cmp.Diff([]string{"Random", "DotProd", "GpuClustering", "GpuPacking", "BestFit", "FGD", KubeDefaultName, KubeDRAName}, got); d != "" {
		t.Errorf("policies (-want +got):\n%s", d)
	}
}

// TestSweepEqualsRunOne runs the sweep of every policy on two seeds, two
// replays at a time, and checks each run against the same run alone: the
// jobs of a seed share a trace, which the replays must leave as they found
// it (the DRA row's jobs have their own).
func TestSweepEqualsRunOne(t *testing.T) {
	tr, policies, _ := smallTrace(t)
	jobs := Jobs(policies, 2)
	var calls []int
	runs, err := Sweep(context.Background(), tr, jobs, 1.3, 2, func(done, total int) {
		if total != len(jobs) {
			t.Errorf("progress total %d, want %d", total, len(jobs))
		}
		calls = append(calls, done)
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(calls) != len(jobs) || calls[len(calls)-1] != len(jobs) {
		t.Errorf("progress calls %v, want 1..%d", calls, len(jobs))
	}
	nanEq := cmp.Comparer(func(a, b float64) bool { return a == b || math.IsNaN(a) && math.IsNaN(b) })
	for i, j := range jobs {
		alone, err := RunOne(context.Background(), tr, j.Policy, j.Seed, 1.3, 1)
		if err != nil {
			t.Fatal(err)
		}
		r := runs[i]
		if r.Policy != j.Policy.Name || r.Seed != j.Seed {
			t.Fatalf("run %d is %s seed %d, want %s seed %d", i, r.Policy, r.Seed, j.Policy.Name, j.Seed)
		}
		if d := cmp.Diff(alone.Metrics, r.Metrics, nanEq); d != "" || alone.Placed != r.Placed || alone.Pods != r.Pods {
			t.Errorf("%s seed %d: the sweep's run differs from the run alone (%d/%d placed, %d/%d alone; metrics -alone +sweep):\n%s", r.Policy, r.Seed, r.Placed, r.Pods, alone.Placed, alone.Pods, d)
		}
	}
}

// TestDRATrace checks the DRA row's input: every GPU pod claims its
// shape's template, and the objects go through the snapshot loader.
func TestDRATrace(t *testing.T) {
	tr, err := LoadTrace("testdata/nodes.csv", "testdata/pods.csv")
	if err != nil {
		t.Fatal(err)
	}
	w := openb.TunedWorkload(tr.Nodes, tr.Pods, tr.CapacityMilli, 1.3, 42, openb.Epoch)
	rt := replayTrace(w)
	if err := draTrace(rt); err != nil {
		t.Fatal(err)
	}
	if cl := rt.Objects; len(cl.DRA.DeviceClasses) != 1 || len(cl.DRA.ResourceSlices) != len(rt.Nodes) || len(cl.DRA.ResourceClaimTemplates) == 0 {
		t.Errorf("the loader kept %d DeviceClasses, %d ResourceSlices for %d nodes, %d templates", len(cl.DRA.DeviceClasses), len(cl.DRA.ResourceSlices), len(rt.Nodes), len(cl.DRA.ResourceClaimTemplates))
	}
	claims := 0
	for i, p := range rt.Pods {
		_, milli := openb.GPUMilli(p.Pod)
		if has := len(p.Pod.Spec.ResourceClaims) == 1; has != (milli > 0) {
			t.Errorf("pod %s (%dm of GPU): claims %v", p.Pod.Name, milli, p.Pod.Spec.ResourceClaims)
		}
		if p.Pod.Name != w.Pods[i].Name || len(w.Pods[i].Spec.ResourceClaims) != 0 {
			t.Errorf("pod %d: %s, workload's %s with claims %v: the workload must be left as it is", i, p.Pod.Name, w.Pods[i].Name, w.Pods[i].Spec.ResourceClaims)
		}
		if milli > 0 {
			claims++
		}
	}
	if claims == 0 {
		t.Error("no pod claims a GPU")
	}
}

// TestRowJSON checks that a figure a row does not have (NaN) is null in
// the JSON and reads back as NaN.
func TestRowJSON(t *testing.T) {
	in := []Row{{Policy: KubeDRAName, Seeds: 2, AllocAt100: 90.5, AllocAt130: 91, UnallocatedGPUsAt130: 559, FragAt130: math.NaN(), Curve: []float64{0, math.NaN(), 1}}}
	b, err := json.Marshal(map[string]any{"rows": in})
	if err != nil {
		t.Fatal(err)
	}
	want := `{"rows":[{"policy":"kube-default/DRA","seeds":2,"allocAt100":90.5,"allocAt130":91,"unallocatedGPUsAt130":559,"fragAt130":null,"curve":[0,null,1]}]}`
	if string(b) != want {
		t.Errorf("JSON:\n%s\nwant\n%s", b, want)
	}
	var out struct{ Rows []Row }
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(in, out.Rows, cmpopts.EquateNaNs()); d != "" {
		t.Errorf("read back (-want +got):\n%s", d)
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
