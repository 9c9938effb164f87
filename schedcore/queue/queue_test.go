package queue

import (
	"fmt"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/sets"

	"github.com/kubectl-sched/kubectl-sched/schedcore"
)

func TestActiveQOrdering(t *testing.T) {
	tests := []struct {
		name string
		pods []*v1.Pod // added in this order, 1ms apart
		want []string
	}{
		{
			name: "higher priority pops first",
			pods: []*v1.Pod{pod("low").Obj(), pod("high").Priority(10).Obj(), pod("mid").Priority(5).Obj()},
			want: []string{"high", "mid", "low"},
		},
		{
			name: "equal priorities pop in arrival order",
			pods: []*v1.Pod{pod("first").Priority(1).Obj(), pod("second").Priority(1).Obj(), pod("third").Priority(1).Obj()},
			want: []string{"first", "second", "third"},
		},
		{
			name: "negative priorities come after unset ones",
			pods: []*v1.Pod{pod("neg").Priority(-5).Obj(), pod("unset").Obj()},
			want: []string{"unset", "neg"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			q, clk := newQueue(t, newFramework(t, nil))
			for _, p := range tt.pods {
				q.Add(logger, p)
				clk.Step(time.Millisecond)
			}
			var got []string
			for range tt.pods {
				got = append(got, mustPop(t, q).Pod.Name)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("(-want +got)\n%s", diff)
			}
			if n := q.SchedulingCycle(); n != int64(len(tt.pods)) {
				t.Errorf("SchedulingCycle = %d, want %d", n, len(tt.pods))
			}
		})
	}
}

func TestPopBlocksUntilAddAndCloseUnblocks(t *testing.T) {
	q, _ := newQueue(t, newFramework(t, nil))
	got := make(chan *schedcore.QueuedPodInfo)
	go func() {
		for {
			qpi, err := q.Pop(logger)
			if err != nil {
				t.Error(err)
			}
			got <- qpi
			if qpi == nil {
				return
			}
		}
	}()
	q.Add(logger, pod("p").Obj())
	if qpi := <-got; qpi == nil || qpi.Pod.Name != "p" || qpi.Attempts != 1 {
		t.Fatalf("Pop = %+v, want p on its first attempt", qpi)
	}
	q.Close()
	if qpi := <-got; qpi != nil {
		t.Fatalf("Pop after Close = %v, want nil", qpi.Pod.Name)
	}
	if _, ok := q.TryPop(logger); ok {
		t.Errorf("TryPop after Close popped")
	}
	q.Close() // twice is fine
}

func TestDuplicatePopIsDiscarded(t *testing.T) {
	q, _ := newQueue(t, newFramework(t, nil))
	p := pod("p").Obj()
	q.Add(logger, p)
	mustPop(t, q)
	// The same pod (same UID) re-added while in flight is discarded on pop.
	q.Add(logger, p)
	if _, ok := q.TryPop(logger); ok {
		t.Fatal("a pod already in flight was popped again")
	}
	if l := q.Lengths(); l != (schedcore.QueueLengths{}) {
		t.Errorf("lengths %+v, want empty", l)
	}
}

func TestPendingPodsAndLengths(t *testing.T) {
	q, _ := newQueue(t, newFramework(t, defaultFilters(), schedulingGates()))
	for _, p := range []*v1.Pod{pod("unsched").Priority(3).Obj(), pod("backoff").Priority(2).Obj(), pod("active").Obj(), pod("gated").SchedulingGates("g").Obj()} {
		q.Add(logger, p)
	}
	if err := q.AddUnschedulableIfNotPresent(logger, popAndReject(t, q, "unsched", []string{"A"}, nil), 1); err != nil {
		t.Fatal(err)
	}
	if err := q.AddUnschedulableIfNotPresent(logger, popAndReject(t, q, "backoff", nil, nil), 2); err != nil {
		t.Fatal(err)
	}
	pods, summary := q.PendingPods()
	if diff := cmp.Diff([]string{"active", "backoff", "gated", "unsched"}, names(pods)); diff != "" {
		t.Errorf("pods (-want +got)\n%s", diff)
	}
	if want := "activeQ:1; backoffQ:1; unschedulableEntities:2"; summary != want {
		t.Errorf("summary %q, want %q", summary, want)
	}
	lists := [][]string{names(q.PodsInActiveQ()), names(q.PodsInBackoffQ()), names(q.UnschedulablePods())}
	if diff := cmp.Diff([][]string{{"active"}, {"backoff"}, {"gated", "unsched"}}, lists); diff != "" {
		t.Errorf("sub-queue lists (-want +got)\n%s", diff)
	}
	if diff := cmp.Diff(schedcore.QueueLengths{Active: 1, Backoff: 1, Unschedulable: 1, Gated: 1}, q.Lengths()); diff != "" {
		t.Errorf("lengths (-want +got)\n%s", diff)
	}
}

