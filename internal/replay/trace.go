// Package replay runs a workload over time through the engine on a virtual
// clock: pods and nodes arrive and leave at their trace times, the real
// scheduling queue (activeQ, backoff, the unschedulable pool, queueing
// hints, the periodic flushes) and the real scheduling cycle run between
// events, and the run is recorded as an event log and time series
// (allocation, pending pods, attempts, wait times, fragmentation).
//
// A trace is ordinary Kubernetes objects (see FromCluster): a pod arrives
// at metadata.creationTimestamp and leaves at metadata.deletionTimestamp.
// Traces can also be built in memory (Trace, Pod, Node): a parameter sweep
// builds one trace and runs it many times, concurrently (RunAll).
package replay

import (
	"errors"
	"fmt"
	"sort"
	"time"

	v1 "k8s.io/api/core/v1"
	schedulingv1beta1 "k8s.io/api/scheduling/v1beta1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-sched/kubectl-sched/internal/snapshot"
	"github.com/kubectl-sched/kubectl-sched/schedcore"
)

// DefaultStart is where a trace without any timestamp starts.
var DefaultStart = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// ErrInvalid marks a trace that cannot be replayed (exit code 2).
var ErrInvalid = errors.New("invalid trace")

// Trace is a workload over time. It is read-only for Run: several runs may
// share one trace concurrently.
type Trace struct {
	// Start is the virtual time the replay starts at.
	Start time.Time
	// Nodes are the cluster's nodes, present from Start unless they arrive
	// later, in trace order.
	Nodes []Node
	// Pods are every pod of the trace, in trace order: bound pods (with a
	// spec.nodeName) are running from their arrival, the others arrive
	// pending and are scheduled.
	Pods []Pod
	// PodGroups are the Workload API PodGroups that arrive or leave over
	// time, in trace order. When set, they replace Objects' PodGroups;
	// when empty, Objects' PodGroups are there from the start.
	PodGroups []PodGroup
	// Objects holds the other objects the engine reads (namespaces, PDBs,
	// storage, selector sources, PodGroups); its Nodes and Pods are not
	// used.
	Objects *snapshot.Cluster
}

// PodGroup is one Workload API PodGroup of a trace. Until it arrives its
// members wait as kube's queue keeps them (incompletePodGroupPods, with
// GenericWorkload on); once it leaves, its pending members wait again.
type PodGroup struct {
	PodGroup *schedulingv1beta1.PodGroup
	// Arrive is when it is created; at or before Start: there from the
	// start.
	Arrive time.Time
	// Leave is when it is deleted; zero: never.
	Leave  time.Time
	Origin string
}

// Pod is one pod of a trace.
type Pod struct {
	Pod *v1.Pod
	// Arrive is when the pod is created; never before the trace's Start.
	Arrive time.Time
	// Leave is when it is deleted; zero: never.
	Leave time.Time
	// Origin is where it was read ("trace.yaml:12"), for messages.
	Origin string
}

// Node is one node of a trace.
type Node struct {
	Node *v1.Node
	// Arrive is when the node joins; at or before Start: present from the
	// start.
	Arrive time.Time
	// Leave is when it is deleted; zero: never. Its pods are deleted then,
	// as the pod garbage collector does.
	Leave  time.Time
	Origin string
}

