package schedcore

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
)

// TestSnapshotMutations: in a mutation session, removing and adding bound
// pods lists the snapshot as a cache without (with) them would, under
// fresh generations, with the pods' group state following; pods assumed
// and forgotten inside the session stack on it; EndMutations lists the
// snapshot as it was, each touched node under a generation never seen.
func TestSnapshotMutations(t *testing.T) {
	b0 := assumeTestPod("b0", "n0", false, false, false)
	b1 := assumeTestPod("b1", "n2", true, false, false)
	b2 := assumeTestPod("b2", "n2", false, true, true)
	bound := []*v1.Pod{b0, b1, b2}
	c := assumeTestCache(bound, nil)
	snap := assumeTestCacheSnapshot(c)
	before := viewSnapshot(t, snap)
	groupBefore := viewOf(mustGroup(t, snap))
	gens := map[int64]bool{}
	for _, g := range snap.ListedGenerations() {
		gens[g] = true
	}
	fresh := func(step, node string) {
		t.Helper()
		g := snap.NodeInfo(node).Generation
		if gens[g] {
			t.Fatalf("%s: node %s has a generation it had before", step, node)
		}
		gens[g] = true
	}

	if err := snap.MutationRemovePod(b0, "n0"); err == nil || err.Error() != "no mutation session started" {
		t.Fatalf("RemovePod outside a session: %v, want kube's error", err)
	}
	if err := snap.StartMutations(); err != nil {
		t.Fatal(err)
	}
	if err := snap.StartMutations(); err == nil || err.Error() != "cannot stack mutations" {
		t.Fatalf("a second StartMutations: %v, want kube's error", err)
	}
	// Victims off: as a cache with only b1 would list it.
	for _, p := range []*v1.Pod{b0, b2} {
		if err := snap.MutationRemovePod(p, p.Spec.NodeName); err != nil {
			t.Fatal(err)
		}
		fresh("remove "+p.Name, p.Spec.NodeName)
	}
	if diff := cmp.Diff(viewSnapshot(t, assumeTestCacheSnapshot(assumeTestCache([]*v1.Pod{b1}, nil))), viewSnapshot(t, snap)); diff != "" {
		t.Fatalf("without b0 and b2 (-cache +snapshot):\n%s", diff)
	}
	if got := viewOf(mustGroup(t, snap)).all; !cmp.Equal(got, []string{"b1"}) {
		t.Fatalf("group members in the session: %v, want [b1]", got)
	}
	// The group algorithm assumes and forgets inside the session.
	p := assumeTestPod("p0", "n0", false, false, false)
	if err := snap.AssumePod(NewPodInfo(p)); err != nil {
		t.Fatal(err)
	}
	if err := snap.ForgetPod(p); err != nil {
		t.Fatal(err)
	}
	// A victim back, and a preemptor added on a node.
	if err := snap.MutationAddPod(NewPodInfo(b2), "n2"); err != nil {
		t.Fatal(err)
	}
	fresh("add b2", "n2")
	if err := snap.MutationAddPod(NewPodInfo(p), "n0"); err != nil {
		t.Fatal(err)
	}
	fresh("add p0", "n0")
	if diff := cmp.Diff(viewSnapshot(t, assumeTestCacheSnapshot(assumeTestCache([]*v1.Pod{b1, b2, p}, nil))), viewSnapshot(t, snap)); diff != "" {
		t.Fatalf("with b2 back and p0 added (-cache +snapshot):\n%s", diff)
	}
	if err := snap.MutationRemovePod(p, "nowhere"); err == nil {
		t.Fatal("RemovePod on an unknown node: no error")
	}
	if err := snap.EndMutations(); err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"n0", "n2"} {
		fresh("end", n)
	}
	if diff := cmp.Diff(before, viewSnapshot(t, snap)); diff != "" {
		t.Fatalf("after EndMutations (-before +after):\n%s", diff)
	}
	if diff := cmp.Diff(groupBefore, viewOf(mustGroup(t, snap)), cmp.AllowUnexported(groupView{})); diff != "" {
		t.Fatalf("group state after EndMutations (-before +after):\n%s", diff)
	}
	if err := snap.EndMutations(); err == nil {
		t.Fatal("EndMutations without a session: no error")
	}
	// A session left open ends with the next update.
	if err := snap.StartMutations(); err != nil {
		t.Fatal(err)
	}
	if err := snap.MutationRemovePod(b1, "n2"); err != nil {
		t.Fatal(err)
	}
	c.UpdateSnapshot(snap)
	if snap.InMutations() {
		t.Fatal("UpdateSnapshot left the session open")
	}
	if diff := cmp.Diff(before, viewSnapshot(t, snap)); diff != "" {
		t.Fatalf("after an update ended the session (-before +after):\n%s", diff)
	}
}

func mustGroup(t *testing.T, snap *Snapshot) PodGroupState {
	t.Helper()
	st, err := snap.PodGroupStates().Get("ns1", "g")
	if err != nil {
		t.Fatal(err)
	}
	return st
}
