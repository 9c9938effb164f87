package replay

import (
	"math"
	"slices"
	"sort"
	"time"

	v1 "k8s.io/api/core/v1"

	"github.com/kubectl-sched/kubectl-sched/internal/engine"
	"github.com/kubectl-sched/kubectl-sched/schedcore"
)

// maxShapes bounds the typical pod shapes fragmentation is measured with:
// the most common request vectors of the trace.
const maxShapes = 256

// busiest is how many nodes Result.Busiest lists.
const busiest = 20

type podState uint8

const (
	psNotArrived podState = iota
	psPending
	psRunning
	psDeparted
	psDeleted
	psPreempted
)

type podRec struct {
	name     string
	arrive   time.Time
	req      []int64
	state    podState
	node     int
	attempts int
	placedAt time.Time
	lastMsg  string
	plugins  []string
	// devices are the DRA devices the pod holds while running.
	devices []deviceUse
}

type nodeRec struct {
	name    string
	alloc   []int64
	used    []int64
	pods    int
	maxPods int
	present bool
	placed  int
	// frag is the node's current share of each resource's fragmentation.
	frag []float64
	// integral sums used/alloc × seconds per resource since the start;
	// since is when used last changed.
	integral []float64
	since    time.Time
}

// recorder keeps the books of a replay: the pods' and nodes' states, the
// event log and the samples. It is fed by the driver's hooks and is not
// safe for concurrent use (a run is one goroutine).
type recorder struct {
	start    time.Time
	features schedcore.Features
	names    []string
	index    map[v1.ResourceName]int

	pods    []podRec
	podIdx  map[podKey]int
	nodes   []nodeRec
	nodeIdx map[string]int

	shapes  *Shapes
	dirty   []int
	isDirty []bool

	capacity, allocated, arrivedDemand []int64
	fragTotal                          []float64

	arrived, pending, running int
	attempts, failed          int
	reasons                   map[string]int

	placedN, departed, deleted, preempted int
	events                                []Event
	nodeEvents                            []NodeEvent
	series                                Series
	probes                                []Probe

	// localPools are the node-local DRA pools ("driver/pool") whose
	// devices the device columns count; deviceHolders counts the running
	// pods holding each device ("driver/pool/device").
	localPools    map[string]bool
	deviceHolders map[string]int
	// deviceCols are the device columns (no fragmentation).
	deviceCols []int
	// noFailures leaves the unschedulable events out of the log.
	noFailures bool
}

// Probe adds a column to the series: Fn is called at every sample with the
// virtual time and the engine's snapshot (up to date), and its value is
// recorded under Name. Probes let a caller measure what only it knows
// (the FGD sweep's per-GPU fragmentation) without a second pass.
type Probe struct {
	Name string
	Fn   func(now time.Time, snap *schedcore.Snapshot) float64
}

func newRecorder(tr *Trace, f schedcore.Features, probes []Probe) *recorder {
	r := &recorder{
		start: tr.Start, features: f, index: map[v1.ResourceName]int{},
		podIdx: make(map[podKey]int, len(tr.Pods)), nodeIdx: make(map[string]int, len(tr.Nodes)),
		reasons: map[string]int{}, probes: probes,
	}
	// The resources: cpu and memory, and every scalar (extended) resource
	// of a node or a pod.
	reqs := make([]schedcore.Resource, len(tr.Pods))
	scalars := map[v1.ResourceName]bool{}
	for i, p := range tr.Pods {
		reqs[i] = schedcore.ComputePodResource(p.Pod, f).Resource
		for k := range reqs[i].ScalarResources {
			scalars[k] = true
		}
	}
	allocs := make([]*schedcore.Resource, len(tr.Nodes))
	devices, pools := nodeDevices(tr.Objects)
	r.localPools, r.deviceHolders = pools, map[string]int{}
	for i, n := range tr.Nodes {
		allocs[i] = schedcore.NewResource(n.Node.Status.Allocatable)
		for d, count := range devices[n.Node.Name] {
			allocs[i].SetScalar(v1.ResourceName(DeviceColumn(d)), count)
		}
		for k := range allocs[i].ScalarResources {
			scalars[k] = true
		}
	}
	r.names = []string{string(v1.ResourceCPU), string(v1.ResourceMemory)}
	extra := make([]string, 0, len(scalars))
	for k := range scalars {
		extra = append(extra, string(k))
	}
	sort.Strings(extra)
	r.names = append(r.names, extra...)
	for i, n := range r.names {
		r.index[v1.ResourceName(n)] = i
	}
	for _, d := range deviceDrivers(devices) {
		r.deviceCols = append(r.deviceCols, r.index[v1.ResourceName(DeviceColumn(d))])
	}
	nr := len(r.names)
	r.capacity, r.allocated, r.arrivedDemand = make([]int64, nr), make([]int64, nr), make([]int64, nr)
	r.fragTotal = make([]float64, nr)

	vecs := make([][]int64, len(tr.Pods))
	for i, p := range tr.Pods {
		vecs[i] = r.vector(&reqs[i])
		r.pods = append(r.pods, podRec{name: schedcore.PodName(p.Pod), arrive: p.Arrive, req: vecs[i], node: -1})
		r.podIdx[podKey{p.Pod.Namespace, p.Pod.Name}] = i
	}
	r.shapes = NewShapes(vecs)

	for i, n := range tr.Nodes {
		maxPods := allocs[i].AllowedPodNumber
		r.nodes = append(r.nodes, nodeRec{
			name: n.Node.Name, alloc: r.vector(allocs[i]), used: make([]int64, nr), maxPods: maxPods,
			frag: make([]float64, nr), integral: make([]float64, nr), since: tr.Start,
		})
		r.nodeIdx[n.Node.Name] = i
	}
	r.isDirty = make([]bool, len(r.nodes))
	r.series.Resources = make([]ResourceSeries, nr)
	for i, n := range r.names {
		r.series.Resources[i].Name = n
	}
	for _, p := range probes {
		r.series.Extra = append(r.series.Extra, ExtraSeries{Name: p.Name})
	}
	return r
}