// FromCluster reads a trace out of loaded objects:
//   - a pod arrives at metadata.creationTimestamp and, if it has a
//     metadata.deletionTimestamp, leaves then (if it is still pending then,
//     it is deleted from the queue);
//   - nodes and PodGroups arrive and leave the same way;
//   - the trace starts at the earliest arrival of a pending pod or, when
//     no pending pod has a creationTimestamp, once every other object is
//     there (the latest creationTimestamp); objects without a
//     creationTimestamp are there from the start, and so are nodes and
//     bound pods created before it;
//   - Succeeded and Failed pods hold nothing and are left out.
//
// A departure before its arrival and a pod or node named twice are errors
// naming the file and line. Pods without spec.priority get their
// priorityClassName's priority, as in a dry-run (Cluster.ResolvePriorities:
// the pods are modified, the warnings added to cl.Warnings).
func FromCluster(cl *snapshot.Cluster) (*Trace, error) {
	tr := &Trace{Objects: cl}
	cl.ResolvePriorities()
	where := func(obj any) string {
		if o, ok := cl.OriginOf(obj); ok {
			return o.String()
		}
		return "trace"
	}
	first, found := time.Time{}, false
	for _, p := range cl.Pods {
		if p.Spec.NodeName == "" && !p.CreationTimestamp.IsZero() && (!found || p.CreationTimestamp.Time.Before(first)) {
			first, found = p.CreationTimestamp.Time, true
		}
	}
	if !found {
		// No pending pod has a time: they arrive once everything else
		// is there, as in a dry-run of the same objects.
		for _, p := range cl.Pods {
			if p.CreationTimestamp.Time.After(first) {
				first, found = p.CreationTimestamp.Time, true
			}
		}
		for _, n := range cl.Nodes {
			if n.CreationTimestamp.Time.After(first) {
				first, found = n.CreationTimestamp.Time, true
			}
		}
	}
	tr.Start = first
	if !found {
		// No times at all: everything is there at once.
		tr.Start = DefaultStart
	}
	seenNodes := map[string]string{}
	for _, n := range cl.Nodes {
		w := where(n)
		if prev, ok := seenNodes[n.Name]; ok {
			return nil, fmt.Errorf("%s: Node %s: %w: also at %s", w, n.Name, ErrInvalid, prev)
		}
		seenNodes[n.Name] = w
		arrive, leave, err := lifetime(n.CreationTimestamp.Time, n.DeletionTimestamp, tr.Start)
		if err != nil {
			return nil, fmt.Errorf("%s: Node %s: %w: %v", w, n.Name, ErrInvalid, err)
		}
		tr.Nodes = append(tr.Nodes, Node{Node: n, Arrive: arrive, Leave: leave, Origin: w})
	}
	seenPods := map[string]string{}
	for _, p := range cl.Pods {
		if p.Status.Phase == v1.PodSucceeded || p.Status.Phase == v1.PodFailed {
			continue
		}
		w := where(p)
		k := schedcore.PodName(p)
		if prev, ok := seenPods[k]; ok {
			return nil, fmt.Errorf("%s: Pod %s: %w: also at %s", w, k, ErrInvalid, prev)
		}
		seenPods[k] = w
		arrive, leave, err := lifetime(p.CreationTimestamp.Time, p.DeletionTimestamp, tr.Start)
		if err != nil {
			return nil, fmt.Errorf("%s: Pod %s: %w: %v", w, k, ErrInvalid, err)
		}
		tr.Pods = append(tr.Pods, Pod{Pod: p, Arrive: arrive, Leave: leave, Origin: w})
	}
	seenGroups := map[string]string{}
	for _, pg := range cl.Workloads.PodGroups {
		w := where(pg)
		k := pg.Namespace + "/" + pg.Name
		if prev, ok := seenGroups[k]; ok {
			return nil, fmt.Errorf("%s: PodGroup %s: %w: also at %s", w, k, ErrInvalid, prev)
		}
		seenGroups[k] = w
		arrive, leave, err := lifetime(pg.CreationTimestamp.Time, pg.DeletionTimestamp, tr.Start)
		if err != nil {
			return nil, fmt.Errorf("%s: PodGroup %s: %w: %v", w, k, ErrInvalid, err)
		}
		tr.PodGroups = append(tr.PodGroups, PodGroup{PodGroup: pg, Arrive: arrive, Leave: leave, Origin: w})
	}
	return tr, nil
}

// lifetime returns when an object arrives and leaves (zero: never), given
// the trace's start.
func lifetime(created time.Time, deleted *metav1.Time, start time.Time) (time.Time, time.Time, error) {
	arrive := created
	if arrive.IsZero() || arrive.Before(start) {
		arrive = start
	}
	if deleted == nil || deleted.IsZero() {
		return arrive, time.Time{}, nil
	}
	leave := deleted.Time
	if !created.IsZero() && leave.Before(created) {
		return time.Time{}, time.Time{}, fmt.Errorf("metadata.deletionTimestamp %s is before metadata.creationTimestamp %s", leave.UTC().Format(time.RFC3339), created.UTC().Format(time.RFC3339))
	}
	if leave.Before(arrive) {
		leave = arrive
	}
	return arrive, leave, nil
}