func TestNominator(t *testing.T) {
	override := func(node string) *schedcore.NominatingInfo {
		return &schedcore.NominatingInfo{NominatingMode: schedcore.ModeOverride, NominatedNodeName: node}
	}
	nominatedTo := func(p *v1.Pod, node string) *v1.Pod {
		p = p.DeepCopy()
		p.Status.NominatedNodeName = node
		return p
	}
	a, b, c := pod("a").Req("cpu", "1").Obj(), pod("b").Obj(), pod("c").Obj()
	tests := []struct {
		name   string
		getter PodGetter
		do     func(q *PriorityQueue)
		want   map[string][]string
	}{
		{
			name: "pods come back in nomination order; renominating moves a pod last",
			do: func(q *PriorityQueue) {
				for _, p := range []*v1.Pod{a, b, c} {
					q.AddNominatedPod(logger, schedcore.NewPodInfo(p), override("n1"))
				}
				q.AddNominatedPod(logger, schedcore.NewPodInfo(a), override("n1"))
			},
			want: map[string][]string{"n1": {"b", "c", "a"}},
		},
		{
			name: "ModeNoop and Add take status.nominatedNodeName",
			do: func(q *PriorityQueue) {
				q.Add(logger, nominatedTo(a, "n1"))
				q.AddNominatedPod(logger, schedcore.NewPodInfo(nominatedTo(b, "n2")), &schedcore.NominatingInfo{NominatingMode: schedcore.ModeNoop})
				q.AddNominatedPod(logger, schedcore.NewPodInfo(nominatedTo(c, "n2")), nil)
			},
			want: map[string][]string{"n1": {"a"}, "n2": {"b", "c"}},
		},
		{
			name: "an override to no node clears the nomination",
			do: func(q *PriorityQueue) {
				q.AddNominatedPod(logger, schedcore.NewPodInfo(a), override("n1"))
				q.AddNominatedPod(logger, schedcore.NewPodInfo(a), override(""))
			},
			want: map[string][]string{"n1": {}},
		},
		{
			name: "a nomination moves to another node",
			do: func(q *PriorityQueue) {
				q.AddNominatedPod(logger, schedcore.NewPodInfo(a), override("n1"))
				q.AddNominatedPod(logger, schedcore.NewPodInfo(a), override("n2"))
			},
			want: map[string][]string{"n1": {}, "n2": {"a"}},
		},
		{
			name: "an update without nominatedNodeName keeps the in-memory nomination",
			do: func(q *PriorityQueue) {
				q.Add(logger, a)
				q.AddNominatedPod(logger, schedcore.NewPodInfo(a), override("n1"))
				np := a.DeepCopy()
				np.Labels = map[string]string{"x": "y"}
				q.Update(logger, a, np)
			},
			want: map[string][]string{"n1": {"a"}},
		},
		{
			name: "an update carrying nominatedNodeName takes it",
			do: func(q *PriorityQueue) {
				q.Add(logger, a)
				q.AddNominatedPod(logger, schedcore.NewPodInfo(a), override("n1"))
				q.Update(logger, a, nominatedTo(a, "n2"))
			},
			want: map[string][]string{"n1": {}, "n2": {"a"}},
		},
		{
			name: "DeleteNominatedPodIfExists forgets the pod",
			do: func(q *PriorityQueue) {
				q.AddNominatedPod(logger, schedcore.NewPodInfo(a), override("n1"))
				q.AddNominatedPod(logger, schedcore.NewPodInfo(b), override("n1"))
				q.DeleteNominatedPodIfExists(a)
				q.DeleteNominatedPodIfExists(c)
			},
			want: map[string][]string{"n1": {"b"}},
		},
		{
			name: "with a pod getter, pods gone or already assigned are not nominated",
			getter: func(_, name string) (*v1.Pod, bool) {
				switch name {
				case "a":
					return a, true
				case "b":
					return pod("b").Node("n9").Obj(), true
				}
				return nil, false
			},
			do: func(q *PriorityQueue) {
				for _, p := range []*v1.Pod{a, b, c} {
					q.AddNominatedPod(logger, schedcore.NewPodInfo(p), override("n1"))
				}
			},
			want: map[string][]string{"n1": {"a"}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var opts []Option
			if tt.getter != nil {
				opts = append(opts, WithPodGetter(tt.getter))
			}
			q, _ := newQueue(t, newFramework(t, nil), opts...)
			tt.do(q)
			got := map[string][]string{}
			for node := range tt.want {
				got[node] = []string{}
				for _, pi := range q.NominatedPodsForNode(node) {
					got[node] = append(got[node], pi.Pod.Name)
				}
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("(-want +got)\n%s", diff)
			}
		})
	}
}