func (r *recorder) vector(res *schedcore.Resource) []int64 {
	v := make([]int64, len(r.names))
	v[0], v[1] = res.MilliCPU, res.Memory
	for k, q := range res.ScalarResources {
		if i, ok := r.index[k]; ok {
			v[i] = q
		}
	}
	return v
}

func (r *recorder) pod(p *v1.Pod) (int, bool) {
	i, ok := r.podIdx[podKey{p.Namespace, p.Name}]
	return i, ok
}

// podKey is a pod's namespace and name: a key made without joining them
// (the recorder looks a pod up at each of its attempts).
type podKey struct{ ns, name string }

func (r *recorder) markDirty(n int) {
	if !r.isDirty[n] {
		r.isDirty[n] = true
		r.dirty = append(r.dirty, n)
	}
}

// account adds sign × the pod's requests to its node at now.
func (r *recorder) account(now time.Time, pi, ni, sign int) {
	n := &r.nodes[ni]
	r.integrate(n, now)
	for k, q := range r.pods[pi].req {
		n.used[k] += int64(sign) * q
		if n.present {
			r.allocated[k] += int64(sign) * q
		}
	}
	r.accountDevices(n, r.pods[pi].devices, sign)
	n.pods += sign
	r.markDirty(ni)
}

func (r *recorder) integrate(n *nodeRec, now time.Time) {
	dt := now.Sub(n.since).Seconds()
	if dt > 0 && n.present {
		for k := range n.used {
			if n.alloc[k] > 0 {
				n.integral[k] += dt * float64(n.used[k]) / float64(n.alloc[k])
			}
		}
	}
	n.since = now
}

func (r *recorder) nodeArrived(now time.Time, name string, logged bool) {
	ni, ok := r.nodeIdx[name]
	if !ok || r.nodes[ni].present {
		return
	}
	n := &r.nodes[ni]
	r.integrate(n, now)
	n.present = true
	for k := range n.alloc {
		r.capacity[k] += n.alloc[k]
		r.allocated[k] += n.used[k]
	}
	r.markDirty(ni)
	if logged {
		r.nodeEvents = append(r.nodeEvents, NodeEvent{Time: now, Node: name, Type: NodeAdded})
	}
}

func (r *recorder) nodeLeft(now time.Time, name string) {
	ni, ok := r.nodeIdx[name]
	if !ok || !r.nodes[ni].present {
		return
	}
	n := &r.nodes[ni]
	r.integrate(n, now)
	n.present = false
	for k := range n.alloc {
		r.capacity[k] -= n.alloc[k]
		r.allocated[k] -= n.used[k]
	}
	r.markDirty(ni)
	r.nodeEvents = append(r.nodeEvents, NodeEvent{Time: now, Node: name, Type: NodeRemoved})
}

// arrivedPending records a pending pod's arrival.
func (r *recorder) arrivedPending(pi int) {
	p := &r.pods[pi]
	p.state = psPending
	r.arrived++
	r.pending++
	for k, q := range p.req {
		r.arrivedDemand[k] += q
	}
}

// arrivedBound records a pod that arrives already running on node,
// holding devices.
func (r *recorder) arrivedBound(now time.Time, pi int, node string, devices []engine.PodDevice) {
	p := &r.pods[pi]
	p.devices = r.heldDevices(devices)
	r.arrived++
	for k, q := range p.req {
		r.arrivedDemand[k] += q
	}
	ni, ok := r.nodeIdx[node]
	if !ok {
		// A node the trace does not have: the pod runs nowhere we count.
		p.state = psRunning
		r.running++
		return
	}
	p.state, p.node = psRunning, ni
	r.running++
	r.account(now, pi, ni, 1)
}

func (r *recorder) leavePending(pi int) {
	p := &r.pods[pi]
	r.pending--
	for _, pl := range p.plugins {
		r.reasons[pl]--
	}
	p.plugins = nil
}

