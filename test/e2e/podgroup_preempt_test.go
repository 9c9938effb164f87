package e2e

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"testing"

	"time"

	"github.com/google/go-cmp/cmp"

	v1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	schedulingv1beta1 "k8s.io/api/scheduling/v1beta1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/kubectl-sched/kubectl-sched/schedcore"
	"github.com/kubectl-sched/kubectl-sched/test/e2e/cluster"
)

// createPriorityPodGroup creates a gang PodGroup of the PriorityClass and,
// when mode is set, that disruption mode. kube-apiserver's Priority
// admission resolves spec.priority from spec.priorityClassName (and
// forbids a different one), as it does a pod's: the group and its members
// get the same priority. It returns the PodGroup as created.
func createPriorityPodGroup(ctx context.Context, t *testing.T, client kubernetes.Interface, ns, name string, minCount int32, class string, value int32, mode *schedulingv1beta1.DisruptionMode) *schedulingv1beta1.PodGroup {
	t.Helper()
	pg := &schedulingv1beta1.PodGroup{ObjectMeta: metav1.ObjectMeta{Name: name}}
	pg.Spec.SchedulingPolicy.Gang = &schedulingv1beta1.GangSchedulingPolicy{MinCount: minCount}
	pg.Spec.PriorityClassName = class
	pg.Spec.DisruptionMode = mode
	created, err := client.SchedulingV1beta1().PodGroups(ns).Create(ctx, pg, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("creating PodGroup %s: %v", name, err)
	}
	if created.Spec.Priority == nil || *created.Spec.Priority != value {
		t.Fatalf("PodGroup %s: spec.priority %v after admission; want %d (PriorityClass %s)", name, created.Spec.Priority, value, class)
	}
	if mode != nil && created.Spec.DisruptionMode == nil {
		t.Fatalf("PodGroup %s: the API server dropped spec.disruptionMode", name)
	}
	return created
}

// forceDelete removes the pods at once, as the kubelet would once it
// stopped them (there is none here), and waits until they are gone.
func forceDelete(ctx context.Context, t *testing.T, client kubernetes.Interface, ns string, names []string) {
	t.Helper()
	for _, n := range names {
		if err := client.CoreV1().Pods(ns).Delete(ctx, n, metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)}); err != nil && !apierrors.IsNotFound(err) {
			t.Fatal(err)
		}
	}
	for _, n := range names {
		if err := wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
			_, err := client.CoreV1().Pods(ns).Get(ctx, n, metav1.GetOptions{})
			return apierrors.IsNotFound(err), nil
		}); err != nil {
			t.Fatalf("pod %s/%s not gone: %v", ns, n, err)
		}
	}
}

// terminating are the names of the namespace's pods being deleted, sorted.
func terminating(ctx context.Context, t *testing.T, client kubernetes.Interface, ns string) []string {
	t.Helper()
	var out []string
	for _, p := range listPods(ctx, t, client, ns) {
		if p.DeletionTimestamp != nil {
			out = append(out, p.Name)
		}
	}
	sort.Strings(out)
	return out
}

