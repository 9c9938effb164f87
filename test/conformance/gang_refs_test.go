package conformance

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	schedulingv1beta1 "k8s.io/api/scheduling/v1beta1"

	"github.com/kubectl-sched/kubectl-sched/internal/snapshot"
)

// gangRef is what hack/kubebench -gang writes: kube-scheduler v1.37.2's
// own loop with workload-aware scheduling on, run to quiescence
// (testdata/kubebench/README.md).
type gangRef struct {
	Snapshot     string          `json:"snapshot"`
	FeatureGates map[string]bool `json:"featureGates"`
	Groups       []struct {
		PodGroup       string `json:"podGroup"`
		Policy         string `json:"policy"`
		MinCount       int32  `json:"minCount"`
		Priority       int32  `json:"priority"`
		DisruptionMode string `json:"disruptionMode"`
		TopologyKey    string `json:"topologyKey"`
		Members        []string
		Bound          []struct{ Pod, Node string }
		Evicted        []string
		Domains        []string
		Conditions     []struct {
			Type, Status, Reason, Message string
			AlsoSeen                      []string
		}
	} `json:"groups"`
	Placements    []struct{ Pod, Node string } `json:"placements"`
	Evictions     []struct{ Pod, Node, Preemptor string }
	Unschedulable []struct {
		Pod, Message, Event string
		AlsoSeen            []string
	} `json:"unschedulable"`
}

// TestGangReferencesAreConsistent checks each workload-aware scheduling
// reference against its snapshot and itself, so that a reference that
// does not say what kube does cannot stand in for it: the snapshot loads
// (the Workload API objects typed and valid); the groups are the
// snapshot's PodGroups with their policy, minCount, priority, disruption
// mode and topology key, and their members its pods; every pending gang
// binds none of its members or at least minCount (all or nothing); a
// group with a topology constraint binds into one domain; bindings name
// the snapshot's nodes and pending pods, and agree between the groups and
// the placements; an evicted pod was running and is not bound at the
// end; a pending group that bound nothing has no
// PodGroupInitiallyScheduled=True condition; every pending pod is placed or left pending, and a
// pod left pending with no message is one kube never tried (held at
// PreEnqueue: its group short of minCount, or missing).
func TestGangReferencesAreConsistent(t *testing.T) {
	refs, err := filepath.Glob("../../testdata/kubebench/gang-*.json")
	if err != nil {
		t.Fatal(err)
	}
	if len(refs) < 10 {
		t.Fatalf("%d gang references, want the generated seeds and the transcribed kube cases (hack/kubebench/gang-refs.sh)", len(refs))
	}
	for _, path := range refs {
		t.Run(filepath.Base(path), func(t *testing.T) {
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			var ref gangRef
			if err := json.Unmarshal(data, &ref); err != nil {
				t.Fatal(err)
			}
			if !ref.FeatureGates["GenericWorkload"] {
				t.Errorf("featureGates %v: GenericWorkload is not on", ref.FeatureGates)
			}
			cl, err := snapshot.LoadPaths([]string{filepath.Join(filepath.Dir(path), ref.Snapshot)}, nil)
			if err != nil {
				t.Fatal(err)
			}
			for _, msg := range checkGangRef(&ref, cl) {
				t.Error(msg)
			}
		})
	}
}

