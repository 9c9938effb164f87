package queue

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/sets"

	"github.com/kubectl-sched/kubectl-sched/schedcore"
	"github.com/kubectl-sched/kubectl-sched/schedcore/schedtest"
)

// requeueFilters: A wakes on Node/Add for fits=true nodes and on any
// Node/UpdateNodeLabel, B on AssignedPod/Delete, C's hint fails, D wakes
// on updates of pod labels.
func requeueFilters() []*filterPlugin {
	return append(defaultFilters(),
		&filterPlugin{name: "C", events: []schedcore.ClusterEventWithHint{withHint(nodeAdd, queueError)}},
		&filterPlugin{name: "D", events: []schedcore.ClusterEventWithHint{withHint(schedcore.ClusterEvent{Resource: schedcore.Pod, ActionType: schedcore.UpdatePodLabel}, queueAlways)}},
		&filterPlugin{name: "N", events: []schedcore.ClusterEventWithHint{withHint(nodeAdd, queueNever)}},
	)
}

var (
	fitsNode  = schedtest.MakeNode("n1").Label("fits", "true").Obj()
	otherNode = schedtest.MakeNode("n2").Obj()
)

func TestRequeueDecisionAfterAFailedAttempt(t *testing.T) {
	tests := []struct {
		name          string
		opts          []Option
		unschedulable []string
		pending       []string
		// during runs while p is in flight; other is in flight too.
		during func(q *PriorityQueue, p, other *v1.Pod)
		want   string
	}{
		{
			name: "a pod with no rejector plugins (an error) goes to backoff",
			want: QueueBackoff,
		},
		{
			name:          "without events in flight a rejected pod waits in the unschedulable pool",
			unschedulable: []string{"A"},
			want:          QueueUnschedulable,
		},
		{
			name:          "an event whose hint says Queue sends the pod to backoff",
			unschedulable: []string{"A"},
			during: func(q *PriorityQueue, _, _ *v1.Pod) {
				q.MoveAllToActiveOrBackoffQueue(logger, nodeAdd, nil, fitsNode, nil)
			},
			want: QueueBackoff,
		},
		{
			name:          "an event whose hint says QueueSkip leaves it unschedulable",
			unschedulable: []string{"A"},
			during: func(q *PriorityQueue, _, _ *v1.Pod) {
				q.MoveAllToActiveOrBackoffQueue(logger, nodeAdd, nil, otherNode, nil)
			},
			want: QueueUnschedulable,
		},
		{
			name:          "only the rejector plugins' hints are asked",
			unschedulable: []string{"A"},
			during: func(q *PriorityQueue, _, _ *v1.Pod) {
				q.MoveAllToActiveOrBackoffQueue(logger, assignedDelete, otherNode, nil, nil)
			},
			want: QueueUnschedulable,
		},
		{
			name:          "a registration without a hint always queues",
			unschedulable: []string{"A", "B"},
			during: func(q *PriorityQueue, _, _ *v1.Pod) {
				q.MoveAllToActiveOrBackoffQueue(logger, assignedDelete, pod("gone").Node("n1").Obj(), nil, nil)
			},
			want: QueueBackoff,
		},
		{
			name:          "one rejector saying Queue is enough",
			unschedulable: []string{"N", "A"},
			during: func(q *PriorityQueue, _, _ *v1.Pod) {
				q.MoveAllToActiveOrBackoffQueue(logger, nodeAdd, nil, fitsNode, nil)
			},
			want: QueueBackoff,
		},
		{
			name:    "a Pending plugin's Queue skips backoff",
			pending: []string{"A"},
			during: func(q *PriorityQueue, _, _ *v1.Pod) {
				q.MoveAllToActiveOrBackoffQueue(logger, nodeAdd, nil, fitsNode, nil)
			},
			want: QueueActive,
		},
		{
			name:          "an Unschedulable plugin's Queue with a silent Pending plugin goes to backoff",
			unschedulable: []string{"B"},
			pending:       []string{"A"},
			during: func(q *PriorityQueue, _, _ *v1.Pod) {
				q.MoveAllToActiveOrBackoffQueue(logger, assignedDelete, pod("gone").Node("n1").Obj(), nil, nil)
			},
			want: QueueBackoff,
		},
		{
			name:          "a wildcard event requeues after backoff whatever the hints",
			unschedulable: []string{"N"},
			during: func(q *PriorityQueue, _, _ *v1.Pod) {
				q.MoveAllToActiveOrBackoffQueue(logger, schedcore.EventUnschedulableTimeout, nil, nil, nil)
			},
			want: QueueBackoff,
		},
		{
			name:          "Activate of another in-flight pod does not requeue this one",
			unschedulable: []string{"A"},
			during: func(q *PriorityQueue, _, other *v1.Pod) {
				q.Activate(logger, map[string]*v1.Pod{"other": other})
			},
			want: QueueUnschedulable,
		},
		{
			name:          "Activate of the in-flight pod requeues it after backoff",
			unschedulable: []string{"A"},
			during: func(q *PriorityQueue, p, _ *v1.Pod) {
				q.Activate(logger, map[string]*v1.Pod{"p": p})
			},
			want: QueueBackoff,
		},
		{
			name:          "a hint error counts as Queue",
			unschedulable: []string{"C"},
			during: func(q *PriorityQueue, _, _ *v1.Pod) {
				q.MoveAllToActiveOrBackoffQueue(logger, nodeAdd, nil, otherNode, nil)
			},
			want: QueueBackoff,
		},
		{
			name:          "an event less specific than the registration does not match",
			unschedulable: []string{"A"},
			during: func(q *PriorityQueue, _, _ *v1.Pod) {
				q.MoveAllToActiveOrBackoffQueue(logger, nodeUpdate, otherNode, otherNode, nil)
			},
			want: QueueUnschedulable,
		},
		{
			name:          "an update of the in-flight pod is replayed as a TargetPod event",
			unschedulable: []string{"D"},
			during: func(q *PriorityQueue, p, _ *v1.Pod) {
				np := p.DeepCopy()
				np.Labels = map[string]string{"app": "web"}
				q.Update(logger, p, np)
			},
			want: QueueBackoff,
		},
		{
			name:          "with backoff disabled a woken pod goes straight to activeQ",
			opts:          []Option{WithPodMaxBackoffDuration(0)},
			unschedulable: []string{"A"},
			during: func(q *PriorityQueue, _, _ *v1.Pod) {
				q.MoveAllToActiveOrBackoffQueue(logger, nodeLabel, otherNode, otherNode, nil)
			},
			want: QueueActive,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			q, _ := newQueue(t, newFramework(t, requeueFilters()), tt.opts...)
			p, other := pod("p").Priority(1).Obj(), pod("other").Obj()
			q.Add(logger, p)
			q.Add(logger, other)
			qpi := popAndReject(t, q, "p", tt.unschedulable, tt.pending)
			mustPop(t, q)
			if tt.during != nil {
				tt.during(q, p, other)
			}
			if err := q.AddUnschedulableIfNotPresent(logger, qpi, q.SchedulingCycle()); err != nil {
				t.Fatal(err)
			}
			if got := where(q, p); got != tt.want {
				t.Errorf("pod is in %s, want %s", got, tt.want)
			}
			if got := names(q.InFlightPods()); !cmp.Equal(got, []string{"other"}) {
				t.Errorf("in flight after requeue: %v, want [other]", got)
			}
		})
	}
}

