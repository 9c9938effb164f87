package sweep

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/kubectl-sched/kubectl-sched/internal/replay"
)

func TestSweepOutputsShowFGDCells(t *testing.T) {
	f := func(v float64) *float64 { return &v }
	curve := make([]*float64, 131)
	frag := make([]*float64, 131)
	curve[100], curve[130], frag[100] = f(92.5), f(93.25), f(6.5) // frag[130] not measured
	seed := int64(42)
	rec := ReplayRecord{Summary: replay.Summary{Pods: 10, Placed: 8, Pending: 2}, FGD: &FGDRecord{Pods: 10, Placed: 8, Failed: 2, Alloc: curve, Frag: frag}}
	plain := ReplayRecord{Summary: replay.Summary{Pods: 3, Placed: 3}}
	var cells []MergedCell
	for i, r := range []ReplayRecord{rec, plain} {
		b, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		cells = append(cells, MergedCell{ID: []string{"a", "b"}[i], Axes: CellAxes{Trace: "t", Config: "c", FeatureGates: "default", Seed: &seed}, Result: b})
	}
	m := &Merged{Verb: "replay", Cells: cells}
	tests := []struct {
		format string
		want   []string
	}{
		{"table", []string{"GPU ALLOC@100%  GPU ALLOC@130%  GPU FRAG@100%  GPU FRAG@130%", "92.50%          93.25%          6.50%          -", "-               -               -              -"}},
		{"csv", []string{",fgd_failed,fgd_gpu_alloc_100,fgd_gpu_alloc_130,fgd_gpu_frag_100,fgd_gpu_frag_130\n", ",2,92.5,93.25,6.5,\n", ",,,,,\n"}},
	}
	for _, tt := range tests {
		var b bytes.Buffer
		if err := WriteSweep(&b, m, tt.format); err != nil {
			t.Fatal(err)
		}
		for _, w := range tt.want {
			if !strings.Contains(b.String(), w) {
				t.Errorf("-o %s: no %q in\n%s", tt.format, w, b.String())
			}
		}
	}
}