// Validate checks a trace built in memory: every pod and node is set,
// named once, and leaves no earlier than it arrives.
func (tr *Trace) Validate() error {
	seen := map[string]bool{}
	for i, n := range tr.Nodes {
		if n.Node == nil {
			return fmt.Errorf("nodes[%d]: %w: no node", i, ErrInvalid)
		}
		if seen[n.Node.Name] {
			return fmt.Errorf("%s: Node %s: %w: named twice", originOr(n.Origin, i, "nodes"), n.Node.Name, ErrInvalid)
		}
		seen[n.Node.Name] = true
		if !n.Leave.IsZero() && n.Leave.Before(n.Arrive) {
			return fmt.Errorf("%s: Node %s: %w: leaves at %s, before it arrives at %s", originOr(n.Origin, i, "nodes"), n.Node.Name, ErrInvalid, n.Leave.UTC().Format(time.RFC3339), n.Arrive.UTC().Format(time.RFC3339))
		}
	}
	seen = map[string]bool{}
	for i, g := range tr.PodGroups {
		if g.PodGroup == nil {
			return fmt.Errorf("podGroups[%d]: %w: no PodGroup", i, ErrInvalid)
		}
		k := g.PodGroup.Namespace + "/" + g.PodGroup.Name
		if seen[k] {
			return fmt.Errorf("%s: PodGroup %s: %w: named twice", originOr(g.Origin, i, "podGroups"), k, ErrInvalid)
		}
		seen[k] = true
		if !g.Leave.IsZero() && g.Leave.Before(g.Arrive) {
			return fmt.Errorf("%s: PodGroup %s: %w: leaves at %s, before it arrives at %s", originOr(g.Origin, i, "podGroups"), k, ErrInvalid, g.Leave.UTC().Format(time.RFC3339), g.Arrive.UTC().Format(time.RFC3339))
		}
	}
	seen = map[string]bool{}
	for i, p := range tr.Pods {
		if p.Pod == nil {
			return fmt.Errorf("pods[%d]: %w: no pod", i, ErrInvalid)
		}
		k := schedcore.PodName(p.Pod)
		if seen[k] {
			return fmt.Errorf("%s: Pod %s: %w: named twice", originOr(p.Origin, i, "pods"), k, ErrInvalid)
		}
		seen[k] = true
		if p.Arrive.Before(tr.Start) {
			return fmt.Errorf("%s: Pod %s: %w: arrives at %s, before the trace starts at %s", originOr(p.Origin, i, "pods"), k, ErrInvalid, p.Arrive.UTC().Format(time.RFC3339), tr.Start.UTC().Format(time.RFC3339))
		}
		if !p.Leave.IsZero() && p.Leave.Before(p.Arrive) {
			return fmt.Errorf("%s: Pod %s: %w: leaves at %s, before it arrives at %s", originOr(p.Origin, i, "pods"), k, ErrInvalid, p.Leave.UTC().Format(time.RFC3339), p.Arrive.UTC().Format(time.RFC3339))
		}
	}
	return nil
}

func originOr(origin string, i int, list string) string {
	if origin != "" {
		return origin
	}
	return fmt.Sprintf("%s[%d]", list, i)
}

// End is the last arrival or departure of the trace (Start if none).
func (tr *Trace) End() time.Time {
	end := tr.Start
	for _, p := range tr.Pods {
		end = later(end, p.Arrive, p.Leave)
	}
	for _, n := range tr.Nodes {
		end = later(end, n.Arrive, n.Leave)
	}
	for _, g := range tr.PodGroups {
		end = later(end, g.Arrive, g.Leave)
	}
	return end
}

func later(t time.Time, ts ...time.Time) time.Time {
	for _, x := range ts {
		if x.After(t) {
			t = x
		}
	}
	return t
}

// step kinds, in the order they apply at one instant: capacity that
// appears or frees up is there for the pods that arrive at that instant,
// and so is a PodGroup created then; a PodGroup deleted at an instant
// goes after the pods that arrive then.
const (
	stepNodeArrive = iota
	stepPodLeave
	stepNodeLeave
	stepGroupArrive
	stepPodArrive
	// stepPodLeaveAtArrival is the departure of a pod that leaves at the
	// instant it arrives: after its arrival.
	stepPodLeaveAtArrival
	stepGroupLeave
)

// step is one arrival or departure on the timeline.
type step struct {
	at   time.Time
	kind int
	// i indexes Trace.Pods, Trace.Nodes or Trace.PodGroups.
	i int
}

// timeline lists the trace's arrivals and departures after the start in
// the order they apply: by time, then kind, then (pods arriving together)
// namespace/name, then trace order. Nodes and PodGroups that
// are there from the start are not on it.
func (tr *Trace) timeline() []step {
	steps := make([]step, 0, 2*len(tr.Pods))
	for i, n := range tr.Nodes {
		if n.Arrive.After(tr.Start) {
			steps = append(steps, step{n.Arrive, stepNodeArrive, i})
		}
		if !n.Leave.IsZero() {
			steps = append(steps, step{n.Leave, stepNodeLeave, i})
		}
	}
	for i, g := range tr.PodGroups {
		if g.Arrive.After(tr.Start) {
			steps = append(steps, step{g.Arrive, stepGroupArrive, i})
		}
		if !g.Leave.IsZero() {
			steps = append(steps, step{g.Leave, stepGroupLeave, i})
		}
	}
	for i, p := range tr.Pods {
		steps = append(steps, step{p.Arrive, stepPodArrive, i})
		switch {
		case p.Leave.IsZero():
		case p.Leave.Equal(p.Arrive):
			steps = append(steps, step{p.Leave, stepPodLeaveAtArrival, i})
		default:
			steps = append(steps, step{p.Leave, stepPodLeave, i})
		}
	}
	sort.SliceStable(steps, func(a, b int) bool {
		sa, sb := steps[a], steps[b]
		if !sa.at.Equal(sb.at) {
			return sa.at.Before(sb.at)
		}
		if sa.kind != sb.kind {
			return sa.kind < sb.kind
		}
		if sa.kind == stepPodArrive {
			// As the dry-run queues pods created at the same time.
			na, nb := schedcore.PodName(tr.Pods[sa.i].Pod), schedcore.PodName(tr.Pods[sb.i].Pod)
			if na != nb {
				return na < nb
			}
		}
		return sa.i < sb.i
	})
	return steps
}
