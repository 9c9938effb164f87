package gpushare

import (
	"context"
	"fmt"
	"math"
	"math/rand"
	"strings"
	"testing"

	"github.com/go-logr/logr"
	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	configv1 "k8s.io/kube-scheduler/config/v1"

	"github.com/kubectl-sched/kubectl-sched/schedcore"
	schedruntime "github.com/kubectl-sched/kubectl-sched/schedcore/runtime"
)

func newGpuShare(t *testing.T, args *GpuShareArgs, h *schedcore.Handle) *GpuShare {
	t.Helper()
	var obj runtime.Object
	if args != nil {
		obj = args
	}
	p, err := New(context.Background(), obj, h)
	if err != nil {
		t.Fatal(err)
	}
	return p.(*GpuShare)
}

// states runs PreFilter and returns every node's GPU state by name.
func states(t *testing.T, pl *GpuShare, snap *schedcore.Snapshot, pod *v1.Pod) (*schedcore.CycleState, map[string][]int64) {
	t.Helper()
	state := schedcore.NewCycleState()
	if _, st := pl.PreFilter(context.Background(), state, pod, snap.List()); !st.IsSuccess() && !st.IsSkip() {
		t.Fatalf("PreFilter: %v", st)
	}
	s, st := readState(state)
	if st != nil {
		t.Fatal(st)
	}
	out := map[string][]int64{}
	for _, ni := range snap.List() {
		out[ni.Name()] = append([]int64(nil), s.NodeGPUs(ni).Free...)
	}
	return state, out
}

func TestFilter(t *testing.T) {
	nodes := []*v1.Node{
		gpuNode("cpu-only", 0, "", 32000),
		// T4 x2: GPU 0 holds an 800m share: free [200, 1000].
		gpuNode("t4", 2, "T4", 32000),
		gpuNode("v100", 4, "V100M32", 32000),
	}
	pods := []*v1.Pod{placedOn(gpuPod("x", 1, 800, "", 1000), "t4", 0)}
	snap := schedcore.NewSnapshot(pods, nodes)
	tests := []struct {
		name string
		pod  *v1.Pod
		want map[string]string // node -> reason ("" = fits)
	}{
		{"a share fits where a GPU holds it", gpuPod("p", 1, 500, "", 1000),
			map[string]string{"cpu-only": ErrReasonNoGPU, "t4": "", "v100": ""}},
		{"a share too big for the used GPU takes the free one", gpuPod("p", 1, 1000, "", 1000),
			map[string]string{"cpu-only": ErrReasonNoGPU, "t4": "", "v100": ""}},
		{"two whole GPUs need two fully free GPUs", gpuPod("p", 2, 1000, "", 1000),
			map[string]string{"cpu-only": ErrReasonNoGPU, "t4": ErrReasonInsufficientGPU, "v100": ""}},
		{"a model restriction rejects other models", gpuPod("p", 1, 100, "V100M16|V100M32", 1000),
			map[string]string{"cpu-only": ErrReasonNoGPU, "t4": ErrReasonGPUModel, "v100": ""}},
		{"five GPUs fit nowhere", gpuPod("p", 5, 1000, "", 1000),
			map[string]string{"cpu-only": ErrReasonNoGPU, "t4": ErrReasonInsufficientGPU, "v100": ErrReasonInsufficientGPU}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pl := newGpuShare(t, nil, schedcore.NewHandle(snap, 1))
			state, _ := states(t, pl, snap, tt.pod)
			got := map[string]string{}
			for _, ni := range snap.List() {
				st := pl.Filter(context.Background(), state, tt.pod, ni)
				got[ni.Name()] = st.Message()
				if st.IsSuccess() {
					continue
				}
				wantCode := schedcore.UnschedulableAndUnresolvable
				if st.Message() == ErrReasonInsufficientGPU {
					wantCode = schedcore.Unschedulable
				}
				if st.Code() != wantCode {
					t.Errorf("%s: code %v, want %v", ni.Name(), st.Code(), wantCode)
				}
			}
			if d := cmp.Diff(tt.want, got); d != "" {
				t.Errorf("(-want +got):\n%s", d)
			}
		})
	}
}

