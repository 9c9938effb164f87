package schedcore

import (
	"fmt"
	"math/rand"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// snapView is what a snapshot lists, for comparing a snapshot with pods
// assumed in it with one the cache built with those pods.
type snapView struct {
	Nodes                    []string
	AffinityList, AntiList   []string
	ImageNodes               int
	Map                      []string
	NumNodes, NumInPlacement int
}

func viewSnapshot(t *testing.T, s *Snapshot) snapView {
	t.Helper()
	var v snapView
	for i, ni := range s.List() {
		pods := make([]string, 0, len(ni.Pods))
		for _, pi := range ni.Pods {
			pods = append(pods, pi.Pod.Name)
		}
		sort.Strings(pods)
		ports := []string{}
		for ip, pps := range ni.UsedPorts {
			for pp := range pps {
				ports = append(ports, fmt.Sprint(ip, pp))
			}
		}
		sort.Strings(ports)
		v.Nodes = append(v.Nodes, fmt.Sprintf("%s pods=%v req=%d/%d nonzero=%d/%d ports=%v pvcs=%v aff=%d anti=%d",
			ni.Name(), pods, ni.Requested.MilliCPU, ni.Requested.Memory, ni.NonZeroRequested.MilliCPU, ni.NonZeroRequested.Memory,
			ports, ni.PVCRefCounts, len(ni.PodsWithAffinity), len(ni.PodsWithRequiredAntiAffinity)))
		// The per-position columns are the listed NodeInfo's own.
		if ni.ListIndex() != i || s.listGens[i] != ni.Generation || s.listNames[i] != ni.Name() || s.listFlags[i] != listFlagsOf(ni) {
			t.Errorf("list position %d: columns (gen %d, name %q, flags %b, pos %d) are not its NodeInfo's (gen %d, name %q, flags %b)",
				i, s.listGens[i], s.listNames[i], s.listFlags[i], ni.ListIndex(), ni.Generation, ni.Name(), listFlagsOf(ni))
		}
		if s.nodeInfoMap[ni.Name()] != ni {
			t.Errorf("node %s: the map holds another NodeInfo than the list", ni.Name())
		}
	}
	for _, ni := range s.HavePodsWithAffinityList() {
		v.AffinityList = append(v.AffinityList, ni.Name())
		if s.List()[ni.ListIndex()] != ni {
			t.Errorf("affinity list holds a NodeInfo of %s that is not listed", ni.Name())
		}
	}
	for _, ni := range s.HavePodsWithRequiredAntiAffinityList() {
		v.AntiList = append(v.AntiList, ni.Name())
		if s.List()[ni.ListIndex()] != ni {
			t.Errorf("anti-affinity list holds a NodeInfo of %s that is not listed", ni.Name())
		}
	}
	for name := range s.nodeInfoMap {
		v.Map = append(v.Map, name)
	}
	sort.Strings(v.Map)
	v.ImageNodes, v.NumNodes, v.NumInPlacement = s.NodesWithImages(), s.NumNodes(), s.NumNodesInPlacement()
	return v
}

func assumeTestNodes() []*v1.Node {
	var nodes []*v1.Node
	for i := range 4 {
		n := &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("n%d", i), Labels: map[string]string{v1.LabelTopologyZone: fmt.Sprint("z", i%2)}}}
		n.Status.Allocatable = v1.ResourceList{v1.ResourceCPU: resource.MustParse("4"), v1.ResourceMemory: resource.MustParse("8Gi"), v1.ResourcePods: resource.MustParse("110")}
		if i == 1 {
			n.Status.Images = []v1.ContainerImage{{Names: []string{"img"}, SizeBytes: 300 << 20}}
		}
		nodes = append(nodes, n)
	}
	return nodes
}