func TestAttemptCounters(t *testing.T) {
	q, _ := newQueue(t, newFramework(t, defaultFilters()))
	p := pod("p").Obj()
	q.Add(logger, p)
	qpi := popAndReject(t, q, "p", nil, nil)
	if err := q.AddUnschedulableIfNotPresent(logger, qpi, 1); err != nil {
		t.Fatal(err)
	}
	if qpi.ConsecutiveErrorsCount != 1 || qpi.UnschedulableCount != 0 {
		t.Errorf("after an error: errors %d unschedulable %d, want 1 0", qpi.ConsecutiveErrorsCount, qpi.UnschedulableCount)
	}
	if err := q.AddUnschedulableIfNotPresent(logger, qpi, 1); err == nil {
		t.Errorf("adding a pod already in backoffQ: want an error")
	}
}

func TestErrorBackoffNotPoppedEarlyAndCountersReset(t *testing.T) {
	q, clk := newQueue(t, newFramework(t, defaultFilters()))
	p := pod("p").Obj()
	q.Add(logger, p)
	qpi := popAndReject(t, q, "p", nil, nil)
	if err := q.AddUnschedulableIfNotPresent(logger, qpi, 1); err != nil {
		t.Fatal(err)
	}
	if _, ok := q.TryPop(logger); ok {
		t.Fatal("an error-backoff pod was popped before its backoff ended")
	}
	clk.Step(2 * time.Second)
	qpi = popAndReject(t, q, "p", []string{"A"}, nil)
	if err := q.AddUnschedulableIfNotPresent(logger, qpi, 2); err != nil {
		t.Fatal(err)
	}
	if qpi.ConsecutiveErrorsCount != 0 || qpi.UnschedulableCount != 1 || qpi.Attempts != 2 {
		t.Errorf("errors %d unschedulable %d attempts %d, want 0 1 2", qpi.ConsecutiveErrorsCount, qpi.UnschedulableCount, qpi.Attempts)
	}
	if !qpi.Timestamp.Equal(clk.Now()) {
		t.Errorf("Timestamp %v, want the time of the failure %v", qpi.Timestamp, clk.Now())
	}
}