func TestExplainFilter(t *testing.T) {
	nodes := []*v1.Node{
		gpuNode("cpu-only", 0, "", 32000),
		gpuNode("t4", 2, "T4", 32000),        // GPU 0 holds 800m: [200, 1000]
		gpuNode("bare", 1, "", 32000),        // no model label
		gpuNode("v100", 4, "V100M32", 32000), // GPUs 0 and 1 hold 600m: [400, 400, 1000, 1000]
	}
	pods := []*v1.Pod{placedOn(gpuPod("x", 1, 800, "", 1000), "t4", 0), placedOn(gpuPod("y", 1, 600, "", 1000), "v100", 0), placedOn(gpuPod("z", 1, 600, "", 1000), "v100", 1)}
	snap := schedcore.NewSnapshot(pods, nodes)
	type gap struct {
		text      string
		details   []string
		shortfall float64
	}
	tests := []struct {
		name string
		pod  *v1.Pod
		node string
		want *gap
	}{
		{"no GPUs", gpuPod("p", 1, 500, "", 1000), "cpu-only", &gap{text: "node has no GPUs (allocatable nvidia.com/gpu is 0)", shortfall: 1}},
		{"another model", gpuPod("p", 1, 500, "V100M16|V100M32", 1000), "t4", &gap{text: "node's GPUs are T4; the pod accepts V100M16, V100M32", shortfall: 1}},
		{"no model label", gpuPod("p", 1, 500, "T4", 1000), "bare", &gap{text: "node's GPUs are of no model (no gpu.model label); the pod accepts T4", shortfall: 1}},
		// The freest GPU has 1000m of 1000m... a whole one is free: fits.
		{"a node that fits has nothing to add", gpuPod("p", 1, 1000, "", 1000), "t4", nil},
		// 3 whole GPUs, 2 fully free: 1 of 3 missing.
		{"too few whole GPUs", gpuPod("p", 3, 1000, "", 1000), "v100", &gap{text: "needs 3 fully free GPUs; the node has 2 of 4",
			details: []string{"GPU 0: 400m free", "GPU 1: 400m free", "GPU 2: 1000m free", "GPU 3: 1000m free"}, shortfall: 1.0 / 3}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pl := newGpuShare(t, nil, schedcore.NewHandle(snap, 1))
			state, _ := states(t, pl, snap, tt.pod)
			ni, _ := snap.Get(tt.node)
			ex := pl.ExplainFilter(context.Background(), state, tt.pod, ni, pl.Filter(context.Background(), state, tt.pod, ni))
			var got *gap
			if ex != nil {
				got = &gap{text: ex.Gaps[0].Text, details: ex.Gaps[0].Details, shortfall: ex.Shortfall}
			}
			if d := cmp.Diff(tt.want, got, cmp.AllowUnexported(gap{})); d != "" {
				t.Errorf("(-want +got):\n%s", d)
			}
		})
	}
	// A share no GPU holds: the freest GPU of a full node.
	full := schedcore.NewSnapshot([]*v1.Pod{placedOn(gpuPod("a", 1, 460, "", 1000), "n", 0), placedOn(gpuPod("b", 1, 700, "", 1000), "n", 1)},
		[]*v1.Node{gpuNode("n", 2, "T4", 32000)}) // [540, 300]
	pl := newGpuShare(t, nil, schedcore.NewHandle(full, 1))
	pod := gpuPod("p", 1, 600, "", 1000)
	state, _ := states(t, pl, full, pod)
	ni, _ := full.Get("n")
	ex := pl.ExplainFilter(context.Background(), state, pod, ni, nil)
	// 60m of 600m missing on the freest GPU: shortfall 0.1.
	if ex == nil || ex.Gaps[0].Text != "needs a GPU with 600m free; the freest has 540m (GPU 0)" || math.Abs(ex.Shortfall-0.1) > 1e-12 ||
		!cmp.Equal(ex.Gaps[0].Details, []string{"GPU 0: 540m free", "GPU 1: 300m free"}) {
		t.Errorf("got %+v", ex)
	}
}

