package coscheduling

import (
	"context"
	"fmt"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/kubectl-sched/kubectl-sched/schedcore"
	"github.com/kubectl-sched/kubectl-sched/schedcore/schedtest"
)

// TestUnreserveOnTheBindingGoroutine runs Unreserve as `run` does when a
// gang member's binding cycle fails (rejected at Permit, timed out, Bind
// error): on the binding goroutine, while the scheduling goroutine goes on
// refreshing the snapshot for the next pods. Under -race this fails if
// Unreserve reads the snapshot; without, it checks what Unreserve records:
// the cluster outside the group as the member's own cycle saw it, so the
// group is retried once the rest of the cluster has changed since, and not
// before.
func TestUnreserveOnTheBindingGoroutine(t *testing.T) {
	ctx := context.Background()
	cache := schedcore.NewCache(schedcore.DefaultFeatures)
	for i := range 8 {
		cache.AddNode(schedtest.MakeNode(fmt.Sprintf("n%d", i)).Capacity("cpu", "64", "memory", "64Gi", "pods", "110").Obj())
	}
	snap := schedcore.NewEmptySnapshot()
	cache.UpdateSnapshot(snap)
	gang := []*v1.Pod{labelled("a", "g"), labelled("b", "g"), labelled("c", "g")}
	h := schedcore.NewHandle(snap, 1,
		schedcore.WithClock(clocktesting.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))),
		schedcore.WithObjects(&objects{pods: gang, others: map[string]runtime.Object{PodGroupAPIVersion + "/PodGroup/ns/g": crd("g", 3, nil)}}))
	p, err := New(ctx, nil, h)
	if err != nil {
		t.Fatal(err)
	}
	pl := p.(*Coscheduling)

	// The scheduling cycle of a: Reserve on the scheduling goroutine.
	state := schedcore.NewCycleState()
	if st := pl.Reserve(ctx, state, gang[0], "n0"); !st.IsSuccess() {
		t.Fatal(st.AsError())
	}
	// a's binding cycle fails; meanwhile the next cycles place other pods.
	done := make(chan struct{})
	go func() {
		defer close(done)
		pl.Unreserve(ctx, state, gang[0], "n0")
	}()
	for i := range 40 {
		other := schedtest.MakePod(fmt.Sprintf("other-%d", i)).Req("cpu", "100m").Node(fmt.Sprintf("n%d", i%8)).Obj()
		if err := cache.AddPod(other); err != nil {
			t.Fatal(err)
		}
		cache.UpdateSnapshot(snap)
	}
	<-done

	if _, st := pl.PreFilter(ctx, schedcore.NewCycleState(), gang[1], snap.List()); !st.IsSuccess() {
		t.Errorf("PreFilter after other pods were placed: %v %q, want the group tried again", st.Code(), st.Message())
	}
	// Failing again with nothing changed since its Reserve, the group
	// waits for a change.
	state = schedcore.NewCycleState()
	pl.Reserve(ctx, state, gang[1], "n1")
	pl.Unreserve(ctx, state, gang[1], "n1")
	if _, st := pl.PreFilter(ctx, schedcore.NewCycleState(), gang[2], snap.List()); st.Code() != schedcore.UnschedulableAndUnresolvable || st.Message() != "podGroup ns/g failed recently" {
		t.Errorf("PreFilter with nothing changed: %v %q, want UnschedulableAndUnresolvable \"podGroup ns/g failed recently\"", st.Code(), st.Message())
	}
}
