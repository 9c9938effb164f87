package gpushare

import (
	"context"
	"math"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"

	"github.com/kubectl-sched/kubectl-sched/schedcore"
)

// The typical pods of the hand computations: weights 2, 1, 1 of 4, all kept
// (threshold 100), sorted by weight, then the larger shape first:
//
//	tp1: 4 cores, 1x500m       freq 0.5
//	tp2: 8 cores, 1x1000m      freq 0.25
//	tp3: 2 cores, no GPU       freq 0.25
var handTypical = []TypicalPod{
	{MilliCPU: 2000, Weight: 1},
	{MilliCPU: 4000, GPUMilli: 500, GPUCount: 1, Weight: 2},
	{MilliCPU: 8000, GPUMilli: 1000, GPUCount: 1, Weight: 1},
}

func handModel() *FragModel { return NewFragModel(handTypical, 100) }

func TestNewFragModelSelectsAndNormalizes(t *testing.T) {
	shape := func(cpu int64, w float64) TypicalPod {
		return TypicalPod{MilliCPU: cpu, GPUMilli: 1000, GPUCount: 1, Weight: w}
	}
	tests := []struct {
		name      string
		in        []TypicalPod
		threshold int32
		want      []TypicalPod
	}{{
		name:      "all kept at 100%: frequencies are weight/total",
		in:        handTypical,
		threshold: 100,
		want: []TypicalPod{
			{MilliCPU: 4000, GPUMilli: 500, GPUCount: 1, Weight: 0.5},
			{MilliCPU: 8000, GPUMilli: 1000, GPUCount: 1, Weight: 0.25},
			{MilliCPU: 2000, Weight: 0.25},
		},
	}, {
		// 50 + 30 = 80 reaches 80%: two shapes, renormalized by 0.8:
		// 0.5/0.8 = 0.625, 0.3/0.8 = 0.375.
		name:      "the most frequent shapes up to the threshold, renormalized",
		in:        []TypicalPod{shape(1, 15), shape(2, 50), shape(3, 5), shape(4, 30)},
		threshold: 80,
		want:      []TypicalPod{shape(2, 0.625), shape(4, 0.375)},
	}, {
		// 50 < 79, 80 >= 79: the same two.
		name:      "the shape that crosses the threshold is kept",
		in:        []TypicalPod{shape(1, 15), shape(2, 50), shape(3, 5), shape(4, 30)},
		threshold: 79,
		want:      []TypicalPod{shape(2, 0.625), shape(4, 0.375)},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := NewFragModel(tt.in, tt.threshold).TypicalPods()
			if d := cmp.Diff(tt.want, got, cmp.Comparer(func(a, b float64) bool { return math.Abs(a-b) < 1e-12 })); d != "" {
				t.Errorf("(-want +got):\n%s", d)
			}
		})
	}
}

func TestFrag(t *testing.T) {
	m := handModel()
	tests := []struct {
		name    string
		g       *NodeGPUs
		cpuLeft int64
		want    float64
	}{{
		// free [1000, 600] (1600), 6 cores:
		// tp1 fits (4 cores, GPU 0 holds 500m): satisfied; no GPU has
		//   less than 500m free: 0 unusable.
		// tp2 lacks CPU (8 cores > 6), GPU 0 would hold it: 0.25*1600 = 400.
		// tp3 (CPU-only) uses no GPU: 0.25*1600 = 400.
		name: "a node where the typical pods mostly fit", g: gpus("T4", 1000, 600), cpuLeft: 6000, want: 800,
	}, {
		// free [500, 600] (1100), 5 cores:
		// tp1 fits, unusable 0; tp2 lacks both: 275; tp3: 275.
		name: "after a 500m share on GPU 0", g: gpus("T4", 500, 600), cpuLeft: 5000, want: 550,
	}, {
		// free [1000, 100] (1100), 5 cores:
		// tp1 fits on GPU 0, GPU 1 (100 < 500) is unusable: 0.5*100 = 50;
		// tp2 lacks CPU: 275; tp3: 275.
		name: "after a 500m share on GPU 1", g: gpus("T4", 1000, 100), cpuLeft: 5000, want: 600,
	}, {
		name: "no free GPU: no fragmentation", g: gpus("T4", 0, 0), cpuLeft: 64000, want: 0,
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := m.Frag(tt.g, tt.cpuLeft); got != tt.want {
				t.Errorf("got %v, want %v", got, tt.want)
			}
		})
	}
	// A typical pod that names another model cannot use the node at all.
	restricted := NewFragModel([]TypicalPod{
		{MilliCPU: 1000, GPUMilli: 1000, GPUCount: 1, GPUModel: "V100M16|V100M32", Weight: 1},
		{MilliCPU: 1000, GPUMilli: 1000, GPUCount: 1, Weight: 1},
	}, 100)
	if got := restricted.Frag(gpus("T4", 1000), 4000); got != 500 {
		t.Errorf("a model the typical pod does not accept: got %v, want 500 (0.5*1000)", got)
	}
}