func TestEventsBeforeThePopDoNotCount(t *testing.T) {
	q, _ := newQueue(t, newFramework(t, requeueFilters()))
	early, p := pod("early").Priority(5).Obj(), pod("p").Obj()
	q.Add(logger, early)
	q.Add(logger, p)
	mustPop(t, q) // early is in flight: events are now kept
	q.MoveAllToActiveOrBackoffQueue(logger, nodeAdd, nil, fitsNode, nil)
	qpi := popAndReject(t, q, "p", []string{"A"}, nil)
	if err := q.AddUnschedulableIfNotPresent(logger, qpi, 2); err != nil {
		t.Fatal(err)
	}
	if got := where(q, p); got != QueueUnschedulable {
		t.Errorf("pod is in %s, want %s", got, QueueUnschedulable)
	}
}

func TestInFlightEventsArePruned(t *testing.T) {
	q, _ := newQueue(t, newFramework(t, defaultFilters()))
	q.Add(logger, pod("p1").Priority(2).Obj())
	q.Add(logger, pod("p2").Priority(1).Obj())
	p1 := mustPop(t, q)
	q.MoveAllToActiveOrBackoffQueue(logger, nodeAdd, nil, otherNode, nil)
	p2 := mustPop(t, q)
	q.MoveAllToActiveOrBackoffQueue(logger, nodeLabel, nil, otherNode, nil)
	label := func(evs []*clusterEvent) []string {
		var out []string
		for _, e := range evs {
			out = append(out, e.event.Label())
		}
		return out
	}
	if evs, _ := q.activeQ.clusterEventsForPod(p1.Pod.UID); !cmp.Equal(label(evs), []string{"NodeAdd", "NodeUpdateNodeLabel"}) {
		t.Errorf("p1 events %v", label(evs))
	}
	q.Done(p1.Pod.UID)
	if n := q.activeQ.inFlightEventsLen(); n != 1 {
		t.Errorf("after Done(p1) %d events kept, want 1 (only p2's)", n)
	}
	if evs, _ := q.activeQ.clusterEventsForPod(p2.Pod.UID); !cmp.Equal(label(evs), []string{"NodeUpdateNodeLabel"}) {
		t.Errorf("p2 events %v", label(evs))
	}
	q.Done(p2.Pod.UID)
	q.Done(p2.Pod.UID) // a second Done is a no-op
	if n := q.activeQ.inFlightEventsLen(); n != 0 {
		t.Errorf("after Done(p2) %d events kept, want 0", n)
	}
	q.MoveAllToActiveOrBackoffQueue(logger, nodeAdd, nil, otherNode, nil)
	if n := q.activeQ.inFlightEvents.Len(); n != 0 {
		t.Errorf("with nothing in flight %d events kept, want 0", n)
	}
}

