package gpushare

import (
	"context"
	"math/rand"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kubectl-sched/kubectl-sched/schedcore"
	"github.com/kubectl-sched/kubectl-sched/schedcore/plugintest"
)

// node is a test node: its GPUs, model, CPU and the pods bound to it.
type node struct {
	name  string
	gpus  int
	model string
	cpu   int64
	pods  []*v1.Pod
}

// scoreNodes builds the policy (factory, args) over a snapshot of the
// nodes, runs GpuShare's PreFilter, then the policy's PreScore (when it has
// one), Score and NormalizeScore (when it has one) over the nodes, as the
// framework does, and returns the final scores by node. The handle's
// source is seeded with 5.
func scoreNodes(t *testing.T, f schedcore.PluginFactory, args runtime.Object, pod *v1.Pod, nodes []node) map[string]int64 {
	t.Helper()
	var ns []*v1.Node
	var pods []*v1.Pod
	for _, n := range nodes {
		ns = append(ns, gpuNode(n.name, n.gpus, n.model, n.cpu))
		for _, p := range n.pods {
			pods = append(pods, placedOn(p, n.name))
		}
	}
	snap := schedcore.NewSnapshot(pods, ns)
	h := schedcore.NewHandle(snap, 1, schedcore.WithSeed(5))
	policy := newPolicy(t, f, args, h)
	gs, err := New(context.Background(), nil, h)
	if err != nil {
		t.Fatal(err)
	}
	state := schedcore.NewCycleState()
	if _, st := gs.(*GpuShare).PreFilter(context.Background(), state, pod, snap.List()); !st.IsSuccess() && !st.IsSkip() {
		t.Fatalf("PreFilter: %v", st)
	}
	if pre, ok := policy.(schedcore.PreScorePlugin); ok {
		if st := pre.PreScore(context.Background(), state, pod, snap.List()); !st.IsSuccess() {
			t.Fatalf("PreScore: %v", st)
		}
	}
	var list schedcore.NodeScoreList
	for _, ni := range snap.List() {
		s, st := policy.Score(context.Background(), state, pod, ni)
		if !st.IsSuccess() {
			t.Fatalf("Score(%s): %v", ni.Name(), st)
		}
		list = append(list, schedcore.NodeScore{Name: ni.Name(), Score: s})
	}
	if norm, ok := policy.(schedcore.NormalizeScorePlugin); ok {
		if st := plugintest.Normalize(context.Background(), norm, state, pod, list); !st.IsSuccess() {
			t.Fatalf("NormalizeScore: %v", st)
		}
	}
	out := map[string]int64{}
	for _, s := range list {
		out[s.Name] = s.Score
	}
	return out
}

func newPolicy(t *testing.T, f schedcore.PluginFactory, args runtime.Object, h *schedcore.Handle) schedcore.ScorePlugin {
	t.Helper()
	p, err := f(context.Background(), args, h)
	if err != nil {
		t.Fatal(err)
	}
	return p.(schedcore.ScorePlugin)
}

// used is a node with 2 GPUs and 72 cores whose GPU 1 holds a 460m share
// with 8 cores: free GPUs [1000, 540], 64 cores free.
func used(name string) node {
	return node{name: name, gpus: 2, model: "T4", cpu: 72000, pods: []*v1.Pod{placedOn(gpuPod(name+"-p", 1, 460, "", 8000), "", 1)}}
}

func TestDotProductScore(t *testing.T) {
	tests := []struct {
		name  string
		share bool
		pod   *v1.Pod
		nodes []node
		want  map[string]int64
	}{{
		// n = [64000/128000, 1540/8000] = [0.5, 0.1925], p = [8000/128000,
		// 460/8000] = [0.0625, 0.0575]; n·p = 0.03125 + 0.01106875 =
		// 0.04231875; 1 - 0.04231875/2 = 0.978840625 -> 97.
		// empty: n = [0.75, 0.25] (96 cores, 2 GPUs); n·p = 0.046875 +
		// 0.014375 = 0.06125; 1 - 0.030625 -> 96.
		// small: 4 cores < 8: 0.
		name: "merge: free resources dotted with the request, reversed",
		pod:  gpuPod("p", 1, 460, "", 8000),
		nodes: []node{used("used"), {name: "empty", gpus: 2, model: "T4", cpu: 96000},
			{name: "small", gpus: 2, model: "T4", cpu: 4000}},
		want: map[string]int64{"used": 97, "empty": 96, "small": 0},
	}, {
		// A CPU-only pod: n = [0.5, 0.1925], p = [12500/128000, 0]:
		// 0.048828125 -> 1 - 0.0244140625 = 0.9755859375 -> 97.
		name:  "merge: a CPU-only pod",
		pod:   gpuPod("p", 0, 0, "", 12500),
		nodes: []node{used("used")},
		want:  map[string]int64{"used": 97},
	}, {
		// share: the partly used GPU 1 (540 free): n = [0.5, 0.0675],
		// p = [0.0625, 0.025]: 0.03125 + 0.0016875 = 0.0329375 ->
		// 0.98353125; the fully free GPU 0 (1000): n = [0.5, 0.125]:
		// 0.03125 + 0.003125 = 0.034375 -> 0.9828125. Best: 98.
		name:  "share: each partly used GPU and the free ones are virtual nodes",
		share: true,
		pod:   gpuPod("p", 1, 200, "", 8000),
		nodes: []node{used("used")},
		want:  map[string]int64{"used": 98},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := &DotProductScoreArgs{DimExtMethod: DimExtMerge}
			if tt.share {
				args.DimExtMethod = DimExtShare
			}
			got := scoreNodes(t, NewDotProduct, args, tt.pod, tt.nodes)
			if d := cmp.Diff(tt.want, got); d != "" {
				t.Errorf("(-want +got):\n%s", d)
			}
		})
	}
}

