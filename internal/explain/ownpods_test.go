package explain

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kubectl-sched/kubectl-sched/internal/engine"
	"github.com/kubectl-sched/kubectl-sched/internal/gen/workload"
	"github.com/kubectl-sched/kubectl-sched/internal/snapshot"
)

// With OwnPods the pods without a UID get theirs in place instead of in a
// copy; without it the caller's pods are left as they are. The
// explanations are the same either way, of pending pods and of bound ones
// (which an explanation takes off their node).
func TestOwnPodsExplainsAsCopies(t *testing.T) {
	gen := func() *snapshot.Cluster {
		w, err := workload.Generate("Mixed/500Nodes", workload.Params{Seed: 1})
		if err != nil {
			t.Fatal(err)
		}
		return w.Cluster()
	}
	ctx := context.Background()
	o := options(t)
	copiedCl, ownedCl := gen(), gen()
	copiedPods, ownedPods := copiedCl.Pods, ownedCl.Pods
	copied, err := NewState(ctx, copiedCl, o)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range copiedPods {
		if p.UID != "" {
			t.Fatalf("without OwnPods, %s/%s got UID %q: the caller's pod was changed", p.Namespace, p.Name, p.UID)
		}
	}
	o.OwnPods = true
	owned, err := NewState(ctx, ownedCl, o)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range ownedPods {
		if want := engine.SnapshotUID(p.Namespace, p.Name); p.UID != want {
			t.Fatalf("with OwnPods, %s/%s has UID %q, want %q", p.Namespace, p.Name, p.UID, want)
		}
	}
	pending, bound := 0, 0
	for i, p := range copiedPods {
		switch {
		case p.Spec.NodeName == "" && pending < 15:
			pending++
		case p.Spec.NodeName != "" && bound < 10:
			bound++
		default:
			continue
		}
		want, err := copied.Explain(ctx, p)
		if err != nil {
			t.Fatal(err)
		}
		got, err := owned.Explain(ctx, ownedPods[i])
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%s/%s (-copies +owned):\n%s", p.Namespace, p.Name, diff)
		}
	}
	if pending == 0 || bound == 0 {
		t.Fatalf("explained %d pending and %d bound pods, want some of each", pending, bound)
	}
}