func TestGradient(t *testing.T) {
	m := handModel()
	g := gpus("T4", 1000, 600)
	base := m.Frag(g, 6000) // 800, above
	tests := []struct {
		name    string
		r       Request
		want    int64
		wantIDs []int
	}{
		// GPU 0: frag 550 (above), 800-550 = 250: int(100*sigmoid(0.25)) =
		// int(56.2) = 56; GPU 1: frag 600, 200: int(54.98) = 54. GPU 0.
		{"a share goes where fragmentation grows least", req(1, 500, 1000), 56, []int{0}},
		// GPU 0 (the only fully free one): free [0, 600], 4 cores, total
		// 600: tp1 fits on GPU 1, unusable 0 (GPU 0 has 0 free): 0;
		// tp2 lacks both: 150; tp3: 150. 800-300 = 500: int(62.2) = 62.
		{"a whole GPU", req(1, 1000, 2000), 62, []int{0}},
		// 3 cores left: tp1 and tp2 lack CPU: 800 + 400, tp3 fits: 400.
		// 800-1600 = -800: int(100*sigmoid(-0.8)) = int(31.0) = 31.
		{"a CPU-only pod that starves the GPUs of CPU", req(0, 0, 3000), 31, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ids := m.Gradient(tt.r, g, 6000, base)
			if got != tt.want || !cmp.Equal(ids, tt.wantIDs) {
				t.Errorf("got %d %v, want %d %v", got, ids, tt.want, tt.wantIDs)
			}
		})
	}
	if sc, ids := m.Gradient(req(1, 700, 1000), gpus("T4", 600, 600), 6000, 0); sc != 0 || ids != nil {
		t.Errorf("no GPU holds the share: got %d %v, want 0 []", sc, ids)
	}
}

func TestGradientTiesKeepTheLowestIndex(t *testing.T) {
	// GPUs with the same free thousandths lead to the same state, so to
	// the same score: the first of them wins (the others are skipped).
	m := handModel()
	g := gpus("T4", 600, 600)
	if _, ids := m.Gradient(req(1, 100, 0), g, 64000, m.Frag(g, 64000)); !cmp.Equal(ids, []int{0}) {
		t.Errorf("[600 600]: got %v, want [0]", ids)
	}
	g = gpus("T4", 1000, 600, 600)
	if _, ids := m.Gradient(req(1, 100, 0), g, 64000, m.Frag(g, 64000)); len(ids) != 1 || ids[0] == 2 {
		t.Errorf("[1000 600 600]: got %v, want GPU 0 or 1, never 2", ids)
	}
}

