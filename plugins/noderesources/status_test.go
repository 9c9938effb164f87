package noderesources

import (
	"fmt"
	"math/rand"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"

	"github.com/kubectl-sched/kubectl-sched/schedcore"
)

// TestInsufficientStatusSharesTheFixedOnes checks that the rejection Filter
// returns says what a status made anew from the shortfalls says (code and
// reasons, in order), shared or not: shared for shortfalls of pods, cpu,
// memory and ephemeral storage, and, with the pod's table of scalar
// statuses, for those naming its scalar resources too (one status per
// code and set); made anew when a scalar resource is short and the pod
// has no table (more scalar resources than maxSharedScalars).
func TestInsufficientStatusSharesTheFixedOnes(t *testing.T) {
	rng := rand.New(rand.NewSource(3))
	all := []InsufficientResource{
		{ResourceName: v1.ResourcePods, Reason: ErrReasonTooManyPods},
		{ResourceName: v1.ResourceCPU, Reason: ErrReasonInsufficientCPU},
		{ResourceName: v1.ResourceMemory, Reason: ErrReasonInsufficientMemory},
		{ResourceName: v1.ResourceEphemeralStorage, Reason: ErrReasonInsufficientEphemeralStorage},
		{ResourceName: "example.com/fpga", Reason: "Insufficient example.com/fpga"},
		{ResourceName: "example.com/gpu", Reason: "Insufficient example.com/gpu"},
	}
	withTable := &preFilterState{scalars: []scalarRequest{{name: "example.com/fpga"}, {name: "example.com/gpu"}}}
	withTable.makeScalarStatuses()
	noTable := &preFilterState{scalars: withTable.scalars}
	seen := map[string]*schedcore.Status{}
	for n := range 1000 {
		var ins []InsufficientResource
		scalar := false
		for i, r := range all {
			if rng.Intn(2) == 0 {
				r.Unresolvable = rng.Intn(3) == 0
				ins = append(ins, r)
				scalar = scalar || i >= len(fixedNames)
			}
		}
		if len(ins) == 0 {
			continue
		}
		code := schedcore.Unschedulable
		var reasons []string
		for _, r := range ins {
			reasons = append(reasons, r.Reason)
			if r.Unresolvable {
				code = schedcore.UnschedulableAndUnresolvable
			}
		}
		want := schedcore.NewStatus(code, reasons...)
		s, tabled := noTable, n%2 == 0
		if tabled {
			s = withTable
		}
		got := insufficientStatus(s, ins)
		if !got.Equal(want) || got.Code() != want.Code() {
			t.Fatalf("%+v: status %v, want %v", ins, got, want)
		}
		if diff := cmp.Diff(want.Reasons(), got.Reasons()); diff != "" {
			t.Fatalf("%+v: reasons (-want +got):\n%s", ins, diff)
		}
		// A shared status is stamped as a copy: the plugin name does not
		// stay on it.
		if shared := got.WithPlugin("P") != got; shared != (!scalar || tabled) {
			t.Errorf("%+v: shared %v, want %v", ins, shared, !scalar || tabled)
		}
		// One shared status per code and set of shortfalls.
		if tabled {
			k := fmt.Sprint(got.Code(), got.Reasons())
			if prev, ok := seen[k]; ok && prev != got {
				t.Errorf("%+v: two shared statuses for %s", ins, k)
			}
			seen[k] = got
		}
	}
}