// assumeTestPod is a group member of "g" on node, with a cpu request, and
// affinity terms (aff: preferred affinity; anti: required anti-affinity),
// a host port and a claim when asked.
func assumeTestPod(name, node string, aff, anti, port bool) *v1.Pod {
	p := groupMember(name, "g", node)
	p.Spec.Containers = []v1.Container{{Name: "c", Resources: v1.ResourceRequirements{Requests: v1.ResourceList{v1.ResourceCPU: resource.MustParse("500m")}}}}
	term := v1.PodAffinityTerm{TopologyKey: v1.LabelTopologyZone, LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "x"}}}
	if aff || anti {
		p.Spec.Affinity = &v1.Affinity{}
	}
	if aff {
		p.Spec.Affinity.PodAffinity = &v1.PodAffinity{PreferredDuringSchedulingIgnoredDuringExecution: []v1.WeightedPodAffinityTerm{{Weight: 1, PodAffinityTerm: term}}}
	}
	if anti {
		p.Spec.Affinity.PodAntiAffinity = &v1.PodAntiAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []v1.PodAffinityTerm{term}}
	}
	if port {
		p.Spec.Containers[0].Ports = []v1.ContainerPort{{HostPort: 8080, ContainerPort: 80, Protocol: v1.ProtocolTCP}}
		p.Spec.Volumes = []v1.Volume{{Name: "v", VolumeSource: v1.VolumeSource{PersistentVolumeClaim: &v1.PersistentVolumeClaimVolumeSource{ClaimName: "claim-" + name}}}}
	}
	return p
}

// assumeTestCache is a cache with GenericWorkload on, the test nodes, the
// bound pods and the pending members of group "g".
func assumeTestCache(bound, pending []*v1.Pod) *Cache {
	f := DefaultFeatures
	f.GenericWorkload = true
	c := NewCache(f)
	for _, n := range assumeTestNodes() {
		c.AddNode(n)
	}
	for _, p := range bound {
		if err := c.AddPod(p); err != nil {
			panic(err)
		}
	}
	for _, p := range pending {
		c.AddPodGroupMember(p)
	}
	return c
}

// TestSnapshotAssumeForget checks that pods assumed in the snapshot are
// listed as a cache holding them would list them (nodes, affinity lists,
// the per-position columns, the pods' group state), that forgetting them,
// last first, lists the snapshot as before, each change under a fresh
// generation, and that the cache is never changed.
func TestSnapshotAssumeForget(t *testing.T) {
	bound := []*v1.Pod{assumeTestPod("b0", "n0", false, false, false), assumeTestPod("b1", "n2", true, false, false)}
	tests := []struct {
		name   string
		assume []*v1.Pod
	}{
		{"one pod on a node", []*v1.Pod{assumeTestPod("p0", "n0", false, false, false)}},
		{"pods on several nodes", []*v1.Pod{assumeTestPod("p0", "n0", false, false, false), assumeTestPod("p1", "n3", false, false, true), assumeTestPod("p2", "n1", false, false, false)}},
		{"two pods on one node", []*v1.Pod{assumeTestPod("p0", "n1", false, false, true), assumeTestPod("p1", "n1", false, false, false)}},
		{"a node enters the affinity lists", []*v1.Pod{assumeTestPod("p0", "n3", true, true, false)}},
		{"a node already in the affinity list", []*v1.Pod{assumeTestPod("p0", "n2", true, false, false), assumeTestPod("p1", "n2", false, true, false)}},
		{"a node before and after others in the lists", []*v1.Pod{assumeTestPod("p0", "n3", true, false, false), assumeTestPod("p1", "n0", true, true, false), assumeTestPod("p2", "n1", false, true, false)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pending := make([]*v1.Pod, len(tt.assume))
			for i, p := range tt.assume {
				pending[i] = onNode(p, "")
			}
			c := assumeTestCache(bound, pending)
			snap := NewEmptySnapshot()
			c.UpdateSnapshot(snap)
			before := viewSnapshot(t, snap)
			groupBefore := groupViewOf(t, snap)
			gens := map[int64]bool{}
			for _, g := range snap.ListedGenerations() {
				gens[g] = true
			}
			for k, p := range tt.assume {
				if err := snap.AssumePod(NewPodInfo(p)); err != nil {
					t.Fatal(err)
				}
				// As the cache would list it with the pods assumed so far.
				want := assumeTestCache(append(append([]*v1.Pod{}, bound...), tt.assume[:k+1]...), pending[k+1:])
				wantSnap := NewEmptySnapshot()
				want.UpdateSnapshot(wantSnap)
				if diff := cmp.Diff(viewSnapshot(t, wantSnap), viewSnapshot(t, snap)); diff != "" {
					t.Fatalf("after assuming %s (-cache with it +snapshot):\n%s", p.Name, diff)
				}
				if diff := cmp.Diff(groupViewOf(t, wantSnapAssumed(tt.assume, k+1)), groupViewOf(t, snap), cmp.AllowUnexported(groupView{})); diff != "" {
					t.Fatalf("group state after assuming %s (-cache +snapshot):\n%s", p.Name, diff)
				}
				ni := snap.NodeInfo(p.Spec.NodeName)
				if gens[ni.Generation] {
					t.Fatalf("after assuming %s, node %s has a generation it had before", p.Name, ni.Name())
				}
				gens[ni.Generation] = true
			}
			if diff := cmp.Diff(before, viewSnapshot(t, assumeTestCacheSnapshot(c))); diff != "" {
				t.Fatalf("the cache changed (-before +after):\n%s", diff)
			}
			for k := len(tt.assume) - 1; k >= 0; k-- {
				p := tt.assume[k]
				if err := snap.ForgetPod(p); err != nil {
					t.Fatal(err)
				}
				ni := snap.NodeInfo(p.Spec.NodeName)
				if gens[ni.Generation] {
					t.Fatalf("after forgetting %s, node %s has a generation it had before", p.Name, ni.Name())
				}
				gens[ni.Generation] = true
			}
			if diff := cmp.Diff(before, viewSnapshot(t, snap)); diff != "" {
				t.Fatalf("after forgetting every pod (-before +after):\n%s", diff)
			}
			if diff := cmp.Diff(groupBefore, groupViewOf(t, snap), cmp.AllowUnexported(groupView{})); diff != "" {
				t.Fatalf("group state after forgetting every pod (-before +after):\n%s", diff)
			}
			// The next update lists the cache's nodes again.
			c.UpdateSnapshot(snap)
			if diff := cmp.Diff(before, viewSnapshot(t, snap)); diff != "" {
				t.Fatalf("after the next update (-before +after):\n%s", diff)
			}
		})
	}
}