func TestNominatedPodsForNodeContent(t *testing.T) {
	q, _ := newQueue(t, newFramework(t, nil))
	queued, inFlight := pod("queued").Req("cpu", "2").Obj(), pod("inflight").Priority(1).Req("cpu", "1").Obj()
	q.Add(logger, queued)
	q.Add(logger, inFlight)
	mustPop(t, q)
	ni := &schedcore.NominatingInfo{NominatingMode: schedcore.ModeOverride, NominatedNodeName: "n1"}
	q.AddNominatedPod(logger, schedcore.NewPodInfo(queued), ni)
	q.AddNominatedPod(logger, schedcore.NewPodInfo(inFlight), ni)
	got := q.NominatedPodsForNode("n1")
	if len(got) != 2 {
		t.Fatalf("got %d pods", len(got))
	}
	if len(got[0].Pod.Spec.Containers) != 1 || got[0].Pod == queued {
		t.Errorf("a queued pod comes back as a full copy: %+v", got[0].Pod)
	}
	if len(got[1].Pod.Spec.Containers) != 0 || got[1].Pod.UID != inFlight.UID || got[1].Pod.Name != "inflight" {
		t.Errorf("an in-flight pod comes back bare (name, namespace, UID): %+v", got[1].Pod)
	}
	got[0].Pod.Labels = map[string]string{"mutated": "yes"}
	if qpi, _ := q.GetPod("queued", "default"); qpi.Pod.Labels != nil {
		t.Errorf("mutating the result changed the queued pod")
	}
	if got := q.NominatedPodsForNode("nowhere"); got == nil || len(got) != 0 {
		t.Errorf("unknown node: %v, want an empty slice", got)
	}
}