func TestDotProductShareSelectsTheBestVirtualNode(t *testing.T) {
	// free [1000, 540, 300, 1000], 64 cores, pod 1x200 with 8 cores:
	// GPU 1: n = [0.5, 0.0675] -> 1 - (0.03125 + 0.0016875)/2 = 0.98353125
	// GPU 2: n = [0.5, 0.0375] -> 1 - (0.03125 + 0.0009375)/2 = 0.98390625
	// free GPUs: n = [0.5, 0.25] -> 1 - (0.03125 + 0.00625)/2 = 0.98125
	// GPU 2 wins: 98.
	pl := &DotProductScore{share: true}
	sc, ids := pl.score(req(1, 200, 8000), gpus("T4", 1000, 540, 300, 1000), 64000)
	if sc != 98 || !cmp.Equal(ids, []int{2}) {
		t.Errorf("score %d ids %v, want 98 [2]", sc, ids)
	}
	// Whole GPUs: only the free GPUs are a virtual node.
	sc, ids = pl.score(req(2, 1000, 16000), gpus("T4", 1000, 540, 300, 1000), 32000)
	// n = [0.25, 0.25], p = [0.125, 0.25]: 0.03125 + 0.0625 = 0.09375 ->
	// 1 - 0.046875 = 0.953125 -> 95.
	if sc != 95 || !cmp.Equal(ids, []int{0, 3}) {
		t.Errorf("score %d ids %v, want 95 [0 3]", sc, ids)
	}
}

func TestGpuClusteringScore(t *testing.T) {
	share := func(name string) *v1.Pod { return placedOn(gpuPod(name, 1, 500, "", 1000), "", 0) }
	whole := func(name string) *v1.Pod { return placedOn(gpuPod(name, 1, 1000, "", 1000), "", 1) }
	nodes := []node{
		// 8 GPUs, 7500 free: base = 25*(8000-7500)/8000 = 1 (12500/8000).
		{name: "shares", gpus: 8, cpu: 96000, pods: []*v1.Pod{share("a")}},
		// 8 GPUs, 6500 free: base = 25*1500/8000 = 4 (37500/8000).
		{name: "mixed", gpus: 8, cpu: 96000, pods: []*v1.Pod{share("b"), whole("c")}},
		// 8 GPUs, 7000 free: base = 25*1000/8000 = 3 (25000/8000).
		{name: "whole", gpus: 8, cpu: 96000, pods: []*v1.Pod{whole("d")}},
		// 8 GPUs, all free: base 0.
		{name: "empty8", gpus: 8, cpu: 96000},
		// 2 GPUs, all free: base = 25*6000/8000 = 18 (150000/8000 = 18.75).
		{name: "empty2", gpus: 2, cpu: 96000},
	}
	tests := []struct {
		name string
		pod  *v1.Pod
		want map[string]int64
	}{
		// only its kind: base+75; its kind and others: base+50; no GPU
		// pods: base+25; other kinds only: base.
		{"a share joins shares", gpuPod("p", 1, 300, "", 1000), map[string]int64{"shares": 76, "mixed": 54, "whole": 3, "empty8": 25, "empty2": 43}},
		{"a one-GPU pod joins one-GPU pods", gpuPod("p", 1, 1000, "", 1000), map[string]int64{"shares": 1, "mixed": 54, "whole": 78, "empty8": 25, "empty2": 43}},
		{"a CPU-only pod scores 0", gpuPod("p", 0, 0, "", 1000), map[string]int64{"shares": 0, "mixed": 0, "whole": 0, "empty8": 0, "empty2": 0}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := scoreNodes(t, NewGpuClustering, nil, tt.pod, nodes)
			if d := cmp.Diff(tt.want, got); d != "" {
				t.Errorf("(-want +got):\n%s", d)
			}
		})
	}
}