func (r *recorder) placed(now time.Time, pi int, node string, attempt int, devices []engine.PodDevice) {
	p := &r.pods[pi]
	if p.state != psPending {
		return
	}
	p.devices = r.heldDevices(devices)
	r.leavePending(pi)
	r.attempts++
	r.placedN++
	p.state, p.placedAt, p.attempts = psRunning, now, attempt
	r.running++
	wait := now.Sub(p.arrive).Seconds()
	ev := Event{Time: now, Pod: p.name, Type: EventPlaced, Node: node, WaitSeconds: &wait, Attempt: attempt}
	if ni, ok := r.nodeIdx[node]; ok {
		p.node = ni
		r.nodes[ni].placed++
		ev.Node = r.nodes[ni].name
		r.account(now, pi, ni, 1)
	}
	r.events = append(r.events, ev)
}

func (r *recorder) unschedulable(now time.Time, pi int, msg string, plugins []string, attempt int) {
	p := &r.pods[pi]
	r.attempts++
	r.failed++
	p.attempts = attempt
	if slices.Equal(plugins, p.plugins) {
		// The last attempt's list, shared (nothing writes into it): a pod
		// that does not fit fails alike attempt after attempt, and the
		// events of a long replay are most of its memory.
		plugins = p.plugins
	}
	if p.state == psPending {
		for _, pl := range p.plugins {
			r.reasons[pl]--
		}
		for _, pl := range plugins {
			if _, ok := r.reasons[pl]; !ok {
				r.series.PendingReasons = append(r.series.PendingReasons, ReasonSeries{Plugin: pl, Pods: make([]int, len(r.series.Time))})
			}
			r.reasons[pl]++
		}
		p.plugins = plugins
	}
	p.lastMsg = msg
	if !r.noFailures {
		r.events = append(r.events, Event{Time: now, Pod: p.name, Type: EventUnschedulable, Message: msg, Plugins: plugins, Attempt: attempt})
	}
}

// gone records a pod that left: departed or preempted when running,
// deleted when pending.
func (r *recorder) gone(now time.Time, pi int, typ, msg, preemptor string) {
	p := &r.pods[pi]
	ev := Event{Time: now, Pod: p.name, Type: typ, Message: msg, Preemptor: preemptor}
	switch p.state {
	case psRunning:
		r.running--
		if p.node >= 0 {
			ev.Node = r.nodes[p.node].name
			r.account(now, pi, p.node, -1)
		}
	case psPending:
		r.leavePending(pi)
	default:
		return
	}
	switch typ {
	case EventDeparted:
		p.state = psDeparted
		r.departed++
	case EventDeleted:
		p.state = psDeleted
		r.deleted++
	case EventPreempted:
		p.state = psPreempted
		r.preempted++
	}
	r.events = append(r.events, ev)
}

// runningOn lists the trace pods running on a node.
func (r *recorder) runningOn(node string) []int {
	ni, ok := r.nodeIdx[node]
	if !ok {
		return nil
	}
	var out []int
	for i := range r.pods {
		if r.pods[i].state == psRunning && r.pods[i].node == ni {
			out = append(out, i)
		}
	}
	return out
}

// refreshFragmentation recomputes the dirty nodes' shares.
func (r *recorder) refreshFragmentation() {
	nr := len(r.names)
	free := make([]int64, nr)
	unusable := make([]int, nr)
	frag := make([]float64, nr)
	for _, ni := range r.dirty {
		n := &r.nodes[ni]
		r.isDirty[ni] = false
		for k := range n.frag {
			r.fragTotal[k] -= n.frag[k]
			n.frag[k] = 0
		}
		if !n.present {
			continue
		}
		for k := range free {
			free[k] = n.alloc[k] - n.used[k]
		}
		r.shapes.Fragmentation(free, n.maxPods-n.pods >= 1, unusable, frag)
		for _, k := range r.deviceCols {
			frag[k] = 0
		}
		for k := range n.frag {
			n.frag[k] = frag[k]
			r.fragTotal[k] += frag[k]
		}
	}
	r.dirty = r.dirty[:0]
}

// sample appends one value to every column.
func (r *recorder) sample(now time.Time, snap func() *schedcore.Snapshot) {
	r.refreshFragmentation()
	s := &r.series
	s.Time = append(s.Time, now.Sub(r.start).Seconds())
	s.Arrived = append(s.Arrived, r.arrived)
	s.Pending = append(s.Pending, r.pending)
	s.Running = append(s.Running, r.running)
	s.Attempts = append(s.Attempts, r.attempts)
	s.FailedAttempts = append(s.FailedAttempts, r.failed)
	for k := range s.Resources {
		rs := &s.Resources[k]
		rs.Capacity = append(rs.Capacity, r.capacity[k])
		rs.Allocated = append(rs.Allocated, r.allocated[k])
		rs.ArrivedDemand = append(rs.ArrivedDemand, r.arrivedDemand[k])
		rs.Fragmentation = append(rs.Fragmentation, math.Max(r.fragTotal[k], 0))
	}
	for i := range s.PendingReasons {
		rs := &s.PendingReasons[i]
		rs.Pods = append(rs.Pods, r.reasons[rs.Plugin])
	}
	if len(r.probes) > 0 {
		sn := snap()
		for i, p := range r.probes {
			s.Extra[i].Values = append(s.Extra[i].Values, p.Fn(now, sn))
		}
	}
}