// wantSnapAssumed is the snapshot of a cache holding members as pending
// pods, the first n of them assumed in the cache itself.
func wantSnapAssumed(members []*v1.Pod, n int) *Snapshot {
	c := assumeTestCache(nil, nil)
	for _, p := range members {
		c.AddPodGroupMember(onNode(p, ""))
	}
	for _, p := range members[:n] {
		if err := c.AssumePod(p); err != nil {
			panic(err)
		}
	}
	return assumeTestCacheSnapshot(c)
}

func assumeTestCacheSnapshot(c *Cache) *Snapshot {
	s := NewEmptySnapshot()
	c.UpdateSnapshot(s)
	return s
}

// groupViewOf is group "g"'s state in snap, bound members left out (the
// two caches of the comparison differ in them).
func groupViewOf(t *testing.T, snap *Snapshot) groupView {
	t.Helper()
	st, err := snap.PodGroupStates().Get("ns1", "g")
	if err != nil {
		t.Fatal(err)
	}
	v := viewOf(st)
	drop := func(l []string) []string {
		out := []string{}
		for _, s := range l {
			if !strings.HasPrefix(s, "b") {
				out = append(out, s)
			}
		}
		return out
	}
	v.all, v.assigned, v.scheduled = drop(v.all), drop(v.assigned), drop(v.scheduled)
	return v
}

func TestSnapshotForgetErrors(t *testing.T) {
	c := assumeTestCache(nil, nil)
	snap := assumeTestCacheSnapshot(c)
	p0, p1 := assumeTestPod("p0", "n0", false, false, false), assumeTestPod("p1", "n1", false, false, false)
	if err := snap.ForgetPod(p0); err == nil || err.Error() != `assumed pod "p0" not found in the snapshot` {
		t.Fatalf("forgetting a pod never assumed: got %v", err)
	}
	for _, p := range []*v1.Pod{p0, p1} {
		if err := snap.AssumePod(NewPodInfo(p)); err != nil {
			t.Fatal(err)
		}
	}
	if err := snap.ForgetPod(p0); err == nil || !strings.Contains(err.Error(), "not the last assumed one") {
		t.Fatalf("forgetting a pod out of order: got %v", err)
	}
	if snap.NumAssumedPods() != 2 {
		t.Fatalf("a refused forget changed the stack: %d assumed", snap.NumAssumedPods())
	}
	if err := snap.AssumePod(NewPodInfo(assumeTestPod("p2", "", false, false, false))); err == nil {
		t.Fatal("assuming a pod without a node: no error")
	}
}