func TestPreFilter(t *testing.T) {
	snap := schedcore.NewSnapshot(nil, []*v1.Node{gpuNode("n", 1, "", 8000)})
	pl := newGpuShare(t, nil, schedcore.NewHandle(snap, 1))
	bad := gpuPod("bad", 2, 500, "", 1000)
	_, st := pl.PreFilter(context.Background(), schedcore.NewCycleState(), bad, snap.List())
	want := "invalid GPU-share request: annotation gpushare.kubectl-sched.io/gpu-milli: 2 GPUs of 500m each: a pod with more than one GPU takes whole GPUs (1000m)"
	if st.Code() != schedcore.UnschedulableAndUnresolvable || st.Message() != want {
		t.Errorf("got %v %q, want UnschedulableAndUnresolvable %q", st.Code(), st.Message(), want)
	}
	_, st = pl.PreFilter(context.Background(), schedcore.NewCycleState(), gpuPod("cpu", 0, 0, "", 1000), snap.List())
	if !st.IsSkip() {
		t.Errorf("a pod without GPUs: got %v, want Skip (its state is still written for the scores)", st)
	}
	if _, st := readState(schedcore.NewCycleState()); st == nil || st.Code() != schedcore.Error {
		t.Errorf("no GpuShare state: got %v, want an Error naming GpuShare", st)
	}
	if _, err := RequestOf(schedcore.NewCycleState()); err == nil || !strings.Contains(err.Error(), "GpuShare plugin must be enabled") {
		t.Errorf("RequestOf without GpuShare: %v", err)
	}
	state := schedcore.NewCycleState()
	pl.PreFilter(context.Background(), state, gpuPod("p", 1, 300, "", 1000), snap.List())
	ni, _ := snap.Get("n")
	r, err := RequestOf(state)
	g, err2 := NodeGPUsOf(state, ni)
	if err != nil || err2 != nil || r.Milli != 300 || r.CPU != 1000 || !cmp.Equal(g.Free, []int64{1000}) {
		t.Errorf("RequestOf/NodeGPUsOf: %v %v %v %v", r, g, err, err2)
	}
}

func TestAccounting(t *testing.T) {
	n := gpuNode("n", 2, "T4", 64000)
	tests := []struct {
		name string
		pods []*v1.Pod
		want []int64
	}{
		{"a recorded index is honoured", []*v1.Pod{placedOn(gpuPod("a", 1, 300, "", 1000), "n", 1)}, []int64{1000, 700}},
		{"whole GPUs by index", []*v1.Pod{placedOn(gpuPod("a", 2, 1000, "", 1000), "n", 1, 0)}, []int64{0, 0}},
		// Without an index: best fit in pod order: 800 -> GPU 0 (both
		// free, the first), 300 -> GPU 1 (GPU 0 has 200 left).
		{"pods nobody recorded take the best fit", []*v1.Pod{placedOn(gpuPod("a", 1, 800, "", 1000), "n"), placedOn(gpuPod("b", 1, 300, "", 1000), "n")}, []int64{200, 700}},
		{"an index out of range counts as none", []*v1.Pod{placedOn(gpuPod("a", 1, 300, "", 1000), "n", 5)}, []int64{700, 1000}},
		{"CPU-only pods use no GPU", []*v1.Pod{placedOn(gpuPod("a", 0, 0, "", 1000), "n")}, []int64{1000, 1000}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			snap := schedcore.NewSnapshot(tt.pods, []*v1.Node{n})
			_, got := states(t, newGpuShare(t, nil, schedcore.NewHandle(snap, 1)), snap, gpuPod("p", 0, 0, "", 0))
			if d := cmp.Diff(tt.want, got["n"]); d != "" {
				t.Errorf("(-want +got):\n%s", d)
			}
		})
	}
}

