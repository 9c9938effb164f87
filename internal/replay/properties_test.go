package replay_test

import (
	"fmt"
	"sort"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-sched/kubectl-sched/internal/gen/openb"
	"github.com/kubectl-sched/kubectl-sched/internal/replay"
	"github.com/kubectl-sched/kubectl-sched/internal/snapshot"
	"github.com/kubectl-sched/kubectl-sched/schedcore"
)

const gpuspecPods = "../../testdata/openb/openb_pod_list_gpuspec33.csv"

// contended is a trace where pods wait: openb's gpuspec33 pods (a third
// of the GPU pods restricted to GPU models by node affinity) on every 40th
// node, arriving a second apart and staying a twentieth of their trace
// lifetime, at most six minutes. Only resources and node affinity decide
// where such pods fit, which is what the checks below re-derive.
func contended(t testing.TB, pods int) *replay.Trace {
	t.Helper()
	o := openb.Options{Limit: pods, Departures: true}
	nodes, ps, err := openb.LoadFiles(openbNodes, gpuspecPods, o)
	if err != nil {
		t.Fatal(err)
	}
	cl := &snapshot.Cluster{Namespaces: []*v1.Namespace{openb.NamespaceObject(o)}}
	for i, n := range nodes {
		if i%40 == 0 {
			cl.Nodes = append(cl.Nodes, n)
		}
	}
	for i, p := range ps {
		life := p.DeletionTimestamp.Sub(p.CreationTimestamp.Time) / 20
		life = min(life, 6*time.Minute)
		arrive := openb.Epoch.Add(time.Duration(i) * time.Second)
		p.CreationTimestamp = metav1.NewTime(arrive)
		leave := metav1.NewTime(arrive.Add(life))
		p.DeletionTimestamp = &leave
		cl.Pods = append(cl.Pods, p)
	}
	return mustTrace(t, cl)
}

// state is the cluster rebuilt from the event log alone.
type state struct {
	alloc map[string]v1.ResourceList
	nodes map[string]*v1.Node
	used  map[string]map[v1.ResourceName]int64
	count map[string]int
	where map[string]string
	specs map[string]*v1.Pod
}

func newState(tr *replay.Trace) *state {
	s := &state{alloc: map[string]v1.ResourceList{}, nodes: map[string]*v1.Node{}, used: map[string]map[v1.ResourceName]int64{},
		count: map[string]int{}, where: map[string]string{}, specs: map[string]*v1.Pod{}}
	for _, n := range tr.Nodes {
		s.alloc[n.Node.Name] = n.Node.Status.Allocatable
		s.nodes[n.Node.Name] = n.Node
		s.used[n.Node.Name] = map[v1.ResourceName]int64{}
	}
	for _, p := range tr.Pods {
		s.specs[schedcore.PodName(p.Pod)] = p.Pod
	}
	return s
}

var checked = []v1.ResourceName{v1.ResourceCPU, v1.ResourceMemory, openb.GPUResource}

func request(p *v1.Pod, r v1.ResourceName) int64 {
	q := p.Spec.Containers[0].Resources.Requests[r]
	if r == v1.ResourceCPU {
		return q.MilliValue()
	}
	return q.Value()
}

func capacity(alloc v1.ResourceList, r v1.ResourceName) int64 {
	q := alloc[r]
	if r == v1.ResourceCPU {
		return q.MilliValue()
	}
	return q.Value()
}

// fits re-derives NodeResourcesFit and NodeAffinity for openb pods.
func (s *state) fits(p *v1.Pod, node string) bool {
	if s.count[node]+1 > int(capacity(s.alloc[node], v1.ResourcePods)) {
		return false
	}
	for _, r := range checked {
		if req := request(p, r); req > 0 && s.used[node][r]+req > capacity(s.alloc[node], r) {
			return false
		}
	}
	if a := p.Spec.Affinity; a != nil && a.NodeAffinity != nil {
		models := a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms[0].MatchExpressions[0].Values
		ok := false
		for _, m := range models {
			ok = ok || s.nodes[node].Labels[openb.LabelGPUModel] == m
		}
		return ok
	}
	return true
}

func (s *state) anyFits(p *v1.Pod) string {
	names := make([]string, 0, len(s.nodes))
	for n := range s.nodes {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		if s.fits(p, n) {
			return n
		}
	}
	return ""
}

func (s *state) apply(t *testing.T, e replay.Event) {
	p := s.specs[e.Pod]
	switch e.Type {
	case replay.EventPlaced:
		if !s.fits(p, e.Node) {
			t.Errorf("%s: %s placed on %s, which cannot hold it: used %v of %v, %d pods", e.Time.Format(time.RFC3339), e.Pod, e.Node, s.used[e.Node], s.alloc[e.Node], s.count[e.Node])
		}
		for _, r := range checked {
			s.used[e.Node][r] += request(p, r)
		}
		s.count[e.Node]++
		s.where[e.Pod] = e.Node
	case replay.EventDeparted, replay.EventPreempted:
		n := s.where[e.Pod]
		if n == "" || n != e.Node {
			t.Errorf("%s: %s %s from %q, but it runs on %q", e.Time.Format(time.RFC3339), e.Pod, e.Type, e.Node, n)
			return
		}
		for _, r := range checked {
			s.used[n][r] -= request(p, r)
		}
		s.count[n]--
		delete(s.where, e.Pod)
	}
}