func checkGangRef(ref *gangRef, cl *snapshot.Cluster) []string {
	var errs []string
	bad := func(format string, args ...any) { errs = append(errs, fmt.Sprintf(format, args...)) }
	nodes := map[string]*v1.Node{}
	for _, n := range cl.Nodes {
		nodes[n.Name] = n
	}
	pods := map[string]*v1.Pod{}
	members := map[string][]string{}
	for _, p := range cl.Pods {
		k := p.Namespace + "/" + p.Name
		pods[k] = p
		if g := p.Spec.SchedulingGroup; g != nil && g.PodGroupName != nil {
			gk := p.Namespace + "/" + *g.PodGroupName
			members[gk] = append(members[gk], k)
		}
	}
	placed := map[string]string{}
	for _, pl := range ref.Placements {
		if p := pods[pl.Pod]; p == nil || p.Spec.NodeName != "" {
			bad("placement of %s: not a pending pod of the snapshot", pl.Pod)
		}
		if nodes[pl.Node] == nil {
			bad("placement of %s on %s: no such node", pl.Pod, pl.Node)
		}
		placed[pl.Pod] = pl.Node
	}
	evicted := map[string]bool{}
	for _, e := range ref.Evictions {
		evicted[e.Pod] = true
		if p := pods[e.Pod]; p == nil || p.Spec.NodeName != e.Node {
			bad("eviction of %s from %s: not a pod running there in the snapshot", e.Pod, e.Node)
		}
		if _, ok := placed[e.Pod]; ok {
			bad("evicted %s is among the placements", e.Pod)
		}
	}
	if len(ref.Groups) != len(cl.Workloads.PodGroups) {
		bad("%d groups, the snapshot has %d PodGroups", len(ref.Groups), len(cl.Workloads.PodGroups))
	}
	for i, g := range ref.Groups {
		if i >= len(cl.Workloads.PodGroups) {
			break
		}
		pg := findPodGroup(cl, g.PodGroup)
		if pg == nil {
			bad("%s: no such PodGroup in the snapshot", g.PodGroup)
			continue
		}
		minCount, policy := int32(0), "basic"
		if gang := pg.Spec.SchedulingPolicy.Gang; gang != nil {
			minCount, policy = gang.MinCount, "gang"
		}
		mode, key := "Single", ""
		if m := pg.Spec.DisruptionMode; m != nil && m.All != nil {
			mode = "All"
		}
		if c := pg.Spec.SchedulingConstraints; c != nil && len(c.Topology) > 0 {
			key = c.Topology[0].Key
		}
		if g.Policy != policy || g.MinCount != minCount || g.DisruptionMode != mode || g.TopologyKey != key {
			bad("%s: policy %s minCount %d disruption %s key %q, the snapshot says %s %d %s %q", g.PodGroup, g.Policy, g.MinCount, g.DisruptionMode, g.TopologyKey, policy, minCount, mode, key)
		}
		if strings.Join(g.Members, ",") != strings.Join(members[g.PodGroup], ",") && !sameSet(g.Members, members[g.PodGroup]) {
			bad("%s: members %v, the snapshot's %v", g.PodGroup, g.Members, members[g.PodGroup])
		}
		wasRunning, newlyBound := 0, 0
		for _, m := range g.Members {
			if pods[m] != nil && pods[m].Spec.NodeName != "" {
				wasRunning++
			}
		}
		for _, b := range g.Bound {
			p := pods[b.Pod]
			switch {
			case p == nil:
				bad("%s: bound %s is not in the snapshot", g.PodGroup, b.Pod)
			case p.Spec.NodeName != "":
				if p.Spec.NodeName != b.Node {
					bad("%s: running %s moved from %s to %s", g.PodGroup, b.Pod, p.Spec.NodeName, b.Node)
				}
			default:
				newlyBound++
				if placed[b.Pod] != b.Node {
					bad("%s: %s bound to %s, placements say %q", g.PodGroup, b.Pod, b.Node, placed[b.Pod])
				}
			}
			if evicted[b.Pod] {
				bad("%s: %s is bound and evicted", g.PodGroup, b.Pod)
			}
		}
		if policy == "gang" && wasRunning == 0 && newlyBound > 0 && int32(newlyBound) < minCount {
			bad("%s: a pending gang bound %d members, below minCount %d", g.PodGroup, newlyBound, minCount)
		}
		if key != "" && len(g.Domains) > 1 {
			bad("%s: bound over %d %s domains %v", g.PodGroup, len(g.Domains), key, g.Domains)
		}
		if wasRunning == 0 {
			scheduled := ""
			for _, c := range g.Conditions {
				if c.Type == "PodGroupInitiallyScheduled" {
					scheduled = c.Status
				}
			}
			// (Bound members do not imply True: a member left over and
			// tried alone later sets it False again, as in
			// gang-kube-mincount.)
			if newlyBound == 0 && scheduled == "True" {
				bad("%s: nothing bound, PodGroupInitiallyScheduled True", g.PodGroup)
			}
		}
	}
	for _, u := range ref.Unschedulable {
		p := pods[u.Pod]
		if p == nil || p.Spec.NodeName != "" {
			bad("pending %s: not a pending pod of the snapshot", u.Pod)
		}
		if _, ok := placed[u.Pod]; ok {
			bad("pending %s is among the placements", u.Pod)
		}
		if u.Message == "" && p != nil && !heldAtPreEnqueue(p, cl, members) {
			bad("pending %s has no message and was not held at PreEnqueue", u.Pod)
		}
	}
	for k, p := range pods {
		_, isPlaced := placed[k]
		pending := false
		for _, u := range ref.Unschedulable {
			pending = pending || u.Pod == k
		}
		if p.Spec.NodeName == "" && !isPlaced && !pending {
			bad("pending %s is neither placed nor left pending", k)
		}
	}
	return errs
}