// TestReserveIsRemembered follows one pod through Reserve and binding: the
// GPU Reserve picked (worst fit here) is what the node's state shows
// afterwards, not the best fit a pod without a record would get; Unreserve
// and the pod's leaving forget it.
func TestReserveIsRemembered(t *testing.T) {
	cache := schedcore.NewCache(schedcore.DefaultFeatures)
	cache.AddNode(gpuNode("n", 2, "T4", 64000))
	used := placedOn(gpuPod("x", 1, 400, "", 1000), "n", 1) // free [1000, 600]
	if err := cache.AddPod(used); err != nil {
		t.Fatal(err)
	}
	snap := schedcore.NewEmptySnapshot()
	cache.UpdateSnapshot(snap)
	h := schedcore.NewHandle(snap, 1)
	pl := newGpuShare(t, &GpuShareArgs{GPUSelection: SelectWorst}, h)
	pod := gpuPod("p", 1, 300, "", 1000)
	state, _ := states(t, pl, snap, pod)
	if st := pl.Reserve(context.Background(), state, pod, "n"); !st.IsSuccess() {
		t.Fatal(st)
	}
	if node, ids, ok := pl.Assignment(pod.UID); !ok || node != "n" || !cmp.Equal(ids, []int{0}) {
		t.Fatalf("Assignment = %s %v %v, want n [0] (worst fit)", node, ids, ok)
	}
	bound := placedOn(pod.DeepCopy(), "n")
	if err := cache.AddPod(bound); err != nil {
		t.Fatal(err)
	}
	cache.UpdateSnapshot(snap)
	if _, got := states(t, pl, snap, gpuPod("q", 0, 0, "", 0)); !cmp.Equal(got["n"], []int64{700, 600}) {
		t.Errorf("after binding: %v, want [700 600] (GPU 0 as reserved)", got["n"])
	}
	// An observer between cycles sees the same state.
	if ni, err := snap.Get("n"); err != nil || !cmp.Equal(pl.NodeState(ni).Free, []int64{700, 600}) {
		t.Errorf("NodeState after binding: %v (%v), want [700 600]", pl.NodeState(ni), err)
	}
	// A fresh instance knows nothing of the reservation: best fit.
	if _, got := states(t, newGpuShare(t, nil, h), snap, gpuPod("q", 0, 0, "", 0)); !cmp.Equal(got["n"], []int64{1000, 300}) {
		t.Errorf("fresh instance: %v, want [1000 300]", got["n"])
	}
	pl.Unreserve(context.Background(), state, pod, "n")
	if _, _, ok := pl.Assignment(pod.UID); ok {
		t.Error("Unreserve: the assignment is still there")
	}
	// Reserve again, then the pod leaves the node: the next PreFilter drops
	// the record.
	if st := pl.Reserve(context.Background(), state, pod, "n"); !st.IsSuccess() {
		t.Fatal(st)
	}
	cache.RemovePod(bound)
	cache.UpdateSnapshot(snap)
	states(t, pl, snap, gpuPod("q", 0, 0, "", 0))
	if _, _, ok := pl.Assignment(pod.UID); ok {
		t.Error("the pod left the node: its assignment is still remembered")
	}
}

func TestSelection(t *testing.T) {
	n := gpuNode("n", 4, "T4", 64000)
	// free [1000, 600, 300, 600]
	pods := []*v1.Pod{placedOn(gpuPod("x", 1, 400, "", 1000), "n", 1), placedOn(gpuPod("y", 1, 700, "", 1000), "n", 2), placedOn(gpuPod("z", 1, 400, "", 1000), "n", 3)}
	snap := schedcore.NewSnapshot(pods, []*v1.Node{n})
	randomPick := func() []int {
		// The reservoir over the GPUs that hold 200m (0, 1, 2, 3) draws
		// Intn(1), Intn(2), Intn(3), Intn(4) from the handle's source.
		r := rand.New(rand.NewSource(3))
		c := -1
		for i := 1; i <= 4; i++ {
			if r.Intn(i) == 0 {
				c = i - 1
			}
		}
		return []int{c}
	}
	tests := []struct {
		selection string
		r         *v1.Pod
		want      []int
	}{
		{SelectBest, gpuPod("p", 1, 200, "", 1000), []int{2}},
		{SelectWorst, gpuPod("p", 1, 200, "", 1000), []int{0}},
		{SelectBest, gpuPod("p", 1, 500, "", 1000), []int{1}},
		{SelectRandom, gpuPod("p", 1, 200, "", 1000), randomPick()},
		{SelectBest, gpuPod("p", 1, 1000, "", 1000), []int{0}},
	}
	for _, tt := range tests {
		t.Run(tt.selection+" "+tt.r.Annotations[AnnotationGPUMilli], func(t *testing.T) {
			h := schedcore.NewHandle(snap, 1, schedcore.WithSeed(3))
			pl := newGpuShare(t, &GpuShareArgs{GPUSelection: tt.selection}, h)
			state, _ := states(t, pl, snap, tt.r)
			if st := pl.Reserve(context.Background(), state, tt.r, "n"); !st.IsSuccess() {
				t.Fatal(st)
			}
			if _, ids, _ := pl.Assignment(tt.r.UID); !cmp.Equal(ids, tt.want) {
				t.Errorf("got %v, want %v", ids, tt.want)
			}
		})
	}
}

