package conformance

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	schedulingv1beta1 "k8s.io/api/scheduling/v1beta1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	configv1 "k8s.io/kube-scheduler/config/v1"

	"github.com/kubectl-sched/kubectl-sched/internal/engine"
	"github.com/kubectl-sched/kubectl-sched/internal/featuregates"
	"github.com/kubectl-sched/kubectl-sched/internal/snapshot"
	"github.com/kubectl-sched/kubectl-sched/schedcore"
	schedruntime "github.com/kubectl-sched/kubectl-sched/schedcore/runtime"
)

// gangKnownDiffers are the references the engine does not match yet, with
// why (#34: to be analysed and closed; the test skips them so that it
// guards the ones that match).
var gangKnownDiffers = map[string]string{
	// kube wrote PodGroupInitiallyScheduled=False after True: its cached
	// PodGroup had not yet seen its own True patch when the leftover
	// member's cycle failed (updatePodGroupCondition reads the cache); the
	// offline engine delivers its writes at once, so True stays.
	"gang-kube-mincount.json": "kube's condition regressed to False through its cache lagging behind its own status patch",
}

// sameGangMessage compares a member's or a condition's message with
// kube's, with the allowance of docs/design/workloads.md §5.6: any wording
// kube gave in another run (alsoSeen: which placement is "first" comes
// from a map in kube).
func sameGangMessage(ours, kube string, alsoSeen []string) bool {
	for _, k := range append([]string{kube}, alsoSeen...) {
		if k == ours {
			return true
		}
	}
	return false
}

// gangConfig is the default profile under the gates with every node
// scored, as hack/kubebench records (-percentage 100).
func gangConfig(t *testing.T, f schedcore.Features) *configv1.KubeSchedulerConfiguration {
	t.Helper()
	cfg, err := engine.LoadConfigWithFeatures("", f)
	if err != nil {
		t.Fatal(err)
	}
	all := int32(100)
	cfg.PercentageOfNodesToScore = &all
	return cfg
}

// TestGangReferencesEngine runs the engine on each workload-aware
// scheduling reference (kube-scheduler v1.37.2's own loop, recorded by
// hack/kubebench -gang) with the reference's gates and compares pod by
// pod (node, or the last FailedScheduling message) and group by group
// (the PodGroupInitiallyScheduled condition), with the allowances of
// sameGangMessage, and the evictions (victim, its node, the preemptor: a
// pod, or the PodGroup of a pod-group preemption).
func TestGangReferencesEngine(t *testing.T) {
	refs, err := filepath.Glob("../../testdata/kubebench/gang-*.json")
	if err != nil {
		t.Fatal(err)
	}
	matched, compared := 0, 0
	for _, path := range refs {
		name := filepath.Base(path)
		t.Run(name, func(t *testing.T) {
			if why, ok := gangKnownDiffers[name]; ok {
				t.Skip("differs from kube: " + why)
			}
			compared++
			defer func() {
				if !t.Failed() {
					matched++
				}
			}()
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			var ref gangRef
			if err := json.Unmarshal(data, &ref); err != nil {
				t.Fatal(err)
			}
			cl, err := snapshot.LoadPaths([]string{filepath.Join(filepath.Dir(path), ref.Snapshot)}, nil)
			if err != nil {
				t.Fatal(err)
			}
			gates := featuregates.New()
			if err := gates.SetFromMap(ref.FeatureGates); err != nil {
				t.Fatal(err)
			}
			placed := map[string]string{}
			failed := map[string]string{}
			evicted := map[string]string{}
			obs := engine.Observer{
				Placed: func(pod *v1.Pod, node string, _ int, _ schedruntime.ScheduleResult) {
					placed[pod.Namespace+"/"+pod.Name] = node
					delete(failed, pod.Namespace+"/"+pod.Name)
				},
				Failed: func(pod *v1.Pod, f engine.Failure) { failed[pod.Namespace+"/"+pod.Name] = f.Status.Message() },
				Evicted: func(victim *v1.Pod, _ string, preemptor *v1.Pod) {
					evicted[victim.Namespace+"/"+victim.Name] = victim.Spec.NodeName + " " + preemptor.Namespace + "/" + preemptor.Name
				},
				GroupEvicted: func(victim *v1.Pod, pg *schedulingv1beta1.PodGroup) {
					evicted[victim.Namespace+"/"+victim.Name] = victim.Spec.NodeName + " " + pg.Namespace + "/" + pg.Name
				},
			}
			ctx := context.Background()
			c, pending, err := engine.NewOffline(ctx, cl, engine.Options{Features: gates.Features(), Config: gangConfig(t, gates.Features())}, obs)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			c.Submit(pending...)
			if err := c.Run(ctx); err != nil {
				t.Fatal(err)
			}

			want := map[string]string{}
			for _, p := range ref.Placements {
				want[p.Pod] = p.Node
			}
			for pod, node := range want {
				if placed[pod] != node {
					t.Errorf("%s: kube bound it to %s, the engine to %q (failed: %q)", pod, node, placed[pod], failed[pod])
				}
			}
			for pod, node := range placed {
				if _, ok := want[pod]; !ok {
					t.Errorf("%s: the engine bound it to %s, kube left it pending", pod, node)
				}
			}
			for _, u := range ref.Unschedulable {
				if _, ok := placed[u.Pod]; ok {
					continue // reported above
				}
				if !sameGangMessage(failed[u.Pod], u.Message, u.AlsoSeen) {
					t.Errorf("%s: message\n kube:   %q\n engine: %q", u.Pod, u.Message, failed[u.Pod])
				}
			}
			wantEvicted := map[string]string{}
			for _, e := range ref.Evictions {
				wantEvicted[e.Pod] = e.Node + " " + e.Preemptor
			}
			if diff := cmp.Diff(wantEvicted, evicted); diff != "" {
				t.Errorf("evictions, victim: node preemptor (-kube +engine):\n%s", diff)
			}
			groups := map[string]int{}
			for i, g := range ref.Groups {
				groups[g.PodGroup] = i
			}
			for _, pg := range c.PodGroups() {
				g := ref.Groups[groups[pg.Namespace+"/"+pg.Name]]
				var kube struct{ Status, Reason, Message string }
				var alsoSeen []string
				for _, cnd := range g.Conditions {
					if cnd.Type == "PodGroupInitiallyScheduled" {
						kube.Status, kube.Reason, kube.Message = cnd.Status, cnd.Reason, cnd.Message
						alsoSeen = cnd.AlsoSeen
					}
				}
				var ours struct{ Status, Reason, Message string }
				if cnd := apimeta.FindStatusCondition(pg.Status.Conditions, "PodGroupInitiallyScheduled"); cnd != nil {
					ours.Status, ours.Reason, ours.Message = string(cnd.Status), cnd.Reason, cnd.Message
				}
				if kube.Status != ours.Status || kube.Reason != ours.Reason || !sameGangMessage(ours.Message, kube.Message, alsoSeen) {
					t.Errorf("%s: condition\n kube:   %+v\n engine: %+v", g.PodGroup, kube, ours)
				}
			}
		})
	}
	t.Logf("%d of %d references compared match kube (%d known to differ)", matched, compared, len(gangKnownDiffers))
}