// TestRunPodGroupPreemption: `run` with GenericWorkload on preempts for a
// gang as kube-scheduler v1.37.2 does (workload-aware preemption,
// docs/design/workloads.md §5.9 step 9). Two nodes are full with a
// low-priority gang of six 1-cpu pods (PriorityClass 10, the PodGroup's
// spec.priority set from it by admission); a high-priority gang of two
// (PriorityClass 1000) fits only once two of them are gone. The group's
// pod-group cycle fails, PodGroupPostFilter picks the victims and evicts
// them (DisruptionTarget PreemptionByScheduler, then a delete, a Normal
// "Preempted" event "Preempted by podgroup <uid> on node cluster"), and
// nominates each member to its node; once the victims are gone (no
// kubelet: the test ends their graceful deletion) the gang binds whole.
// With the low group's disruptionMode all, all six go though two would
// do; with single, only two.
//
// The real kube-scheduler v1.37.2 (GenericWorkload on) gets the same on
// twin nodes in other namespaces: it must evict as many pods of the low
// gang, as many on each node (the names may differ: pods of one priority
// and no start time tie in kube's MoreImportantVictim order), give the
// high gang's members the same PodScheduled messages, and bind it whole.
func TestRunPodGroupPreemption(t *testing.T) {
	c := startWorkloadCluster(t, "GenericWorkload=true")
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	const profile, low, high = "kubectl-sched-pg-preempt", "e2e-pg-low", "e2e-pg-high"
	values := map[string]int32{low: 10, high: 1000}
	for name, v := range values {
		pc := &schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: name}, Value: v}
		if _, err := c.Client.SchedulingV1().PriorityClasses().Create(ctx, pc, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			_ = c.Client.SchedulingV1().PriorityClasses().Delete(context.Background(), name, metav1.DeleteOptions{})
		})
	}
	features := schedcore.DefaultFeatures
	features.GenericWorkload = true
	startRun(t, c, runOptions{profile: profile, features: &features})
	if _, err := c.StartScheduler(ctx, ""); err != nil {
		t.Fatal(err)
	}

	members := func(pg string, n int, class, schedulerName, group string) []*v1.Pod {
		pods := nativeMembers(pg, n, "1", schedulerName, group)
		for _, p := range pods {
			p.Spec.PriorityClassName = class
		}
		return pods
	}
	for _, tc := range []struct {
		mode    string
		dm      *schedulingv1beta1.DisruptionMode
		evicted int
	}{
		{"all", &schedulingv1beta1.DisruptionMode{All: &schedulingv1beta1.AllDisruptionMode{}}, 6},
		{"single", &schedulingv1beta1.DisruptionMode{Single: &schedulingv1beta1.SingleDisruptionMode{}}, 2},
	} {
		t.Run("disruptionMode "+tc.mode, func(t *testing.T) {
			type side struct {
				who, schedulerName, group, ns string
				highPG                        *schedulingv1beta1.PodGroup
				lows, highs                   []*v1.Pod
				evicted, highNodes            []string
				victimsOn                     map[string]int
				highMsgs                      []string
			}
			sides := []*side{
				{who: "kubectl-sched", schedulerName: profile, group: "pgpre-" + tc.mode},
				{who: "kube-scheduler", schedulerName: v1.DefaultSchedulerName, group: "pgpre-kube-" + tc.mode},
			}
			// cpu 4 less the 100m reserve: three 1-cpu pods a node.
			for _, s := range sides {
				groupNodes(ctx, t, c.Client, s.group,
					cluster.NodeSpec{Name: s.group + "-a", CPU: "4", Memory: "64Gi"},
					cluster.NodeSpec{Name: s.group + "-b", CPU: "4", Memory: "64Gi"})
				s.ns = createNamespace(ctx, t, c.Client, s.group)
				createPriorityPodGroup(ctx, t, c.Client, s.ns, "low", 6, low, values[low], tc.dm)
				s.lows = members("low", 6, low, s.schedulerName, s.group)
				createPods(ctx, t, c.Client, s.ns, s.lows...)
			}
			for _, s := range sides {
				for _, p := range s.lows {
					if got := waitForPod(ctx, t, c.Client, s.ns, p.Name, bound); got.Spec.Priority == nil || *got.Spec.Priority != values[low] {
						t.Fatalf("%s: pod %s priority %v; want %d", s.who, p.Name, got.Spec.Priority, values[low])
					}
				}
				s.highPG = createPriorityPodGroup(ctx, t, c.Client, s.ns, "high", 2, high, values[high], nil)
				s.highs = members("high", 2, high, s.schedulerName, s.group)
				createPods(ctx, t, c.Client, s.ns, s.highs...)
			}

			for _, s := range sides {
				// Each member is nominated to the node PodGroupPostFilter
				// placed it on.
				for _, p := range s.highs {
					got := waitForPod(ctx, t, c.Client, s.ns, p.Name, func(p *v1.Pod) bool { return p.Status.NominatedNodeName != "" })
					if got.Spec.NodeName != "" {
						t.Errorf("%s: %s bound to %s before the victims were gone", s.who, p.Name, got.Spec.NodeName)
					}
					if ps := podCondition(got, v1.PodScheduled); ps != nil {
						s.highMsgs = append(s.highMsgs, ps.Message)
					}
				}
				// The eviction is asynchronous: wait for the victims, then
				// give a wrong extra one the time to show.
				if err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
					return len(terminating(ctx, t, c.Client, s.ns)) >= tc.evicted, nil
				}); err != nil {
					t.Fatalf("%s: victims %v; want %d: %v", s.who, terminating(ctx, t, c.Client, s.ns), tc.evicted, err)
				}
			}
			// The members' PodScheduled messages when nominated: the
			// group's failed cycle (kube adds no preemption tail on success).
			for _, s := range sides {
				sort.Strings(s.highMsgs)
			}
			if diff := cmp.Diff(sides[1].highMsgs, sides[0].highMsgs); diff != "" || len(sides[0].highMsgs) != 2 {
				t.Errorf("the high gang's PodScheduled messages (-kube-scheduler +ours):\n%s", diff)
			}
			time.Sleep(time.Second)
			for _, s := range sides {
				s.evicted = terminating(ctx, t, c.Client, s.ns)
				s.victimsOn = map[string]int{}
				if len(s.evicted) != tc.evicted {
					t.Errorf("%s: evicted %v; want %d of the low gang", s.who, s.evicted, tc.evicted)
				}
				for _, name := range s.evicted {
					if !strings.HasPrefix(name, "low-") {
						t.Errorf("%s: evicted %s; want only members of the low gang", s.who, name)
						continue
					}
					victim, err := c.Client.CoreV1().Pods(s.ns).Get(ctx, name, metav1.GetOptions{})
					if err != nil {
						t.Fatal(err)
					}
					s.victimsOn[victim.Spec.NodeName]++
					dt := podCondition(victim, v1.DisruptionTarget)
					if want := s.schedulerName + ": preempting to accommodate a higher priority podgroup"; dt == nil || dt.Status != v1.ConditionTrue || dt.Reason != v1.PodReasonPreemptionByScheduler || dt.Message != want {
						t.Errorf("%s: victim %s's DisruptionTarget condition %+v; want True, %s, %q", s.who, name, dt, v1.PodReasonPreemptionByScheduler, want)
					}
					ev := waitForEvent(ctx, t, c.Client, s.ns, name, "Preempted")
					if want := fmt.Sprintf("Preempted by podgroup %s on node cluster", s.highPG.UID); ev.Note != want || ev.Type != v1.EventTypeNormal || ev.Related == nil || ev.Related.Kind != "PodGroup" || ev.Related.Name != "high" {
						t.Errorf("%s: victim %s's event %s %q related %+v; want Normal %q related to PodGroup high", s.who, name, ev.Type, ev.Note, ev.Related, want)
					}
				}
				forceDelete(ctx, t, c.Client, s.ns, s.evicted)
			}

			for _, s := range sides {
				for _, p := range s.highs {
					got := waitForPod(ctx, t, c.Client, s.ns, p.Name, bound)
					if got.Status.NominatedNodeName != "" && got.Status.NominatedNodeName != got.Spec.NodeName {
						t.Errorf("%s: %s nominated to %s, bound to %s", s.who, p.Name, got.Status.NominatedNodeName, got.Spec.NodeName)
					}
					s.highNodes = append(s.highNodes, got.Spec.NodeName)
				}
				if cond := podGroupCondition(ctx, t, c.Client, s.ns, "high", metav1.ConditionTrue); cond.Reason != "Scheduled" {
					t.Errorf("%s: PodGroup high condition reason %q; want Scheduled", s.who, cond.Reason)
				}
				// The reprieved stay where they were.
				left := 0
				for _, p := range listPods(ctx, t, c.Client, s.ns) {
					if strings.HasPrefix(p.Name, "low-") {
						left++
						if p.Spec.NodeName == "" || p.DeletionTimestamp != nil {
							t.Errorf("%s: reprieved %s node %q deleting %v", s.who, p.Name, p.Spec.NodeName, p.DeletionTimestamp)
						}
					}
				}
				if left != 6-tc.evicted {
					t.Errorf("%s: %d of the low gang left; want %d", s.who, left, 6-tc.evicted)
				}
				t.Logf("%s: evicted %v (by node %v); the high gang on %v", s.who, s.evicted, s.victimsOn, s.highNodes)
				// With single, a member's node (0.9 cpu free) loses one
				// pod for it and the other node none.
				if tc.mode == "single" {
					want := map[string]int{}
					for _, n := range s.highNodes {
						want[n]++
					}
					if fmt.Sprint(want) != fmt.Sprint(s.victimsOn) {
						t.Errorf("%s: victims by node %v; want one for each member there, %v", s.who, s.victimsOn, want)
					}
				}
			}
			// Which pods of equal priority and no start time (no kubelet)
			// go is a tie (kube's MoreImportantVictim under sort.Slice):
			// the two must agree on how many and how many on each node.
			shape := func(s *side) string {
				var n []int
				for _, c := range s.victimsOn {
					n = append(n, c)
				}
				sort.Ints(n)
				return fmt.Sprint(len(s.evicted), n)
			}
			if shape(sides[0]) != shape(sides[1]) {
				t.Errorf("evicted: ours %v by node %v, kube-scheduler's %v by node %v", sides[0].evicted, sides[0].victimsOn, sides[1].evicted, sides[1].victimsOn)
			}
		})
	}
}
