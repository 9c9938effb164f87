package gpushare

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	st "github.com/kubectl-sched/kubectl-sched/schedcore/schedtest"
)

func TestParseRequest(t *testing.T) {
	tests := []struct {
		name    string
		ann     map[string]string
		want    Request
		wantErr string
	}{
		{name: "a pod without annotations asks for no GPU", want: Request{}},
		{name: "a share of one GPU", ann: map[string]string{AnnotationGPUCount: "1", AnnotationGPUMilli: "460"}, want: Request{Count: 1, Milli: 460}},
		{name: "milli alone means one GPU", ann: map[string]string{AnnotationGPUMilli: "250"}, want: Request{Count: 1, Milli: 250}},
		{name: "count alone means whole GPUs", ann: map[string]string{AnnotationGPUCount: "4"}, want: Request{Count: 4, Milli: 1000}},
		{name: "a model list is split on |, empty entries dropped", ann: map[string]string{AnnotationGPUCount: "1", AnnotationGPUModel: "V100M16||V100M32"},
			want: Request{Count: 1, Milli: 1000, Model: "V100M16||V100M32", Models: []string{"V100M16", "V100M32"}}},
		{name: "zero thousandths ask for no GPU, as in the artifact", ann: map[string]string{AnnotationGPUCount: "1", AnnotationGPUMilli: "0"}, want: Request{}},
		{name: "zero GPUs ask for none", ann: map[string]string{AnnotationGPUCount: "0", AnnotationGPUMilli: "500"}, want: Request{}},
		{name: "milli above 1000 is invalid", ann: map[string]string{AnnotationGPUMilli: "1001"},
			wantErr: `annotation gpushare.kubectl-sched.io/gpu-milli: invalid value "1001": want an integer in [0, 1000]`},
		{name: "a non-number count is invalid", ann: map[string]string{AnnotationGPUCount: "two"},
			wantErr: `annotation gpushare.kubectl-sched.io/gpu-count: invalid value "two": want an integer in [0, 64]`},
		{name: "several GPUs must be whole", ann: map[string]string{AnnotationGPUCount: "2", AnnotationGPUMilli: "500"},
			wantErr: `annotation gpushare.kubectl-sched.io/gpu-milli: 2 GPUs of 500m each: a pod with more than one GPU takes whole GPUs (1000m)`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := st.MakePod("p").Obj()
			p.Annotations = tt.ann
			got, err := ParseRequest(p)
			if tt.wantErr != "" {
				if err == nil || err.Error() != tt.wantErr {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tt.want, got, cmpopts.EquateEmpty()); d != "" {
				t.Errorf("(-want +got):\n%s", d)
			}
		})
	}
}

func TestAcceptsModel(t *testing.T) {
	tests := []struct {
		name   string
		models []string
		node   string
		want   bool
	}{
		{"no restriction accepts any node", nil, "T4", true},
		{"no restriction accepts an unlabelled node", nil, "", true},
		{"a listed model is accepted", []string{"P100", "T4"}, "T4", true},
		{"another model is not", []string{"P100"}, "T4", false},
		{"an unlabelled node is not", []string{"P100"}, "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := (Request{Models: tt.models}).AcceptsModel(tt.node); got != tt.want {
				t.Errorf("got %v, want %v", got, tt.want)
			}
		})
	}
}

func TestIndexAnnotation(t *testing.T) {
	tests := []struct {
		value string
		want  []int
	}{
		{"0", []int{0}},
		{"2-3-4", []int{2, 3, 4}},
		{"", nil},
		{"1-x", nil},
		{"-1", nil},
	}
	for _, tt := range tests {
		p := st.MakePod("p").Obj()
		p.Annotations = map[string]string{AnnotationGPUIndex: tt.value}
		if d := cmp.Diff(tt.want, parseIndex(p)); d != "" {
			t.Errorf("parseIndex(%q) (-want +got):\n%s", tt.value, d)
		}
		if tt.want != nil && FormatIndex(tt.want) != tt.value {
			t.Errorf("FormatIndex(%v) = %q, want %q", tt.want, FormatIndex(tt.want), tt.value)
		}
	}
}

func TestNodeGPUs(t *testing.T) {
	g := gpus("T4", 1000, 540, 300, 1000, 540)
	tests := []struct {
		name string
		got  any
		want any
	}{
		{"total free", g.TotalFree(), int64(3380)},
		{"fully free GPUs", g.FullyFree(), 2},
		{"best fit is the tightest, the lowest index among equals", g.BestFit(500), 1},
		{"best fit of a share nothing holds", g.BestFit(1001), -1},
		{"worst fit is the freest, the lowest index among equals", g.WorstFit(500), 0},
		{"whole GPUs are the first fully free ones", g.Exclusive(2), []int{0, 3}},
		{"more whole GPUs than free ones", g.Exclusive(3), []int(nil)},
		{"a share fits where one GPU holds it", g.Fits(req(1, 540, 0)), true},
		{"a share no GPU holds does not fit", gpus("T4", 540, 300).Fits(req(1, 541, 0)), false},
		{"two whole GPUs fit", g.Fits(req(2, 1000, 0)), true},
		{"three whole GPUs do not", g.Fits(req(3, 1000, 0)), false},
		{"a pod without GPUs always fits", gpus("").Fits(Request{}), true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if d := cmp.Diff(tt.want, tt.got); d != "" {
				t.Errorf("(-want +got):\n%s", d)
			}
		})
	}
	// Take copies: the original state is immutable.
	after := g.Take(req(1, 300, 0), []int{2})
	if g.Free[2] != 300 || after.Free[2] != 0 || after.Tags != 1 {
		t.Errorf("Take: before %v after %v tags %b", g.Free, after.Free, after.Tags)
	}
}

func TestPackInto(t *testing.T) {
	// The artifact's NodeResource.Sub: smallest free first, each GPU that
	// holds a share takes one.
	tests := []struct {
		name string
		free []int64
		r    Request
		want []int64
		ok   bool
	}{
		{"whole GPUs take the fully free ones in index order", []int64{1000, 300, 1000, 1000}, req(2, 1000, 0), []int64{0, 300, 0, 1000}, true},
		{"a share takes the tightest", []int64{1000, 540, 300}, req(1, 300, 0), []int64{1000, 540, 0}, true},
		{"not enough GPUs: what fits is taken", []int64{1000, 300}, req(2, 1000, 0), []int64{0, 300}, false},
		{"no GPUs asked: nothing changes", []int64{1000}, Request{}, []int64{1000}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			free := append([]int64(nil), tt.free...)
			ok := packInto(free, tt.r)
			if ok != tt.ok {
				t.Errorf("ok = %v, want %v", ok, tt.ok)
			}
			if d := cmp.Diff(tt.want, free); d != "" {
				t.Errorf("(-want +got):\n%s", d)
			}
		})
	}
}

func TestNonZeroCPU(t *testing.T) {
	p := st.MakePod("p").Req("cpu", "1500m").Container("sidecar").InitReq("cpu", "8").Obj()
	// 1500m + 100m for the sidecar without a request; init containers do
	// not count.
	if got := NonZeroCPU(p); got != 1600 {
		t.Errorf("got %d, want 1600", got)
	}
}