func TestFGDScoreThroughThePlugin(t *testing.T) {
	args := &FGDScoreArgs{TypicalPods: handTypical, PopularityThreshold: ptr(int32(100))}
	nodes := []node{
		// free [1000, 600], 6 cores: the hand computation above.
		{name: "a", gpus: 2, model: "T4", cpu: 7000, pods: []*v1.Pod{placedOn(gpuPod("x", 1, 400, "", 1000), "", 1)}},
		// 2 free GPUs, 64 cores: before, only tp3 counts: 0.25*2000 = 500.
		// After a 500m share on either GPU, [500, 1000] (1500): tp1 fits,
		// nothing below 500m; tp2 fits on the free GPU, the 500m one is
		// unusable to it: 0.25*500 = 125; tp3: 0.25*1500 = 375. 500-500 =
		// 0: int(100*sigmoid(0)) = 50.
		{name: "b", gpus: 2, model: "T4", cpu: 64000},
	}
	got := scoreNodes(t, NewFGD, args, gpuPod("p", 1, 500, "", 1000), nodes)
	if d := cmp.Diff(map[string]int64{"a": 56, "b": 50}, got); d != "" {
		t.Errorf("(-want +got):\n%s", d)
	}
	pl := newPolicy(t, NewFGD, args, schedcore.NewHandle(nil, 1))
	if ids := pl.(*FGDScore).SelectGPUs(req(1, 500, 1000), gpus("T4", 1000, 600), 6000); !cmp.Equal(ids, []int{0}) {
		t.Errorf("SelectGPUs = %v, want [0]", ids)
	}
}

func TestFGDScoreArgs(t *testing.T) {
	tp := TypicalPod{MilliCPU: 1000, GPUMilli: 500, GPUCount: 1, Weight: 1}
	tests := []struct {
		name    string
		args    *FGDScoreArgs
		wantErr string
	}{
		{"typical pods are required", &FGDScoreArgs{}, "typicalPods: Required value"},
		{"a threshold above 100", &FGDScoreArgs{TypicalPods: []TypicalPod{tp}, PopularityThreshold: ptr(int32(101))}, "popularityThreshold: Invalid value: 101"},
		{"a weight of 0", &FGDScoreArgs{TypicalPods: []TypicalPod{{MilliCPU: 1}}}, "typicalPods[0].weight: Invalid value: 0"},
		{"gpuMilli above 1000", &FGDScoreArgs{TypicalPods: []TypicalPod{{GPUMilli: 1500, GPUCount: 1, Weight: 1}}}, "typicalPods[0].gpuMilli: Invalid value: 1500"},
		{"a shape twice", &FGDScoreArgs{TypicalPods: []TypicalPod{tp, {MilliCPU: 1000, GPUMilli: 500, GPUCount: 1, Weight: 3}}}, "typicalPods[1]: Duplicate value: the shape of typicalPods[0]"},
		{"valid", &FGDScoreArgs{TypicalPods: []TypicalPod{tp}}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := NewFGD(context.Background(), tt.args, nil)
			if tt.wantErr == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil || !strings.HasPrefix(err.Error(), tt.wantErr) {
				t.Errorf("err = %v, want prefix %q", err, tt.wantErr)
			}
		})
	}
	if _, err := NewFGD(context.Background(), nil, nil); err == nil {
		t.Error("nil args: want an error, FGD needs typical pods")
	}
}

func TestTypicalPodsOf(t *testing.T) {
	pods := []*v1.Pod{
		gpuPod("a", 1, 460, "", 6000),
		gpuPod("b", 0, 0, "", 12000),
		gpuPod("c", 1, 460, "", 6000),
		gpuPod("d", 2, 1000, "V100M32", 16000),
		gpuPod("e", 1, 460, "T4", 6000),
	}
	bad := gpuPod("f", 2, 500, "", 1000) // invalid: left out
	got := TypicalPodsOf(append(pods, bad))
	want := []TypicalPod{
		{MilliCPU: 6000, GPUMilli: 460, GPUCount: 1, Weight: 2},
		{MilliCPU: 12000, Weight: 1},
		{MilliCPU: 16000, GPUMilli: 1000, GPUCount: 2, GPUModel: "V100M32", Weight: 1},
		{MilliCPU: 6000, GPUMilli: 460, GPUCount: 1, GPUModel: "T4", Weight: 1},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("(-want +got):\n%s", d)
	}
}

func ptr[T any](v T) *T { return &v }