func TestMoveAllToActiveOrBackoffQueue(t *testing.T) {
	tests := []struct {
		name     string
		event    schedcore.ClusterEvent
		newObj   any
		preCheck func(*v1.Pod) bool
		want     map[string]string
	}{
		{
			name:  "an event no plugin registered moves nothing",
			event: schedcore.ClusterEvent{Resource: schedcore.PersistentVolume, ActionType: schedcore.Add},
			want:  map[string]string{"a": QueueUnschedulable, "b": QueueUnschedulable},
		},
		{
			name:   "only pods whose rejectors' hints queue move",
			event:  nodeAdd,
			newObj: fitsNode,
			want:   map[string]string{"a": QueueBackoff, "b": QueueUnschedulable},
		},
		{
			name:     "preCheck filters the candidates first",
			event:    schedcore.EventUnschedulableTimeout,
			preCheck: func(p *v1.Pod) bool { return p.Name == "b" },
			want:     map[string]string{"a": QueueUnschedulable, "b": QueueBackoff},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			q, _ := newQueue(t, newFramework(t, defaultFilters()))
			pods := map[string]*v1.Pod{"a": pod("a").Priority(1).Obj(), "b": pod("b").Obj()}
			rejectors := map[string]string{"a": "A", "b": "B"}
			for _, n := range []string{"a", "b"} {
				q.Add(logger, pods[n])
			}
			for _, n := range []string{"a", "b"} {
				qpi := popAndReject(t, q, n, []string{rejectors[n]}, nil)
				if err := q.AddUnschedulableIfNotPresent(logger, qpi, 1); err != nil {
					t.Fatal(err)
				}
			}
			q.MoveAllToActiveOrBackoffQueue(logger, tt.event, nil, tt.newObj, tt.preCheck)
			got := map[string]string{}
			for n, p := range pods {
				got[n] = where(q, p)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("(-want +got)\n%s", diff)
			}
		})
	}
}

func TestAssignedPodEvents(t *testing.T) {
	e := &filterPlugin{name: "E", events: []schedcore.ClusterEventWithHint{
		withHint(schedcore.ClusterEvent{Resource: schedcore.AssignedPod, ActionType: schedcore.Add}, queueAlways),
		withHint(schedcore.ClusterEvent{Resource: schedcore.Pod, ActionType: schedcore.UpdatePodLabel}, queueAlways),
	}}
	bound := pod("bound").Node("n1").Obj()
	relabelled := bound.DeepCopy()
	relabelled.Labels = map[string]string{"app": "web"}
	tests := []struct {
		name string
		do   func(q *PriorityQueue)
		want string
	}{
		{name: "AssignedPodAdded is an AssignedPod/Add event", do: func(q *PriorityQueue) { q.AssignedPodAdded(logger, bound) }, want: QueueBackoff},
		{name: "AssignedPodUpdated derives UpdatePodLabel from the change", do: func(q *PriorityQueue) {
			q.AssignedPodUpdated(logger, bound, relabelled, schedcore.ClusterEvent{})
		}, want: QueueBackoff},
		{name: "an update changing nothing of interest is a plain Update, which a specific registration ignores", do: func(q *PriorityQueue) {
			q.AssignedPodUpdated(logger, bound, bound.DeepCopy(), schedcore.ClusterEvent{})
		}, want: QueueUnschedulable},
		{name: "AssignedPodUpdated uses the event it is given", do: func(q *PriorityQueue) {
			q.AssignedPodUpdated(logger, bound, bound, schedcore.ClusterEvent{Resource: schedcore.AssignedPod, ActionType: schedcore.UpdatePodLabel})
		}, want: QueueBackoff},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			q, _ := newQueue(t, newFramework(t, []*filterPlugin{e}))
			p := pod("p").Obj()
			q.Add(logger, p)
			qpi := popAndReject(t, q, "p", []string{"E"}, nil)
			if err := q.AddUnschedulableIfNotPresent(logger, qpi, 1); err != nil {
				t.Fatal(err)
			}
			tt.do(q)
			if got := where(q, p); got != tt.want {
				t.Errorf("pod is in %s, want %s", got, tt.want)
			}
		})
	}
}

