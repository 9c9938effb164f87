package queuesort

import (
	"context"
	"testing"
	"time"

	"github.com/kubectl-sched/kubectl-sched/schedcore"
	"github.com/kubectl-sched/kubectl-sched/schedcore/schedtest"
)

func TestLess(t *testing.T) {
	t1 := time.Unix(1700000000, 0)
	t2 := t1.Add(time.Second)
	qpi := func(prio *int32, ts time.Time) *schedcore.QueuedPodInfo {
		w := schedtest.MakePod("p")
		if prio != nil {
			w.Priority(*prio)
		}
		return &schedcore.QueuedPodInfo{PodInfo: schedcore.NewPodInfo(w.Obj()), Timestamp: ts}
	}
	lo, hi, zero := int32(1), int32(100), int32(0)
	tests := []struct {
		name string
		a, b *schedcore.QueuedPodInfo
		want bool
	}{
		{name: "a higher priority goes first", a: qpi(&hi, t2), b: qpi(&lo, t1), want: true},
		{name: "a lower priority goes after", a: qpi(&lo, t1), b: qpi(&hi, t2), want: false},
		{name: "equal priorities go by earlier timestamp", a: qpi(&hi, t1), b: qpi(&hi, t2), want: true},
		{name: "a later timestamp at equal priority goes after", a: qpi(&hi, t2), b: qpi(&hi, t1), want: false},
		{name: "equal priority and timestamp is not less", a: qpi(&hi, t1), b: qpi(&hi, t1), want: false},
		{name: "an unset priority counts as zero", a: qpi(nil, t1), b: qpi(&zero, t2), want: true},
		{name: "a negative priority goes after an unset one", a: qpi(func() *int32 { v := int32(-1); return &v }(), t1), b: qpi(nil, t2), want: false},
	}
	p, err := New(context.Background(), nil, schedcore.NewHandle(nil, 0))
	if err != nil {
		t.Fatal(err)
	}
	pl := p.(*PrioritySort)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := pl.Less(tc.a, tc.b); got != tc.want {
				t.Errorf("Less = %v, want %v", got, tc.want)
			}
		})
	}
}