func TestMetricsFollowTheQueues(t *testing.T) {
	m := newRecordingMetrics()
	q, clk := newQueue(t, newFramework(t, defaultFilters(), schedulingGates()), WithMetrics(m))
	for i := range 6 {
		q.Add(logger, pod(fmt.Sprint("p", i)).Priority(int32(10-i)).Obj())
	}
	q.Add(logger, pod("gated").SchedulingGates("g").Obj())
	if err := q.AddUnschedulableIfNotPresent(logger, popAndReject(t, q, "p0", []string{"A"}, nil), 1); err != nil {
		t.Fatal(err)
	}
	if err := q.AddUnschedulableIfNotPresent(logger, popAndReject(t, q, "p1", []string{"A", "B"}, nil), 2); err != nil {
		t.Fatal(err)
	}
	if err := q.AddUnschedulableIfNotPresent(logger, popAndReject(t, q, "p2", nil, nil), 3); err != nil {
		t.Fatal(err)
	}
	inflight := mustPop(t, q)
	q.MoveAllToActiveOrBackoffQueue(logger, assignedDelete, pod("x").Node("n").Obj(), nil, nil)
	clk.Step(time.Minute)
	q.flushBackoffQCompleted(logger)

	l := q.Lengths()
	want := map[string]int{QueueActive: l.Active, QueueBackoff: l.Backoff, QueueUnschedulable: l.Unschedulable, QueueGated: l.Gated}
	if diff := cmp.Diff(want, m.pending); diff != "" {
		t.Errorf("pending_pods gauges vs Lengths (-want +got)\n%s", diff)
	}
	wantIncoming := map[[2]string]int{
		{QueueActive, "UnscheduledPodAdd"}:                6,
		{QueueUnschedulable, "UnscheduledPodAdd"}:         1,
		{QueueUnschedulable, EventScheduleAttemptFailure}: 2,
		{QueueBackoff, EventScheduleAttemptFailure}:       1,
		{QueueBackoff, "AssignedPodDelete"}:               1,
		{QueueActive, EventBackoffComplete}:               2,
	}
	if diff := cmp.Diff(wantIncoming, m.incoming); diff != "" {
		t.Errorf("queue_incoming_pods_total (-want +got)\n%s", diff)
	}
	// As kube, a pod counts for its rejectors until it is popped or deleted
	// (p1 is back in activeQ but not yet retried); the gated pod counts its
	// gating plugin.
	if diff := cmp.Diff(map[string]int{"A": 2, "B": 1, "SchedulingGates": 1}, m.reasons); diff != "" {
		t.Errorf("unschedulable_pods (-want +got)\n%s", diff)
	}
	if diff := cmp.Diff(map[string]int{EventPodPopped: 1, "AssignedPodDelete": 1}, m.inflight); diff != "" {
		t.Errorf("inflight_events (-want +got)\n%s", diff)
	}
	q.Done(inflight.Pod.UID)
	if diff := cmp.Diff(map[string]int{EventPodPopped: 0, "AssignedPodDelete": 0}, m.inflight); diff != "" {
		t.Errorf("inflight_events after Done (-want +got)\n%s", diff)
	}
}

// TestConcurrentUse runs a scheduling loop against producers; run with -race.
func TestConcurrentUse(t *testing.T) {
	q, clk := newQueue(t, newFramework(t, defaultFilters(), schedulingGates()))
	q.Run(logger)
	const n = 200
	var wg sync.WaitGroup
	scheduled := make(chan struct{}, n)
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			qpi, _ := q.Pop(logger)
			if qpi == nil {
				return
			}
			_ = q.NominatedPodsForNode("n1")
			if qpi.Attempts < 2 {
				c := *qpi
				c.UnschedulablePlugins = sets.New("A")
				if err := q.AddUnschedulableIfNotPresent(logger, &c, q.SchedulingCycle()); err != nil {
					t.Error(err)
				}
				continue
			}
			q.Done(qpi.Pod.UID)
			scheduled <- struct{}{}
		}
	}()
	wg.Add(3)
	go func() {
		defer wg.Done()
		for i := range n {
			p := pod(fmt.Sprint("p", i)).Priority(int32(i % 7)).Obj()
			q.Add(logger, p)
			if i%10 == 0 {
				q.AddNominatedPod(logger, schedcore.NewPodInfo(p), &schedcore.NominatingInfo{NominatingMode: schedcore.ModeOverride, NominatedNodeName: "n1"})
			}
		}
	}()
	stop := make(chan struct{})
	go func() {
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			default:
			}
			q.MoveAllToActiveOrBackoffQueue(logger, nodeLabel, nil, nil, nil)
			q.PendingPods()
			q.Lengths()
			runtime.Gosched()
		}
	}()
	go func() {
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			default:
			}
			clk.Step(100 * time.Millisecond)
			runtime.Gosched()
		}
	}()
	for range n {
		select {
		case <-scheduled:
		case <-time.After(30 * time.Second):
			t.Fatalf("stuck: %+v", q.Lengths())
		}
	}
	close(stop)
	q.Close()
	wg.Wait()
}