// holdGate gates pods labelled hold=true and wakes them on Node/Add.
func holdGate() *gatePlugin {
	return &gatePlugin{
		name:   "Hold",
		gate:   func(p *v1.Pod) bool { return p.Labels["hold"] == "true" },
		events: []schedcore.ClusterEventWithHint{withHint(nodeAdd, queueAlways)},
	}
}

func TestGatedPods(t *testing.T) {
	t.Run("a pod with scheduling gates waits gated until an update removes them", func(t *testing.T) {
		sg := schedulingGates()
		q, _ := newQueue(t, newFramework(t, nil, sg))
		p := pod("p").SchedulingGates("example.com/gate").Obj()
		q.Add(logger, p)
		if got := where(q, p); got != QueueGated {
			t.Fatalf("pod is in %s, want gated", got)
		}
		if l := q.Lengths(); l != (schedcore.QueueLengths{Gated: 1}) {
			t.Errorf("lengths %+v", l)
		}
		qpi, _ := q.GetPod("p", "default")
		if qpi.GatingPlugin != "SchedulingGates" || !qpi.UnschedulablePlugins.Has("SchedulingGates") || len(qpi.GatingPluginEvents) != 3 {
			t.Errorf("gating plugin %q, rejectors %v, events %v", qpi.GatingPlugin, sets.List(qpi.UnschedulablePlugins), qpi.GatingPluginEvents)
		}
		if _, ok := q.TryPop(logger); ok {
			t.Fatal("a gated pod was popped")
		}
		calls := sg.calls
		q.MoveAllToActiveOrBackoffQueue(logger, nodeAdd, nil, fitsNode, nil)
		if sg.calls != calls {
			t.Errorf("an event the gating plugin did not register re-ran PreEnqueue")
		}
		relabelled := p.DeepCopy()
		relabelled.Labels = map[string]string{"a": "b"}
		q.Update(logger, p, relabelled)
		if got := where(q, p); got != QueueGated {
			t.Fatalf("after a label update the pod is in %s, want gated", got)
		}
		ungated := relabelled.DeepCopy()
		ungated.Spec.SchedulingGates = nil
		q.Update(logger, relabelled, ungated)
		if got := where(q, p); got != QueueActive {
			t.Fatalf("after the gates were removed the pod is in %s, want active", got)
		}
		got := mustPop(t, q)
		if got.Gated() || got.InitialAttemptTimestamp == nil {
			t.Errorf("popped pod gated %v, initial attempt %v", got.Gated(), got.InitialAttemptTimestamp)
		}
	})

	t.Run("a gated pod is re-evaluated on its gating plugin's events", func(t *testing.T) {
		hold := holdGate()
		q, _ := newQueue(t, newFramework(t, nil, hold))
		p := pod("p").Label("hold", "true").Obj()
		q.Add(logger, p)
		calls := hold.calls
		q.MoveAllToActiveOrBackoffQueue(logger, nodeAdd, nil, fitsNode, nil)
		if hold.calls != calls+1 || where(q, p) != QueueGated {
			t.Fatalf("calls %d (was %d), pod in %s: want one more PreEnqueue and still gated", hold.calls, calls, where(q, p))
		}
		released := p.DeepCopy()
		released.Labels = nil
		// The Hold plugin registered no Pod events: the update alone does not
		// re-run PreEnqueue, as in kube.
		q.Update(logger, p, released)
		if got := where(q, p); got != QueueGated {
			t.Fatalf("after the update the pod is in %s, want gated", got)
		}
		q.MoveAllToActiveOrBackoffQueue(logger, nodeAdd, nil, fitsNode, nil)
		if got := where(q, p); got != QueueActive {
			t.Fatalf("after Node/Add the pod is in %s, want active", got)
		}
	})

	t.Run("the leftover flush re-evaluates gated pods, then waits from the flush", func(t *testing.T) {
		hold := holdGate()
		q, clk := newQueue(t, newFramework(t, nil, hold))
		p := pod("p").Label("hold", "true").Obj()
		q.Add(logger, p)
		calls := hold.calls
		clk.Step(5*time.Minute + time.Second)
		q.flushUnschedulablePodsLeftover(logger)
		if hold.calls != calls+1 {
			t.Fatalf("the flush did not re-run PreEnqueue")
		}
		qpi, _ := q.GetPod("p", "default")
		if !qpi.FlushTimestamp.Equal(clk.Now()) || qpi.WasFlushedFromUnschedulable {
			t.Errorf("FlushTimestamp %v WasFlushed %v", qpi.FlushTimestamp, qpi.WasFlushedFromUnschedulable)
		}
		clk.Step(30 * time.Second)
		q.flushUnschedulablePodsLeftover(logger)
		if hold.calls != calls+1 {
			t.Errorf("a flush 30s after the last one re-ran PreEnqueue")
		}
	})

	t.Run("with SchedulerPopFromBackoffQ PreEnqueue runs when a pod enters backoffQ", func(t *testing.T) {
		closed := false
		g := &gatePlugin{name: "Valve", gate: func(*v1.Pod) bool { return closed }}
		q, _ := newQueue(t, newFramework(t, defaultFilters(), g))
		p := pod("p").Obj()
		q.Add(logger, p)
		qpi := popAndReject(t, q, "p", []string{"A"}, nil)
		if err := q.AddUnschedulableIfNotPresent(logger, qpi, 1); err != nil {
			t.Fatal(err)
		}
		closed = true
		q.MoveAllToActiveOrBackoffQueue(logger, nodeLabel, nil, nil, nil)
		if got := where(q, p); got != QueueGated {
			t.Fatalf("pod is in %s, want gated", got)
		}
	})
}

