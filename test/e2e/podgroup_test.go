package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	v1 "k8s.io/api/core/v1"
	schedulingv1beta1 "k8s.io/api/scheduling/v1beta1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"

	"github.com/kubectl-sched/kubectl-sched/internal/report"
	"github.com/kubectl-sched/kubectl-sched/internal/top"
	"github.com/kubectl-sched/kubectl-sched/schedcore"
	"github.com/kubectl-sched/kubectl-sched/test/e2e/cluster"
)

// startWorkloadCluster starts a cluster of the test's own serving kube's
// Workload API (cluster.WorkloadAPIServerArgs, as `make cluster-up
// CLUSTER_WORKLOADS=1`): the package's shared cluster runs with the
// default gates, where the API server drops spec.schedulingGroup and
// PodGroups are not served. A kube-scheduler the test starts gets
// schedulerGates (the gates the test gives our run).
func startWorkloadCluster(t *testing.T, schedulerGates string) *cluster.Cluster {
	t.Helper()
	if cluster.Disabled() {
		t.Skipf("%s=0: end-to-end tests are off", cluster.EnvE2E)
	}
	return cluster.StartForTest(t, cluster.Options{ExtraAPIServerArgs: cluster.WorkloadAPIServerArgs, ExtraSchedulerArgs: []string{"--feature-gates=" + schedulerGates}})
}

// createNativePodGroup creates a v1beta1 PodGroup with the gang policy
// (minCount) and, when topologyKey is set, one topology constraint.
func createNativePodGroup(ctx context.Context, t *testing.T, client kubernetes.Interface, ns, name string, minCount int32, topologyKey string) {
	t.Helper()
	pg := &schedulingv1beta1.PodGroup{ObjectMeta: metav1.ObjectMeta{Name: name}}
	pg.Spec.SchedulingPolicy.Gang = &schedulingv1beta1.GangSchedulingPolicy{MinCount: minCount}
	if topologyKey != "" {
		pg.Spec.SchedulingConstraints = &schedulingv1beta1.PodGroupSchedulingConstraints{
			Topology: []schedulingv1beta1.TopologyConstraint{{Key: topologyKey}}}
	}
	created, err := client.SchedulingV1beta1().PodGroups(ns).Create(ctx, pg, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("creating PodGroup %s: %v", name, err)
	}
	if topologyKey != "" && created.Spec.SchedulingConstraints == nil {
		t.Fatalf("PodGroup %s: the API server dropped schedulingConstraints (TopologyAwareWorkloadScheduling off?)", name)
	}
}

// nativeMembers are n pods of the profile naming PodGroup pg
// (spec.schedulingGroup.podGroupName), on the group's nodes, controlled
// by a Job named pg (which no controller runs: a drain counts on it to
// recreate them).
func nativeMembers(pg string, n int, cpu, profile, group string) []*v1.Pod {
	var out []*v1.Pod
	for i := range n {
		p := ourPod(fmt.Sprintf("%s-%d", pg, i), cpu, profile, group)
		name := pg
		p.Spec.SchedulingGroup = &v1.PodSchedulingGroup{PodGroupName: &name}
		p.OwnerReferences = []metav1.OwnerReference{{APIVersion: "batch/v1", Kind: "Job", Name: pg, UID: types.UID("job-" + pg), Controller: ptr.To(true)}}
		out = append(out, p)
	}
	return out
}

// podGroupCondition polls the PodGroup until its PodGroupInitiallyScheduled
// condition has the status, and returns it.
func podGroupCondition(ctx context.Context, t *testing.T, client kubernetes.Interface, ns, name string, status metav1.ConditionStatus) metav1.Condition {
	t.Helper()
	var last *schedulingv1beta1.PodGroup
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 60*time.Second, true, func(ctx context.Context) (bool, error) {
		pg, err := client.SchedulingV1beta1().PodGroups(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		last = pg
		c := apimeta.FindStatusCondition(pg.Status.Conditions, schedulingv1beta1.PodGroupInitiallyScheduled)
		return c != nil && c.Status == status, nil
	})
	if err != nil {
		got := "never read"
		if last != nil {
			got = fmt.Sprintf("%+v", last.Status.Conditions)
		}
		t.Fatalf("PodGroup %s/%s: no %s condition %s: %v; last seen: %s", ns, name, schedulingv1beta1.PodGroupInitiallyScheduled, status, err, got)
	}
	return *apimeta.FindStatusCondition(last.Status.Conditions, schedulingv1beta1.PodGroupInitiallyScheduled)
}

