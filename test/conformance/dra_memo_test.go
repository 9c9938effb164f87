package conformance

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kubectl-sched/kubectl-sched/internal/dryrun"
	"github.com/kubectl-sched/kubectl-sched/plugins/dynamicresources"
)

// TestAllocationMemoChangesNothing places a generated DRA cluster (every
// feature the DynamicResources plugin handles: partitions, consumable
// capacity, taints, shared and extended-resource claims...) with the
// plugin's allocation memo on and off: the placements, the unschedulable
// pods and their messages must be the same. It fails when one of the
// memo's validity checks (objects revision, pool versions, the
// name-independent signatures of failures) is dropped.
func TestAllocationMemoChangesNothing(t *testing.T) {
	run := func(off bool) ([]string, []string) {
		dynamicresources.MemoDisabled.Store(off)
		defer dynamicresources.MemoDisabled.Store(false)
		cl, err := generatedDRA("DRA/150Nodes", 11)
		if err != nil {
			t.Fatal(err)
		}
		cfg, reg := defaultEngine(t)
		all := int32(100)
		cfg.PercentageOfNodesToScore = &all
		rep, err := dryrun.Run(context.Background(), cl, dryrun.Options{Config: cfg, Registry: reg, NoPreemption: true})
		if err != nil {
			t.Fatal(err)
		}
		var placed, failed []string
		for _, p := range rep.Placements {
			placed = append(placed, p.Pod+" -> "+p.Node)
		}
		for _, u := range rep.Unschedulable {
			failed = append(failed, u.Pod+": "+u.Message)
		}
		return placed, failed
	}
	p1, f1 := run(true)
	p2, f2 := run(false)
	if len(p1) == 0 || len(f1) == 0 {
		t.Fatalf("a weak case: %d placed, %d unschedulable", len(p1), len(f1))
	}
	if d := cmp.Diff(p1, p2); d != "" {
		t.Errorf("placements without (-) and with (+) the memo:\n%s", d)
	}
	if d := cmp.Diff(f1, f2); d != "" {
		t.Errorf("unschedulable without (-) and with (+) the memo:\n%s", d)
	}
}