func TestUpdate(t *testing.T) {
	d := &filterPlugin{name: "D", events: []schedcore.ClusterEventWithHint{withHint(schedcore.ClusterEvent{Resource: schedcore.Pod, ActionType: schedcore.UpdatePodLabel}, queueAlways)}}
	relabel := func(p *v1.Pod) *v1.Pod {
		np := p.DeepCopy()
		np.Labels = map[string]string{"v": "2"}
		return np
	}
	tests := []struct {
		name  string
		setup func(t *testing.T, q *PriorityQueue, p *v1.Pod)
		want  string
	}{
		{name: "an unknown pod is added", setup: func(*testing.T, *PriorityQueue, *v1.Pod) {}, want: QueueActive},
		{name: "a pod in activeQ is updated in place", setup: func(_ *testing.T, q *PriorityQueue, p *v1.Pod) { q.Add(logger, p) }, want: QueueActive},
		{name: "a pod in backoffQ is updated in place", setup: func(t *testing.T, q *PriorityQueue, p *v1.Pod) {
			q.Add(logger, p)
			if err := q.AddUnschedulableIfNotPresent(logger, popAndReject(t, q, "p", nil, nil), 1); err != nil {
				t.Fatal(err)
			}
		}, want: QueueBackoff},
		{name: "an unschedulable pod whose rejector's hint queues on the update moves", setup: func(t *testing.T, q *PriorityQueue, p *v1.Pod) {
			q.Add(logger, p)
			if err := q.AddUnschedulableIfNotPresent(logger, popAndReject(t, q, "p", []string{"D"}, nil), 1); err != nil {
				t.Fatal(err)
			}
		}, want: QueueBackoff},
		{name: "an in-flight pod stays in flight", setup: func(t *testing.T, q *PriorityQueue, p *v1.Pod) {
			q.Add(logger, p)
			mustPop(t, q)
		}, want: "inflight"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			q, _ := newQueue(t, newFramework(t, []*filterPlugin{d}))
			p := pod("p").Obj()
			tt.setup(t, q, p)
			np := relabel(p)
			q.Update(logger, p, np)
			if got := where(q, p); got != tt.want {
				t.Fatalf("pod is in %s, want %s", got, tt.want)
			}
			if qpi, ok := q.GetPod("p", "default"); ok && qpi.Pod != np {
				t.Errorf("queued pod not updated: labels %v", qpi.Pod.Labels)
			}
		})
	}
}