func TestReplayNeverOvercommitsAndNeverLeavesAPodPendingThatANodeCouldHold(t *testing.T) {
	tr := contended(t, 700)
	res := mustRun(t, tr, defaults(t))
	s := newState(tr)
	// Pods pending after each instant: arrived, not placed, not deleted.
	arrivals := make([]replay.Pod, len(tr.Pods))
	copy(arrivals, tr.Pods)
	sort.SliceStable(arrivals, func(i, j int) bool { return arrivals[i].Arrive.Before(arrivals[j].Arrive) })
	pending := map[string]bool{}
	next := 0
	failures, waited := 0, 0
	endInstant := func(now time.Time) {
		for pod := range pending {
			if n := s.anyFits(s.specs[pod]); n != "" {
				t.Errorf("%s: %s left pending while %s could hold it", now.Format(time.RFC3339), pod, n)
			}
		}
	}
	for i, e := range res.Events {
		for next < len(arrivals) && !arrivals[next].Arrive.After(e.Time) {
			pending[schedcore.PodName(arrivals[next].Pod)] = true
			next++
		}
		switch e.Type {
		case replay.EventUnschedulable:
			failures++
			if n := s.anyFits(s.specs[e.Pod]); n != "" {
				t.Errorf("%s: %s reported unschedulable (%s) while %s could hold it", e.Time.Format(time.RFC3339), e.Pod, e.Message, n)
			}
		case replay.EventPlaced:
			if *e.WaitSeconds > 0 {
				waited++
			}
			delete(pending, e.Pod)
		case replay.EventDeleted:
			delete(pending, e.Pod)
		}
		s.apply(t, e)
		if i+1 == len(res.Events) || !res.Events[i+1].Time.Equal(e.Time) {
			endInstant(e.Time)
		}
	}
	if failures == 0 || waited == 0 {
		t.Errorf("%d unschedulable attempts, %d pods placed after a wait: the trace must make pods wait", failures, waited)
	}
	t.Logf("%d events, %d failed attempts, %d pods placed after waiting, wait p99 %.0fs", len(res.Events), failures, waited, res.Summary.WaitP99Seconds)
}

func TestEveryPodOfTheTraceIsAccountedFor(t *testing.T) {
	tr := contended(t, 700)
	o := defaults(t)
	o.Until = 9 * time.Minute // some pods have not arrived, some still run
	res := mustRun(t, tr, o)
	s := res.Summary
	if got := s.Running + s.Departed + s.Deleted + s.Preempted + s.Pending + s.NotArrived; got != len(tr.Pods) || s.Pods != len(tr.Pods) {
		t.Errorf("running %d + departed %d + deleted %d + preempted %d + pending %d + not arrived %d = %d, want the trace's %d pods (summary says %d)",
			s.Running, s.Departed, s.Deleted, s.Preempted, s.Pending, s.NotArrived, got, len(tr.Pods), s.Pods)
	}
	if s.NotArrived == 0 || s.Running == 0 || s.Departed == 0 {
		t.Errorf("the case must stop with pods not arrived, running and departed: %+v", s)
	}
	// Each pod's events tell the same story as its final state.
	final := map[string]string{}
	for _, e := range res.Events {
		prev := final[e.Pod]
		ok := false
		switch e.Type {
		case replay.EventPlaced:
			ok = prev == "" || prev == "pending"
			final[e.Pod] = "running"
		case replay.EventUnschedulable:
			ok = prev == "" || prev == "pending"
			final[e.Pod] = "pending"
		case replay.EventDeparted, replay.EventPreempted:
			ok = prev == "running"
			final[e.Pod] = e.Type
		case replay.EventDeleted:
			ok = prev == "" || prev == "pending"
			final[e.Pod] = e.Type
		}
		if !ok {
			t.Errorf("%s: %s %s after %q", e.Time.Format(time.RFC3339), e.Pod, e.Type, prev)
		}
	}
	counts := map[string]int{}
	for _, st := range final {
		counts[st]++
	}
	pendingAtEnd := map[string]bool{}
	for _, p := range res.Pending {
		pendingAtEnd[p.Pod] = true
		if st := final[p.Pod]; st != "" && st != "pending" {
			t.Errorf("%s listed pending at the end, but its last event says %s", p.Pod, st)
		}
	}
	if counts["running"] != s.Running || counts[replay.EventDeparted] != s.Departed || counts[replay.EventDeleted] != s.Deleted || len(pendingAtEnd) != s.Pending {
		t.Errorf("the event log ends with %v and %d pending, the summary says %+v", counts, len(pendingAtEnd), s)
	}
	if len(res.Events) > 0 && res.Events[len(res.Events)-1].Time.After(s.End) {
		t.Errorf("an event at %s is after the end %s", res.Events[len(res.Events)-1].Time, s.End)
	}
	for i := 1; i < len(res.Events); i++ {
		if res.Events[i].Time.Before(res.Events[i-1].Time) {
			t.Fatalf("events out of order at %d: %s after %s", i, res.Events[i].Time, res.Events[i-1].Time)
		}
	}
}

func ExampleResourceSeries_AllocationAtDemand() {
	rs := replay.ResourceSeries{Name: "nvidia.com/gpu", Capacity: []int64{10, 10, 10}, Allocated: []int64{4, 9, 9}, ArrivedDemand: []int64{4, 10, 13}}
	at100, _ := rs.AllocationAtDemand(1.0)
	at130, _ := rs.AllocationAtDemand(1.3)
	fmt.Println(at100, at130)
	// Output: 0.9 0.9
}