// TestSnapshotAssumeOnUnknownNode: as kube's, a pod assumed on a node the
// snapshot does not have goes into an unlisted NodeInfo, which its forget
// drops.
func TestSnapshotAssumeOnUnknownNode(t *testing.T) {
	snap := assumeTestCacheSnapshot(assumeTestCache(nil, nil))
	before := viewSnapshot(t, snap)
	p := assumeTestPod("p0", "nx", false, false, false)
	if err := snap.AssumePod(NewPodInfo(p)); err != nil {
		t.Fatal(err)
	}
	if ni := snap.NodeInfo("nx"); ni == nil || len(ni.Pods) != 1 || ni.ListIndex() != -1 {
		t.Fatalf("unknown node: want an unlisted NodeInfo with the pod, got %v", ni)
	}
	if _, err := snap.Get("nx"); err == nil {
		t.Fatal("Get of a node the snapshot does not have: no error")
	}
	if err := snap.ForgetPod(p); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(before, viewSnapshot(t, snap)); diff != "" {
		t.Fatalf("after the forget (-before +after):\n%s", diff)
	}
}

// TestUpdateSnapshotEndsSimulation: pods left assumed and a placement left
// set are forgotten by the next UpdateSnapshot, as kube's does.
func TestUpdateSnapshotEndsSimulation(t *testing.T) {
	c := assumeTestCache(nil, nil)
	snap := assumeTestCacheSnapshot(c)
	before := viewSnapshot(t, snap)
	if err := snap.AssumePlacement("z0", []*NodeInfo{snap.NodeInfo("n0"), snap.NodeInfo("n2")}); err != nil {
		t.Fatal(err)
	}
	for _, p := range []*v1.Pod{assumeTestPod("p0", "n0", true, false, false), assumeTestPod("p1", "n2", false, true, true), assumeTestPod("p2", "n0", false, false, false)} {
		if err := snap.AssumePod(NewPodInfo(p)); err != nil {
			t.Fatal(err)
		}
	}
	c.UpdateSnapshot(snap)
	if snap.NumAssumedPods() != 0 {
		t.Fatalf("%d pods still assumed", snap.NumAssumedPods())
	}
	if _, _, ok := snap.Placement(); ok {
		t.Fatal("placement still set")
	}
	if diff := cmp.Diff(before, viewSnapshot(t, snap)); diff != "" {
		t.Fatalf("(-before +after):\n%s", diff)
	}
}

// TestSnapshotAssumeKeepsChangeLogReaders: indexes synced from the
// snapshot's change log (NodeSlots) see every assume and forget: after
// random assumes and forgets, a slot synced along the way holds what a
// slot synced from scratch holds.
func TestSnapshotAssumeKeepsChangeLogReaders(t *testing.T) {
	rng := rand.New(rand.NewSource(3))
	c := assumeTestCache(nil, nil)
	snap := assumeTestCacheSnapshot(c)
	podsOf := func(ni *NodeInfo, s *[]string) {
		*s = (*s)[:0]
		for _, pi := range ni.Pods {
			*s = append(*s, pi.Pod.Name)
		}
		sort.Strings(*s)
	}
	var synced NodeSlots[[]string]
	var stack []*v1.Pod
	for step := range 400 {
		if len(stack) > 0 && rng.Intn(3) == 0 {
			p := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			if err := snap.ForgetPod(p); err != nil {
				t.Fatal(err)
			}
		} else {
			p := assumeTestPod(fmt.Sprint("p", step), fmt.Sprint("n", rng.Intn(4)), rng.Intn(2) == 0, rng.Intn(3) == 0, rng.Intn(4) == 0)
			p.UID = types.UID(p.Name)
			if err := snap.AssumePod(NewPodInfo(p)); err != nil {
				t.Fatal(err)
			}
			stack = append(stack, p)
		}
		if rng.Intn(4) == 0 {
			continue
		}
		synced.SyncSnapshot(snap, func(*[]string) {}, podsOf)
		var fresh NodeSlots[[]string]
		fresh.Sync(snap.List(), func(*[]string) {}, podsOf)
		if diff := cmp.Diff(fresh.vals, synced.vals, cmpopts.EquateEmpty()); diff != "" {
			t.Fatalf("step %d: slots synced from the change log differ from fresh ones (-fresh +synced):\n%s", step, diff)
		}
		viewSnapshot(t, snap)
	}
}