func TestActivate(t *testing.T) {
	tests := []struct {
		name  string
		setup func(t *testing.T, q *PriorityQueue, p *v1.Pod)
		want  string
	}{
		{name: "an unschedulable pod moves to activeQ", setup: func(t *testing.T, q *PriorityQueue, p *v1.Pod) {
			q.Add(logger, p)
			if err := q.AddUnschedulableIfNotPresent(logger, popAndReject(t, q, "p", []string{"A"}, nil), 1); err != nil {
				t.Fatal(err)
			}
		}, want: QueueActive},
		{name: "a pod in backoffQ moves to activeQ", setup: func(t *testing.T, q *PriorityQueue, p *v1.Pod) {
			q.Add(logger, p)
			if err := q.AddUnschedulableIfNotPresent(logger, popAndReject(t, q, "p", nil, nil), 1); err != nil {
				t.Fatal(err)
			}
		}, want: QueueActive},
		{name: "an unknown pod is ignored", setup: func(*testing.T, *PriorityQueue, *v1.Pod) {}, want: "none"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := newRecordingMetrics()
			q, _ := newQueue(t, newFramework(t, defaultFilters()), WithMetrics(m))
			p := pod("p").Obj()
			tt.setup(t, q, p)
			q.Activate(logger, map[string]*v1.Pod{"default/p": p})
			if got := where(q, p); got != tt.want {
				t.Fatalf("pod is in %s, want %s", got, tt.want)
			}
			if tt.want == QueueActive && m.incoming[[2]string{QueueActive, EventForceActivate}] != 1 {
				t.Errorf("incoming{active,ForceActivate} = %d, want 1", m.incoming[[2]string{QueueActive, EventForceActivate}])
			}
		})
	}
}

func TestDelete(t *testing.T) {
	q, _ := newQueue(t, newFramework(t, defaultFilters()))
	a, b, c := pod("a").Priority(2).Obj(), pod("b").Priority(1).Obj(), pod("c").Obj()
	for _, p := range []*v1.Pod{a, b, c} {
		q.Add(logger, p)
	}
	if err := q.AddUnschedulableIfNotPresent(logger, popAndReject(t, q, "a", []string{"A"}, nil), 1); err != nil {
		t.Fatal(err)
	}
	if err := q.AddUnschedulableIfNotPresent(logger, popAndReject(t, q, "b", nil, nil), 2); err != nil {
		t.Fatal(err)
	}
	q.AddNominatedPod(logger, schedcore.NewPodInfo(c), &schedcore.NominatingInfo{NominatingMode: schedcore.ModeOverride, NominatedNodeName: "n1"})
	for _, p := range []*v1.Pod{a, b, c} {
		q.Delete(p)
	}
	if pods, s := q.PendingPods(); len(pods) != 0 || s != "activeQ:0; backoffQ:0; unschedulableEntities:0" {
		t.Errorf("PendingPods after deleting all: %v %q", names(pods), s)
	}
	if got := q.NominatedPodsForNode("n1"); len(got) != 0 {
		t.Errorf("nomination survived Delete: %v", got)
	}
}

func TestLeftoverFlushHonoursTheMaximum(t *testing.T) {
	tests := []struct {
		name  string
		max   time.Duration
		after time.Duration
		want  string
	}{
		{name: "a pod is kept until the maximum has passed", max: time.Minute, after: time.Minute, want: QueueUnschedulable},
		{name: "a pod left longer than the maximum goes to activeQ once its backoff is over", max: time.Minute, after: time.Minute + time.Second, want: QueueActive},
		{name: "a pod flushed within its backoff goes to backoffQ", max: time.Second, after: 1100 * time.Millisecond, want: QueueBackoff},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			q, clk := newQueue(t, newFramework(t, defaultFilters()), WithPodMaxInUnschedulablePodsDuration(tt.max), WithPodInitialBackoffDuration(2*time.Second))
			p := pod("p").Obj()
			q.Add(logger, p)
			if err := q.AddUnschedulableIfNotPresent(logger, popAndReject(t, q, "p", []string{"A"}, nil), 1); err != nil {
				t.Fatal(err)
			}
			clk.Step(tt.after)
			q.flushUnschedulablePodsLeftover(logger)
			if got := where(q, p); got != tt.want {
				t.Errorf("pod is in %s, want %s", got, tt.want)
			}
			if tt.want != QueueUnschedulable {
				if qpi, _ := q.GetPod("p", "default"); !qpi.WasFlushedFromUnschedulable {
					t.Errorf("WasFlushedFromUnschedulable not set")
				}
			}
		})
	}
}
