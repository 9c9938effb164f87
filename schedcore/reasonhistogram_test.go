package schedcore

import (
	"errors"
	"fmt"
	"slices"
	"sort"
	"testing"
)

// TestReasonHistogramCountsRuns: ReasonHistogram counts a run of nodes
// with equal reason lists at once; the counts must be those of counting
// every node's reasons one by one, whether the lists alternate, repeat,
// differ only in a later reason, come from an error, or are empty.
func TestReasonHistogramCountsRuns(t *testing.T) {
	cpu := NewStatus(Unschedulable, "Insufficient cpu")
	cpuMem := NewStatus(Unschedulable, "Insufficient cpu", "Insufficient memory")
	cpuGPU := NewStatus(Unschedulable, "Insufficient cpu", "Insufficient nvidia.com/gpu")
	taint := NewStatus(UnschedulableAndUnresolvable, "node(s) had untolerated taint")
	for _, tc := range []struct {
		name     string
		statuses []*Status
		absent   int
	}{
		{name: "one run", statuses: []*Status{cpu, cpu, cpu}},
		{name: "alternating", statuses: []*Status{cpu, taint, cpu, taint, taint, cpu}},
		{name: "same first reason, different second", statuses: []*Status{cpuMem, cpuMem, cpuGPU, cpuMem, cpu}},
		{name: "equal lists in different statuses", statuses: []*Status{NewStatus(Unschedulable, "a"), NewStatus(Unschedulable, "a"), NewStatus(Unschedulable, "b")}},
		{name: "errors and empty statuses", statuses: []*Status{AsStatus(errors.New("boom")), AsStatus(errors.New("boom")), NewStatus(Unschedulable), cpu, NewStatus(Unschedulable)}},
		{name: "with absent nodes", statuses: []*Status{taint, cpu}, absent: 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n2s := NewNodeToStatus()
			want := map[string]int{}
			for i, s := range tc.statuses {
				n2s.Set(fmt.Sprintf("n%d", i), s)
				for _, r := range s.Reasons() {
					want[r]++
				}
			}
			for _, r := range n2s.AbsentNodesStatus().Reasons() {
				want[r] += tc.absent
			}
			var wantHist []string
			for r, c := range want {
				wantHist = append(wantHist, fmt.Sprintf("%v %v", c, r))
			}
			sort.Strings(wantHist)
			fe := &FitError{NumAllNodes: len(tc.statuses) + tc.absent, Diagnosis: Diagnosis{NodeToStatus: n2s}}
			if got := fe.ReasonHistogram(); !slices.Equal(got, wantHist) && !(len(got) == 0 && len(wantHist) == 0) {
				t.Errorf("ReasonHistogram() = %q, want %q", got, wantHist)
			}
		})
	}
}