func TestGpuPackingScore(t *testing.T) {
	tests := []struct {
		name string
		r    Request
		g    *NodeGPUs
		want int64
	}{
		// case 3, an unused node: max(33 - free, free).
		{"an unused 8-GPU node", req(1, 500, 0), gpus("", 1000, 1000, 1000, 1000, 1000, 1000, 1000, 1000), 25},
		{"an unused 2-GPU node", req(1, 500, 0), gpus("", 1000, 1000), 31},
		// case 1: shares fit on used GPUs, smallest free first: GPU 2
		// (300): 100 - (300*100/1000)/10 = 97.
		{"a share on the tightest used GPU", req(1, 200, 0), gpus("", 1000, 540, 300, 1000), 97},
		// 540 holds 500: 100 - 54/10 = 95.
		{"a share that needs the roomier used GPU", req(1, 500, 0), gpus("", 1000, 540, 300, 1000), 95},
		// case 2: no used GPU holds 600: one free GPU opened: 50 - 1.
		{"a share that must open a free GPU", req(1, 600, 0), gpus("", 1000, 540, 300, 1000), 49},
		{"two whole GPUs on a used node", req(2, 1000, 0), gpus("", 500, 1000, 1000, 1000), 48},
		{"a CPU-only pod", Request{}, gpus("", 1000, 540), 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := packingScore(tt.r, tt.g); got != tt.want {
				t.Errorf("got %d, want %d", got, tt.want)
			}
		})
	}
	// Through the plugin: the used node against an unused one.
	got := scoreNodes(t, NewGpuPacking, nil, gpuPod("p", 1, 500, "", 1000),
		[]node{used("used"), {name: "empty", gpus: 2, model: "T4", cpu: 96000}})
	// used: GPU 1 (540) holds 500: 100 - 54/10 = 95; empty: max(31, 2).
	if d := cmp.Diff(map[string]int64{"used": 95, "empty": 31}, got); d != "" {
		t.Errorf("(-want +got):\n%s", d)
	}
}

func TestBestFitScore(t *testing.T) {
	// raw = int(100 * (1 - 0.5*(cpuLeft-cpu)/128000 - 0.5*(gpuFree-gpu)/8000)):
	// used:  0.5*56000/128000 = 0.21875, 0.5*1080/8000 = 0.0675 -> 71.375 -> 71
	// roomy: 0.5*88000/128000 = 0.34375, 0.5*1540/8000 = 0.09625 -> 56
	// tight: nothing left over after the pod (see below) -> 100
	// then min-max over [71, 56, 100]: (71-56)*100/44 = 34 (1500/44 =
	// 34.09), 0, 100.
	nodes := []node{
		used("used"),
		{name: "roomy", gpus: 2, model: "T4", cpu: 96000},
		// 2 GPUs, 16 cores; a 540m share with 8 cores on GPU 0, a whole
		// GPU with 0 cores on GPU 1: free [460, 0], 8 cores.
		{name: "tight", gpus: 2, model: "T4", cpu: 16000, pods: []*v1.Pod{
			placedOn(gpuPod("t1", 1, 540, "", 8000), "", 0), placedOn(gpuPod("t2", 1, 1000, "", 0), "", 1)}},
	}
	got := scoreNodes(t, NewBestFit, nil, gpuPod("p", 1, 460, "", 8000), nodes)
	if d := cmp.Diff(map[string]int64{"used": 34, "roomy": 0, "tight": 100}, got); d != "" {
		t.Errorf("(-want +got):\n%s", d)
	}
	tests := []struct {
		name          string
		r             Request
		gpuFree, left int64
		want          int64
	}{
		{"the used node, raw", req(1, 460, 8000), 1540, 64000, 71},
		{"the roomy node, raw", req(1, 460, 8000), 2000, 96000, 56},
		{"nothing left over: 100", req(1, 460, 8000), 460, 8000, 100},
		{"CPU short of the non-zero request: 0", req(1, 460, 8000), 1000, 4000, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := bestFitScore(tt.r, tt.gpuFree, tt.left); got != tt.want {
				t.Errorf("got %d, want %d", got, tt.want)
			}
		})
	}
	equal := []int64{40, 40}
	minMaxNormalize(equal)
	if equal[0] != 0 || equal[1] != 0 {
		t.Errorf("equal scores normalize to %v, want all 0", equal)
	}
}

func TestRandomScore(t *testing.T) {
	nodes := []node{{name: "a", gpus: 1, cpu: 8000}, {name: "b", gpus: 1, cpu: 8000}, {name: "c", gpus: 1, cpu: 8000}}
	// The handle's source (seed 5) picks index Intn(3) among the feasible
	// nodes, in the snapshot's order.
	pick := []string{"a", "b", "c"}[rand.New(rand.NewSource(5)).Intn(3)]
	got := scoreNodes(t, NewRandom, nil, gpuPod("p", 1, 100, "", 1000), nodes)
	want := map[string]int64{"a": 0, "b": 0, "c": 0}
	want[pick] = 100
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("(-want +got):\n%s", d)
	}
}