func findPodGroup(cl *snapshot.Cluster, key string) *schedulingv1beta1.PodGroup {
	for _, pg := range cl.Workloads.PodGroups {
		if pg.Namespace+"/"+pg.Name == key {
			return pg
		}
	}
	return nil
}

func sameSet(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	m := map[string]int{}
	for _, s := range a {
		m[s]++
	}
	for _, s := range b {
		m[s]--
	}
	for _, n := range m {
		if n != 0 {
			return false
		}
	}
	return true
}

// heldAtPreEnqueue reports whether GangScheduling's PreEnqueue keeps p
// out of the queue: its PodGroup is missing, or a gang with fewer pods
// than minCount.
func heldAtPreEnqueue(p *v1.Pod, cl *snapshot.Cluster, members map[string][]string) bool {
	g := p.Spec.SchedulingGroup
	if g == nil || g.PodGroupName == nil {
		return false
	}
	key := p.Namespace + "/" + *g.PodGroupName
	pg := findPodGroup(cl, key)
	if pg == nil {
		return true
	}
	gang := pg.Spec.SchedulingPolicy.Gang
	return gang != nil && int32(len(members[key])) < gang.MinCount
}

// TestGangReferenceCheckCatchesBreaches: checkGangRef fails a reference
// that says what kube does not do.
func TestGangReferenceCheckCatchesBreaches(t *testing.T) {
	load := func(t *testing.T, name string) (*gangRef, *snapshot.Cluster) {
		data, err := os.ReadFile("../../testdata/kubebench/" + name + ".json")
		if err != nil {
			t.Fatal(err)
		}
		var ref gangRef
		if err := json.Unmarshal(data, &ref); err != nil {
			t.Fatal(err)
		}
		cl, err := snapshot.LoadPaths([]string{"../../testdata/kubebench/" + ref.Snapshot}, nil)
		if err != nil {
			t.Fatal(err)
		}
		return &ref, cl
	}
	tests := []struct {
		name, ref, want string
		breach          func(r *gangRef)
	}{
		{"a pending gang binding fewer than minCount", "gang-kube-blocked", "below minCount 3", func(r *gangRef) {
			r.Groups[0].Bound = append(r.Groups[0].Bound, struct{ Pod, Node string }{"default/p1", "node"})
			r.Placements = append(r.Placements, struct{ Pod, Node string }{"default/p1", "node"})
			r.Unschedulable = r.Unschedulable[1:]
		}},
		{"a constrained gang over two domains", "gang-kube-topology", "bound over 2", func(r *gangRef) {
			r.Groups[0].Domains = []string{"zone1", "zone2"}
		}},
		{"a group's bindings disagreeing with the placements", "gang-kube-preempt", "placements say", func(r *gangRef) {
			r.Placements[0].Node = "elsewhere"
		}},
		{"an evicted pod still bound", "gang-kube-preempt-all", "is bound and evicted", func(r *gangRef) {
			r.Groups[1].Bound = append(r.Groups[1].Bound, struct{ Pod, Node string }{r.Groups[0].Members[0], "node"})
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ref, cl := load(t, tt.ref)
			if errs := checkGangRef(ref, cl); len(errs) > 0 {
				t.Fatalf("the reference as recorded fails: %v", errs)
			}
			tt.breach(ref)
			errs := checkGangRef(ref, cl)
			if !strings.Contains(strings.Join(errs, "\n"), tt.want) {
				t.Errorf("errors %q, want one with %q", errs, tt.want)
			}
		})
	}
}