// fakeSort and fakeBind complete a profile for NewFramework.
type fakeSort struct{}

func (fakeSort) Name() string                            { return "FakeSort" }
func (fakeSort) Less(a, b *schedcore.QueuedPodInfo) bool { return a.Pod.Name < b.Pod.Name }
func (fakeBind) Name() string                            { return "FakeBind" }
func (fakeBind) Bind(context.Context, *schedcore.CycleState, *v1.Pod, string) *schedcore.Status {
	return nil
}

type fakeBind struct{}

// TestSelectionByAScorePlugin builds a profile where GpuShare asks FGDScore
// for the GPU, as the paper's FGD runs do.
func TestSelectionByAScorePlugin(t *testing.T) {
	n := gpuNode("n", 2, "T4", 7000)
	snap := schedcore.NewSnapshot([]*v1.Pod{placedOn(gpuPod("x", 1, 400, "", 1000), "n", 1)}, []*v1.Node{n}) // [1000, 600], 6 cores
	r := schedcore.Registry{
		Name:    {Factory: New, NewArgs: NewGpuShareArgs},
		FGDName: {Factory: NewFGD, NewArgs: NewFGDScoreArgs},
		"FakeSort": {Factory: func(context.Context, runtime.Object, *schedcore.Handle) (schedcore.Plugin, error) {
			return fakeSort{}, nil
		}},
		"FakeBind": {Factory: func(context.Context, runtime.Object, *schedcore.Handle) (schedcore.Plugin, error) {
			return fakeBind{}, nil
		}},
	}
	build := func(selection string) (*schedruntime.Framework, error) {
		name := "default-scheduler"
		w := int32(1)
		fgdArgs := `{"typicalPods": [{"milliCPU": 2000, "weight": 1}, {"milliCPU": 4000, "gpuMilli": 500, "gpuCount": 1, "weight": 2}, {"milliCPU": 8000, "gpuMilli": 1000, "gpuCount": 1, "weight": 1}], "popularityThreshold": 100}`
		prof := &configv1.KubeSchedulerProfile{
			SchedulerName: &name,
			Plugins: &configv1.Plugins{
				QueueSort: configv1.PluginSet{Enabled: []configv1.Plugin{{Name: "FakeSort"}}},
				PreFilter: configv1.PluginSet{Enabled: []configv1.Plugin{{Name: Name}}},
				Filter:    configv1.PluginSet{Enabled: []configv1.Plugin{{Name: Name}}},
				PreScore:  configv1.PluginSet{Enabled: []configv1.Plugin{{Name: FGDName}}},
				Score:     configv1.PluginSet{Enabled: []configv1.Plugin{{Name: FGDName, Weight: &w}}},
				Reserve:   configv1.PluginSet{Enabled: []configv1.Plugin{{Name: Name}}},
				Bind:      configv1.PluginSet{Enabled: []configv1.Plugin{{Name: "FakeBind"}}},
			},
			PluginConfig: []configv1.PluginConfig{
				{Name: Name, Args: runtime.RawExtension{Raw: []byte(fmt.Sprintf(`{"gpuSelection": %q}`, selection))}},
				{Name: FGDName, Args: runtime.RawExtension{Raw: []byte(fgdArgs)}},
			},
		}
		return schedruntime.NewFramework(context.Background(), r, prof, schedcore.NewHandle(snap, 1), schedruntime.FrameworkOptions{})
	}
	fw, err := build(FGDName)
	if err != nil {
		t.Fatal(err)
	}
	pod := gpuPod("p", 1, 500, "", 1000)
	state := schedcore.NewCycleState()
	if _, st, _ := fw.RunPreFilterPlugins(context.Background(), state, pod); !st.IsSuccess() {
		t.Fatal(st)
	}
	if st := fw.RunReservePluginsReserve(context.Background(), state, pod, "n"); !st.IsSuccess() {
		t.Fatal(st)
	}
	gs, _ := fw.Plugin(Name)
	// FGD's hand computation (fgd_test.go): GPU 0 (score 56) over GPU 1
	// (54); best fit would have taken GPU 1.
	if _, ids, _ := gs.(*GpuShare).Assignment(pod.UID); !cmp.Equal(ids, []int{0}) {
		t.Errorf("got %v, want [0]", ids)
	}
	for _, tt := range []struct{ selection, want string }{
		{"Nonexistent", `gpuSelection: "Nonexistent" is neither best, worst, random nor a plugin enabled in the profile`},
		{"FakeSort", `gpuSelection: plugin "FakeSort" does not select GPUs`},
	} {
		fw, err := build(tt.selection)
		if err != nil {
			t.Fatal(err)
		}
		state := schedcore.NewCycleState()
		fw.RunPreFilterPlugins(context.Background(), state, pod)
		st := fw.RunReservePluginsReserve(context.Background(), state, pod, "n")
		if st.IsSuccess() || !strings.Contains(st.Message(), tt.want) {
			t.Errorf("%s: got %v, want an error with %q", tt.selection, st, tt.want)
		}
	}
}

