package conformance

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"slices"
	"testing"

	v1 "k8s.io/api/core/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"

	"github.com/kubectl-sched/kubectl-sched/internal/engine"
	"github.com/kubectl-sched/kubectl-sched/internal/featuregates"
	"github.com/kubectl-sched/kubectl-sched/internal/gen/gang"
	"github.com/kubectl-sched/kubectl-sched/internal/gen/v1list"
	"github.com/kubectl-sched/kubectl-sched/internal/snapshot"
	schedruntime "github.com/kubectl-sched/kubectl-sched/schedcore/runtime"
)

// gangBenchRef is kube-scheduler v1.37.2's own loop (hack/kubebench -gang,
// GenericWorkload on, every node scored, ties to the lowest node name) on
// make bench's Gang/5000Nodes workload: internal/gen/gang's
// GenerateBench, 5000 nodes, seed 1 (hack/gensnap -gang bench -nodes
// 5000 -seed 1). Named apart from the gang-*.json references, whose
// snapshots are stored beside them: this one is generated.
const gangBenchRef = "../../testdata/kubebench/gangbench-5000n-seed1.json"

// TestGangBenchEngine runs the engine on make bench's gang workload and
// compares it with kube's reference pod by pod (which pods bind, and
// where; the message of each pod left pending, or, when kube gave it to
// another member of the group, the group's messages as a multiset) and
// group by group (the PodGroupInitiallyScheduled condition), with the
// allowances of sameGangMessage; the reference itself passes
// checkGangRef. It takes
// seconds, the 5000-node cluster's generation and loading most of them:
// KUBECTL_SCHED_LONG=1 (make test-long).
func TestGangBenchEngine(t *testing.T) {
	if os.Getenv("KUBECTL_SCHED_LONG") != "1" {
		t.Skip("set KUBECTL_SCHED_LONG=1 to run")
	}
	data, err := os.ReadFile(gangBenchRef)
	if err != nil {
		t.Fatal(err)
	}
	var ref gangRef
	if err := json.Unmarshal(data, &ref); err != nil {
		t.Fatal(err)
	}
	c, err := gang.GenerateBench(gang.BenchParams{Nodes: 5000, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	dump, err := v1list.Marshal("json", c.Objects()...)
	if err != nil {
		t.Fatal(err)
	}
	cl, err := snapshot.LoadPaths([]string{"-"}, bytes.NewReader(dump))
	if err != nil {
		t.Fatal(err)
	}
	for _, msg := range checkGangRef(&ref, cl) {
		t.Errorf("reference: %s", msg)
	}
	if len(ref.Placements) < 2000 || len(ref.Evictions) != 0 {
		t.Fatalf("reference: %d placements, %d evictions; want thousands and none (one priority)", len(ref.Placements), len(ref.Evictions))
	}

	gates := featuregates.New()
	if err := gates.SetFromMap(ref.FeatureGates); err != nil {
		t.Fatal(err)
	}
	placed := map[string]string{}
	failed := map[string]string{}
	obs := engine.Observer{
		Placed: func(pod *v1.Pod, node string, _ int, _ schedruntime.ScheduleResult) {
			placed[pod.Namespace+"/"+pod.Name] = node
			delete(failed, pod.Namespace+"/"+pod.Name)
		},
		Failed: func(pod *v1.Pod, f engine.Failure) { failed[pod.Namespace+"/"+pod.Name] = f.Status.Message() },
	}
	ctx := context.Background()
	eng, pending, err := engine.NewOffline(ctx, cl, engine.Options{Features: gates.Features(), Config: gangConfig(t, gates.Features())}, obs)
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	eng.Submit(pending...)
	if err := eng.Run(ctx); err != nil {
		t.Fatal(err)
	}

	// A broken engine differs on thousands of pods: the first few tell.
	diffs := 0
	report := func(format string, args ...any) {
		if diffs++; diffs <= 20 {
			t.Errorf(format, args...)
		}
	}
	want := map[string]string{}
	for _, p := range ref.Placements {
		want[p.Pod] = p.Node
		if placed[p.Pod] != p.Node {
			report("%s: kube bound it to %s, the engine to %q (failed: %q)", p.Pod, p.Node, placed[p.Pod], failed[p.Pod])
		}
	}
	for pod, node := range placed {
		if _, ok := want[pod]; !ok {
			report("%s: the engine bound it to %s, kube left it pending", pod, node)
		}
	}
	// Which member of a failed group gets which message depends on the
	// order kube tries the members in, which is random (the references of
	// several runs list the other wordings in alsoSeen; this one is of one
	// run): a pod whose message differs passes when its group's messages,
	// kube's and ours, are the same multiset.
	groupOf := map[string]string{}
	for _, g := range ref.Groups {
		for _, m := range g.Members {
			groupOf[m] = g.PodGroup
		}
	}
	kubeMsgs, ourMsgs := map[string][]string{}, map[string][]string{}
	var permuted []string
	for _, u := range ref.Unschedulable {
		if _, ok := placed[u.Pod]; ok {
			continue // reported above
		}
		g := groupOf[u.Pod]
		kubeMsgs[g] = append(kubeMsgs[g], u.Message)
		ourMsgs[g] = append(ourMsgs[g], failed[u.Pod])
		if !sameGangMessage(failed[u.Pod], u.Message, u.AlsoSeen) {
			permuted = append(permuted, u.Pod)
		}
	}
	for _, pod := range permuted {
		g := groupOf[pod]
		k, o := slices.Sorted(slices.Values(kubeMsgs[g])), slices.Sorted(slices.Values(ourMsgs[g]))
		if g == "" || !slices.Equal(k, o) {
			report("%s: message, and its group's messages differ\n kube:   %q\n engine: %q", pod, k, o)
		}
	}
	groups := map[string]int{}
	for i, g := range ref.Groups {
		groups[g.PodGroup] = i
	}
	for _, pg := range eng.PodGroups() {
		g := ref.Groups[groups[pg.Namespace+"/"+pg.Name]]
		var kube, ours struct{ Status, Reason, Message string }
		var alsoSeen []string
		for _, cnd := range g.Conditions {
			if cnd.Type == "PodGroupInitiallyScheduled" {
				kube.Status, kube.Reason, kube.Message = cnd.Status, cnd.Reason, cnd.Message
				alsoSeen = cnd.AlsoSeen
			}
		}
		if cnd := apimeta.FindStatusCondition(pg.Status.Conditions, "PodGroupInitiallyScheduled"); cnd != nil {
			ours.Status, ours.Reason, ours.Message = string(cnd.Status), cnd.Reason, cnd.Message
		}
		if kube.Status != ours.Status || kube.Reason != ours.Reason || !sameGangMessage(ours.Message, kube.Message, alsoSeen) {
			report("%s: condition\n kube:   %+v\n engine: %+v", g.PodGroup, kube, ours)
		}
	}
	if diffs > 20 {
		t.Errorf("... %d differences in all", diffs)
	}
	t.Logf("%d pods bound as kube bound them, %d left pending with kube's message (%d of them with another member's: the same messages in the group), %d groups' conditions compared; %d differences",
		len(ref.Placements), len(ref.Unschedulable), len(permuted), len(ref.Groups), diffs)
}