// TestRunPodGroupAllOrNothing: `run` with GenericWorkload on, against an
// API server serving v1beta1 PodGroups. A gang of 8 (minCount 8) whose
// nodes hold 6 goes through kube's pod-group cycle: none is bound; the six
// placed before the group failed get "pod group is unschedulable, " and
// the group's status, the member that did not fit its FitError, the one
// never tried the group's status, each as a FailedScheduling event and
// the PodScheduled condition; the PodGroup's PodGroupInitiallyScheduled
// condition is False, reason Unschedulable, with the group's status. Once
// a node is added, all 8 bind and the condition turns True (Scheduled).
//
// The real kube-scheduler v1.37.2 (GenericWorkload on) gets the same gang
// on twin nodes of its own, in another namespace: its members' messages
// and condition must be ours word for word, PodGroupPostFilter's tail
// (", pod group preemption: No preemption victims found for incoming
// preemptor", docs/design/workloads.md §2.6) included; after the node,
// it binds all 8 too.
func TestRunPodGroupAllOrNothing(t *testing.T) {
	c := startWorkloadCluster(t, "GenericWorkload=true")
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	const profile, group = "kubectl-sched-podgroup", "podgroup"
	// cpu 4 less the 100m reserve: three 1-cpu pods a node, six in all.
	groupNodes(ctx, t, c.Client, group,
		cluster.NodeSpec{Name: "podgroup-a", CPU: "4", Memory: "64Gi"},
		cluster.NodeSpec{Name: "podgroup-b", CPU: "4", Memory: "64Gi"})
	ns := createNamespace(ctx, t, c.Client, "podgroup")
	features := schedcore.DefaultFeatures
	features.GenericWorkload = true
	startRun(t, c, runOptions{profile: profile, features: &features})
	// kube-scheduler's twin.
	const kubeGroup = "podgroup-kube"
	groupNodes(ctx, t, c.Client, kubeGroup,
		cluster.NodeSpec{Name: "podgroup-kube-a", CPU: "4", Memory: "64Gi"},
		cluster.NodeSpec{Name: "podgroup-kube-b", CPU: "4", Memory: "64Gi"})
	kubeNS := createNamespace(ctx, t, c.Client, "podgroup-kube")
	if _, err := c.StartScheduler(ctx, ""); err != nil {
		t.Fatal(err)
	}

	createNativePodGroup(ctx, t, c.Client, ns, "train", 8, "")
	pods := nativeMembers("train", 8, "1", profile, group)
	createPods(ctx, t, c.Client, ns, pods...)
	createNativePodGroup(ctx, t, c.Client, kubeNS, "train", 8, "")
	kubePods := nativeMembers("train", 8, "1", v1.DefaultSchedulerName, kubeGroup)
	createPods(ctx, t, c.Client, kubeNS, kubePods...)

	t.Run("a gang of 8 where 6 fit binds none", func(t *testing.T) {
		cond := podGroupCondition(ctx, t, c.Client, ns, "train", metav1.ConditionFalse)
		const g0 = "minCount (8) cannot be satisfied: 6 scheduled, 1 remaining"
		if cond.Reason != "Unschedulable" || !strings.HasPrefix(cond.Message, g0) {
			t.Errorf("PodGroup condition: reason %q message %q; want Unschedulable, %q", cond.Reason, cond.Message, g0)
		}
		fit := fitErrorMessage(ctx, t, c.Client, group, "Insufficient cpu")
		var kinds []string
		for _, p := range pods {
			got := waitForPod(ctx, t, c.Client, ns, p.Name, unschedulable)
			if got.Spec.NodeName != "" {
				t.Errorf("pod %s bound to %s; a gang that cannot fit whole binds none", p.Name, got.Spec.NodeName)
			}
			msg := podCondition(got, v1.PodScheduled).Message
			ev := waitForEvent(ctx, t, c.Client, ns, p.Name, "FailedScheduling")
			if ev.Note != msg || ev.Type != v1.EventTypeWarning {
				t.Errorf("pod %s: event %s %q, condition %q; want a Warning with the condition's message", p.Name, ev.Type, ev.Note, msg)
			}
			switch {
			case msg == fit:
				kinds = append(kinds, "did not fit")
			case strings.HasPrefix(msg, "pod group is unschedulable, "+g0):
				kinds = append(kinds, "placed, group failed")
			case strings.HasPrefix(msg, g0):
				kinds = append(kinds, "never tried")
			default:
				t.Errorf("pod %s: message %q; want %q, the group's status %q, or it prefixed by \"pod group is unschedulable, \"", p.Name, msg, fit, g0)
			}
		}
		sort.Strings(kinds)
		want := []string{"did not fit", "never tried"}
		for range 6 {
			want = append(want, "placed, group failed")
		}
		sort.Strings(want)
		if strings.Join(kinds, ",") != strings.Join(want, ",") {
			t.Errorf("members' messages: %v; want %v", kinds, want)
		}

		// What `top` shows: the pending group with its members and the
		// condition, read from the API server.
		pending, err := top.ListPending(ctx, c.Client, ns, []string{profile}, time.Now())
		if err != nil {
			t.Fatal(err)
		}
		groups, err := top.ListPendingGroups(ctx, c.Client, ns, pending)
		if err != nil {
			t.Fatal(err)
		}
		if len(groups) != 1 || groups[0].Name != "train" || groups[0].Pending != 8 || groups[0].MinCount != 8 || groups[0].Message != podGroupCondition(ctx, t, c.Client, ns, "train", metav1.ConditionFalse).Message {
			t.Errorf("top's pending groups %+v; want train, 8 pending, min 8, the condition's message", groups)
		}

		// kube-scheduler's words for the same gang.
		ours, kube := memberMessages(ctx, t, c.Client, ns, pods), memberMessages(ctx, t, c.Client, kubeNS, kubePods)
		ours = append(ours, podGroupCondition(ctx, t, c.Client, ns, "train", metav1.ConditionFalse).Message)
		kube = append(kube, podGroupCondition(ctx, t, c.Client, kubeNS, "train", metav1.ConditionFalse).Message)
		t.Logf("the condition: ours %q, kube-scheduler's %q", ours[len(ours)-1], kube[len(kube)-1])
		for i := range ours {
			if kube[i] != ours[i] {
				t.Errorf("message %d: ours %q, kube-scheduler's %q", i, ours[i], kube[i])
			}
		}
	})

	// The nodes added below stay until the test ends (the drain needs them).
	t.Cleanup(func() {
		for _, n := range []string{"podgroup-c", "podgroup-kube-c"} {
			_ = c.Client.CoreV1().Nodes().Delete(context.Background(), n, metav1.DeleteOptions{})
		}
	})
	t.Run("after a node is added all 8 bind", func(t *testing.T) {
		added := cluster.Nodes([]cluster.NodeSpec{
			{Name: "podgroup-c", CPU: "4", Memory: "64Gi", Labels: map[string]string{groupLabel: group}},
			{Name: "podgroup-kube-c", CPU: "4", Memory: "64Gi", Labels: map[string]string{groupLabel: kubeGroup}},
		})
		if err := cluster.CreateNodes(ctx, c.Client, added); err != nil {
			t.Fatal(err)
		}
		for _, p := range pods {
			waitForPod(ctx, t, c.Client, ns, p.Name, bound)
		}
		cond := podGroupCondition(ctx, t, c.Client, ns, "train", metav1.ConditionTrue)
		if cond.Reason != "Scheduled" {
			t.Errorf("PodGroup condition reason %q; want Scheduled", cond.Reason)
		}
		for _, p := range kubePods {
			waitForPod(ctx, t, c.Client, kubeNS, p.Name, bound)
		}
		if kc := podGroupCondition(ctx, t, c.Client, kubeNS, "train", metav1.ConditionTrue); kc.Reason != cond.Reason || kc.Message != cond.Message {
			t.Errorf("kube-scheduler's condition %+v, ours %+v", kc, cond)
		}
	})

	// The three nodes hold 9 and the gang has 8: the members on a
	// drained node (at least two) find fewer places than they are, and
	// kube binds none of them back.
	t.Run("a drain of a node says it breaks the gang", func(t *testing.T) {
		onA := 0
		for _, p := range listPods(ctx, t, c.Client, ns) {
			if p.Spec.NodeName == "podgroup-a" {
				onA++
			}
		}
		cfg := filepath.Join(t.TempDir(), "config.yaml")
		if err := os.WriteFile(cfg, []byte("apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\nprofiles:\n- schedulerName: "+profile+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		code, out, stderr := sched(t, c, "drain", "podgroup-a", "--config", cfg, "--feature-gates", "GenericWorkload=true", "-o", "json")
		if code != 3 {
			t.Fatalf("drain: exit %d, want 3 (a gang is broken): %s", code, stderr)
		}
		var d report.Drain
		if err := json.Unmarshal([]byte(out), &d); err != nil {
			t.Fatal(err)
		}
		t.Logf("drain's gangs: %+v", d.Gangs)
		want := []report.DrainGang{{PodGroup: ns + "/train", Policy: "gang", MinCount: 8, Members: 8, Evicted: onA, Pending: onA, Broken: true}}
		if len(d.Gangs) == 1 {
			want[0].Message = d.Gangs[0].Message
		}
		if diff := cmp.Diff(want, d.Gangs); diff != "" || onA < 2 || want[0].Message == "" || d.Summary.BrokenGangs != 1 {
			t.Errorf("drain's gangs (%d members on the node, summary %+v) (-want +got):\n%s", onA, d.Summary, diff)
		}
	})
}

// memberMessages are the pods' PodScheduled messages once each is
// unschedulable, sorted.
func memberMessages(ctx context.Context, t *testing.T, client kubernetes.Interface, ns string, pods []*v1.Pod) []string {
	t.Helper()
	var out []string
	for _, p := range pods {
		got := waitForPod(ctx, t, client, ns, p.Name, unschedulable)
		out = append(out, podCondition(got, v1.PodScheduled).Message)
	}
	sort.Strings(out)
	return out
}

// TestRunPodGroupTopology: `run` with GenericWorkload and
// TopologyAwareWorkloadScheduling on. Two racks of two nodes, each rack
// room for six 1-cpu pods: a gang of 6 whose PodGroup constrains it to
// one rack (schedulingConstraints.topology, key = the rack label) binds
// every member in one rack, where the default spreading scores alone
// would have used all four nodes. A second such gang then fills the other
// rack. The real kube-scheduler v1.37.2, with the same gates, does the
// same on twin racks of its own (which rack takes the first gang is a
// tie it draws at random).
func TestRunPodGroupTopology(t *testing.T) {
	c := startWorkloadCluster(t, cluster.WorkloadGates)
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	const profile, rackKey = "kubectl-sched-podgroup-tas", "example.com/rack"
	features := schedcore.DefaultFeatures
	features.GenericWorkload = true
	features.TopologyAwareWorkloadScheduling = true
	startRun(t, c, runOptions{profile: profile, features: &features})
	if _, err := c.StartScheduler(ctx, ""); err != nil {
		t.Fatal(err)
	}
	for _, sched := range []struct{ who, schedulerName, group string }{
		{"kubectl-sched", profile, "podgroup-tas"},
		{"kube-scheduler", v1.DefaultSchedulerName, "podgroup-tas-kube"},
	} {
		var specs []cluster.NodeSpec
		for _, rack := range []string{"rack-1", "rack-2"} {
			for _, n := range []string{"a", "b"} {
				specs = append(specs, cluster.NodeSpec{Name: sched.group + "-" + rack + "-" + n, CPU: "4", Memory: "64Gi", Labels: map[string]string{rackKey: rack}})
			}
		}
		groupNodes(ctx, t, c.Client, sched.group, specs...)
		ns := createNamespace(ctx, t, c.Client, sched.group)
		racks := map[string]string{}
		for _, gang := range []string{"first", "second"} {
			createNativePodGroup(ctx, t, c.Client, ns, gang, 6, rackKey)
			pods := nativeMembers(gang, 6, "1", sched.schedulerName, sched.group)
			createPods(ctx, t, c.Client, ns, pods...)
			used := map[string]bool{}
			for _, p := range pods {
				got := waitForPod(ctx, t, c.Client, ns, p.Name, bound)
				n, err := c.Client.CoreV1().Nodes().Get(ctx, got.Spec.NodeName, metav1.GetOptions{})
				if err != nil {
					t.Fatal(err)
				}
				used[n.Labels[rackKey]] = true
			}
			if len(used) != 1 {
				t.Errorf("%s: gang %s spread over racks %v; want one", sched.who, gang, used)
			}
			for r := range used {
				racks[gang] = r
			}
			if cond := podGroupCondition(ctx, t, c.Client, ns, gang, metav1.ConditionTrue); cond.Reason != "Scheduled" {
				t.Errorf("%s: PodGroup %s condition reason %q; want Scheduled", sched.who, gang, cond.Reason)
			}
		}
		if racks["first"] == racks["second"] {
			t.Errorf("%s: both gangs in %s; the second fits only in the other rack", sched.who, racks["first"])
		}
	}
}