func TestGpuShareArgs(t *testing.T) {
	if _, err := New(context.Background(), &GpuShareArgs{GPUResource: "cpu"}, nil); err == nil || err.Error() != `gpuResource: Invalid value: "cpu": must be an extended resource, not a native one` {
		t.Errorf("err = %v", err)
	}
	pl := newGpuShare(t, nil, nil)
	if pl.resource != DefaultGPUResource || pl.modelLabel != DefaultModelLabel || pl.selection != SelectBest {
		t.Errorf("defaults: %s %s %s", pl.resource, pl.modelLabel, pl.selection)
	}
	if _, err := NewDotProduct(context.Background(), &DotProductScoreArgs{DimExtMethod: "extend"}, nil); err == nil || err.Error() != `dimExtMethod: Unsupported value: "extend": supported values: "merge", "share"` {
		t.Errorf("err = %v", err)
	}
	if _, err := NewDotProduct(context.Background(), &DotProductScoreArgs{NormMethod: "pod"}, nil); err == nil || err.Error() != `normMethod: Unsupported value: "pod": supported values: "max"` {
		t.Errorf("err = %v", err)
	}
}

func TestQueueingHints(t *testing.T) {
	pl := newGpuShare(t, nil, nil)
	pod := gpuPod("p", 2, 1000, "T4", 1000)
	tests := []struct {
		name    string
		fn      schedcore.QueueingHintFn
		old, nw any
		want    schedcore.QueueingHint
	}{
		{"a GPU pod leaving frees GPUs", isSchedulableAfterPodDelete, gpuPod("x", 1, 100, "", 1), nil, schedcore.Queue},
		{"a CPU-only pod leaving does not", isSchedulableAfterPodDelete, gpuPod("x", 0, 0, "", 1), nil, schedcore.QueueSkip},
		{"a node with enough GPUs of the model", pl.isSchedulableAfterNodeChange, nil, gpuNode("n", 2, "T4", 1), schedcore.Queue},
		{"a node with too few GPUs", pl.isSchedulableAfterNodeChange, nil, gpuNode("n", 1, "T4", 1), schedcore.QueueSkip},
		{"a node of another model", pl.isSchedulableAfterNodeChange, nil, gpuNode("n", 8, "P100", 1), schedcore.QueueSkip},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.fn(logr.Discard(), pod, tt.old, tt.nw)
			if err != nil || got != tt.want {
				t.Errorf("got %v %v, want %v", got, err, tt.want)
			}
		})
	}
}
