package schedcore

import "testing"

// TestSettledFitErrorKeepsWhatDriversRead: once a failed cycle's FitError
// is settled and its node statuses are released (the scheduler does so
// after the failure handling), the FitError still reads as before: the
// same message, and RejectedForGroup still sees the status that rejected
// the pod for its group; its NodeToStatus is gone rather than emptied.
func TestSettledFitErrorKeepsWhatDriversRead(t *testing.T) {
	for _, tc := range []struct {
		name      string
		forGroup  bool
		prefilter string
	}{
		{name: "a node rejected for the group", forGroup: true},
		{name: "only the pod's own rejections"},
		{name: "PreFilter rejected every node for the group", forGroup: true, prefilter: "sibling failed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n2s := NewCycleNodeToStatus()
			n2s.Set("a", NewStatus(Unschedulable, "own").WithPlugin("P"))
			switch {
			case tc.prefilter != "":
				n2s.SetAbsentNodesStatus(NewStatus(UnschedulableAndUnresolvable, tc.prefilter).ForGroup())
			case tc.forGroup:
				n2s.Set("b", NewStatus(Unschedulable, "sibling failed").WithPlugin("G").ForGroup())
			}
			fe := &FitError{NumAllNodes: 3, Diagnosis: Diagnosis{NodeToStatus: n2s, PreFilterMsg: tc.prefilter, PostFilterMsg: "preemption: not helpful."}}
			st := NewStatus(Unschedulable).WithError(fe)
			wantMsg, wantGroup := st.Message(), RejectedForGroup(st)
			if wantGroup != tc.forGroup {
				t.Fatalf("before settling: RejectedForGroup %v, want %v", wantGroup, tc.forGroup)
			}
			fe.Settle()
			fe.Release()
			if fe.Diagnosis.NodeToStatus != nil {
				t.Fatalf("the released FitError still holds its node statuses")
			}
			if got := st.Message(); got != wantMsg {
				t.Errorf("message %q after release, want %q", got, wantMsg)
			}
			if got := RejectedForGroup(st); got != wantGroup {
				t.Errorf("RejectedForGroup %v after release, want %v", got, wantGroup)
			}
		})
	}
}
