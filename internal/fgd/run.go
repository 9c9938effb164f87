package fgd

import (
	"context"
	"fmt"
	"sort"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kubectl-sched/kubectl-sched/internal/engine"
	"github.com/kubectl-sched/kubectl-sched/internal/gen/openb"
	"github.com/kubectl-sched/kubectl-sched/internal/replay"
	"github.com/kubectl-sched/kubectl-sched/internal/snapshot"
	"github.com/kubectl-sched/kubectl-sched/plugins/gpushare"
	"github.com/kubectl-sched/kubectl-sched/plugins/names"
	"github.com/kubectl-sched/kubectl-sched/schedcore"
)

// ArrivalGap is the virtual time between two arrivals of a run's replay.
// The artifact has no clock: pods arrive one after the other, each one
// placed or dropped before the next. A millisecond apart, the 10866 pods
// of a seed arrive within 11 virtual seconds, far less than the 5 minutes
// after which kube's unschedulable pool retries a pod, and the replay
// stops at the last arrival: each pod has exactly one attempt, on
// arrival, as in the artifact (RunOne checks it).
const ArrivalGap = time.Millisecond

// The probes' columns in the replay's series.
const (
	columnGPUAllocated = "gpuMilliAllocated"
	columnGPUFrag      = "gpuMilliFragmented"
)

// Run is one policy on one seed.
type Run struct {
	Policy string
	Seed   int64
	// Pods is the number of pods that arrived; Placed of them were placed.
	Pods, Placed int
	// Metrics are the artifact's metrics of the run.
	Metrics Metrics
	// Elapsed is the wall time of the replay.
	Elapsed time.Duration
	// Summary is the replay's summary.
	Summary replay.Summary
}

// Job is one run of a sweep.
type Job struct {
	Policy Policy
	Seed   int64
}

// Jobs lists every policy on n seeds from 42 (the artifact's), policy by
// policy.
func Jobs(policies []Policy, n int) []Job {
	var out []Job
	for _, p := range policies {
		for s := 0; s < n; s++ {
			out = append(out, Job{Policy: p, Seed: int64(42 + s)})
		}
	}
	return out
}

// Sweep runs the jobs, workers at a time (0: one per core), each replay
// with one goroutine per scheduling cycle, and returns the runs in job
// order. progress, when set, is called as replays end with the number
// done, from one goroutine at a time. The first error stops the sweep.
//
// A sweep holds no more than its running replays need: a run is prepared
// when a worker takes it (the DRA row's trace, its claims and slices, in
// that worker) and measured as its replay ends, after which nothing of
// the replay is kept but the Run. The jobs are taken seed by seed, the
// DRA row first (the longest), and a seed's workload and trace, shared
// by its jobs, are built by the first of them and let go when the last
// ends: at any time only the seeds being replayed are in memory.
func Sweep(ctx context.Context, t *Trace, jobs []Job, ratio float64, workers int, progress func(done, total int)) ([]*Run, error) {
	order := sweepOrder(jobs)
	seeds := map[int64]*seedWork{}
	for _, j := range jobs {
		if seeds[j.Seed] == nil {
			seeds[j.Seed] = &seedWork{}
		}
		seeds[j.Seed].left++
	}
	out := make([]*Run, len(jobs))
	err := replay.Parallel(ctx, len(jobs), workers, progress, func(ctx context.Context, k int) error {
		i := order[k]
		j := jobs[i]
		sw := seeds[j.Seed]
		w, shared := sw.get(t, ratio, j.Seed)
		defer sw.done()
		tr := shared
		if j.Policy.DRA {
			// The DRA row rewrites its trace's pods: its own trace.
			tr = replayTrace(w)
		}
		p, err := sweepPrepare(t, w, tr, j.Policy, j.Seed, 1)
		if err != nil {
			return err
		}
		res, err := replay.Run(ctx, p.trace, p.options)
		if err != nil {
			return &replay.JobError{Name: fmt.Sprintf("policy %s, seed %d", j.Policy.Name, j.Seed), Err: err}
		}
		out[i], err = p.finish(res)
		return err
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// sweepPrepare is prepare; the tests watch what Sweep prepares through it.
var sweepPrepare = prepare

// sweepOrder is the order in which Sweep takes the jobs (indexes into
// jobs): by seed in the order seeds first appear, and within a seed the
// DRA row first, then the others in job order.
func sweepOrder(jobs []Job) []int {
	order := make([]int, len(jobs))
	for i := range order {
		order[i] = i
	}
	first := map[int64]int{}
	for i, j := range jobs {
		if _, ok := first[j.Seed]; !ok {
			first[j.Seed] = i
		}
	}
	sort.SliceStable(order, func(a, b int) bool {
		ja, jb := jobs[order[a]], jobs[order[b]]
		if fa, fb := first[ja.Seed], first[jb.Seed]; fa != fb {
			return fa < fb
		}
		return ja.Policy.DRA && !jb.Policy.DRA
	})
	return order
}

// seedWork is a seed's workload and its replay trace, shared by the jobs
// of the seed in a sweep: built by the first job that needs them, dropped
// when the last of the seed's jobs ends.
type seedWork struct {
	mu    sync.Mutex
	left  int
	built bool
	work  openb.Workload
	trace *replay.Trace
}

// get returns the seed's workload and trace, building them on first use.
func (s *seedWork) get(t *Trace, ratio float64, seed int64) (openb.Workload, *replay.Trace) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.built {
		s.work = openb.TunedWorkload(t.Nodes, t.Pods, t.CapacityMilli, ratio, seed, openb.Epoch)
		s.trace = replayTrace(s.work)
		s.built = true
	}
	return s.work, s.trace
}

// done counts a job of the seed as ended; the last lets the seed go.
func (s *seedWork) done() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.left--; s.left == 0 {
		s.work, s.trace = openb.Workload{}, nil
	}
}

// RunOne replays the seed's workload with the policy and measures it.
// parallelism is the goroutines of a cycle (0 keeps the configuration's);
// decisions do not depend on it.
func RunOne(ctx context.Context, t *Trace, p Policy, seed int64, ratio float64, parallelism int) (*Run, error) {
	w := openb.TunedWorkload(t.Nodes, t.Pods, t.CapacityMilli, ratio, seed, openb.Epoch)
	pr, err := prepare(t, w, replayTrace(w), p, seed, parallelism)
	if err != nil {
		return nil, err
	}
	res, err := replay.Run(ctx, pr.trace, pr.options)
	if err != nil {
		return nil, fmt.Errorf("policy %s, seed %d: %w", p.Name, seed, err)
	}
	return pr.finish(res)
}

// prepared is one run ready for the replay: its trace, its options (the
// row's configuration, and the probes reading the books) and its books.
type prepared struct {
	policy  Policy
	seed    int64
	work    openb.Workload
	trace   *replay.Trace
	options replay.Options
	books   *gpuBooks
	// capacity is the GPU thousandths of the nodes.
	capacity int64
}

// prepare readies the policy's run of a seed's workload w, whose replay is
// tr (replayTrace(w); the DRA row puts tr in the DRA mapping).
func prepare(t *Trace, w openb.Workload, tr *replay.Trace, p Policy, seed int64, parallelism int) (*prepared, error) {
	cfg, err := LoadConfigWithFeatures(p.Config, p.Features)
	if err != nil {
		return nil, fmt.Errorf("policy %s: %w", p.Name, err)
	}
	model, err := fragModel(t.Typical)
	if err != nil {
		return nil, err
	}
	books := &gpuBooks{model: model}
	reg, err := engine.Registry(p.Registry)
	if err != nil {
		return nil, err
	}
	if p.DRA {
		if !DRAAvailable(reg) {
			return nil, fmt.Errorf("policy %s: %w", p.Name, ErrNoDRA)
		}
		if err := draTrace(tr); err != nil {
			return nil, fmt.Errorf("policy %s, seed %d: %w", p.Name, seed, err)
		}
		// The probes read the devices each pod's claim was allocated from
		// this run's claims.
		spec := reg[names.DynamicResources]
		newDRA := spec.Factory
		spec.Factory = func(ctx context.Context, args runtime.Object, h *schedcore.Handle) (schedcore.Plugin, error) {
			pl, err := newDRA(ctx, args, h)
			if err == nil {
				books.dra = h.DRA()
			}
			return pl, err
		}
		reg[names.DynamicResources] = spec
	} else {
		// The probes read the GPUs each pod took from this run's GpuShare.
		spec := reg[names.GpuShare]
		newShare := spec.Factory
		spec.Factory = func(ctx context.Context, args runtime.Object, h *schedcore.Handle) (schedcore.Plugin, error) {
			pl, err := newShare(ctx, args, h)
			if err == nil {
				books.share = pl.(*gpushare.GpuShare)
			}
			return pl, err
		}
		reg[names.GpuShare] = spec
	}
	return &prepared{policy: p, seed: seed, work: w, trace: tr, books: books, capacity: t.CapacityMilli, options: replay.Options{
		Options:     engine.Options{Config: cfg, Registry: reg, Features: p.Features, Seed: seed, UseSeed: p.UniformTies, NoPreemption: true},
		Until:       time.Duration(len(tr.Pods))*ArrivalGap - ArrivalGap/2,
		Parallelism: parallelism,
		Probes: []replay.Probe{
			{Name: columnGPUAllocated, Fn: func(now time.Time, s *schedcore.Snapshot) float64 { return float64(books.update(now, s).used) }},
			{Name: columnGPUFrag, Fn: func(now time.Time, s *schedcore.Snapshot) float64 { return books.update(now, s).frag }},
		},
	}}, nil
}

// finish checks the replay followed the artifact's bookkeeping and
// measures it.
func (pr *prepared) finish(res *replay.Result) (*Run, error) {
	p, seed, tr, books := pr.policy, pr.seed, pr.trace, pr.books
	if books.share == nil && !p.DRA {
		return nil, fmt.Errorf("policy %s: GpuShare is not enabled", p.Name)
	}
	if books.dra == nil && p.DRA {
		return nil, fmt.Errorf("policy %s: DynamicResources is not enabled", p.Name)
	}
	if books.err != nil {
		return nil, fmt.Errorf("policy %s, seed %d: %w", p.Name, seed, books.err)
	}
	sum := res.Summary
	// Each pod had one attempt, on arrival: the artifact's bookkeeping,
	// which deletes a pod that does not fit. (With no departures the free
	// capacity only shrinks, so a retry could not succeed anyway.)
	if sum.Attempts != len(tr.Pods) || sum.Placed+sum.Pending != len(tr.Pods) {
		return nil, fmt.Errorf("policy %s, seed %d: %d pods, %d attempts, %d placed, %d pending: want one attempt per pod", p.Name, seed, len(tr.Pods), sum.Attempts, sum.Placed, sum.Pending)
	}
	events, err := eventsOf(res, pr.work, books.model)
	if err != nil {
		return nil, fmt.Errorf("policy %s, seed %d: %w", p.Name, seed, err)
	}
	m := measure(events, pr.capacity)
	m.Failed, m.MaxPodsPerNode = sum.Pending, books.maxPods
	return &Run{Policy: p.Name, Seed: seed, Pods: len(tr.Pods), Placed: sum.Placed, Metrics: m, Elapsed: time.Duration(sum.DurationSeconds * float64(time.Second)), Summary: sum}, nil
}

// replayTrace is the workload as a replay: the nodes there from the
// start, the pods arriving ArrivalGap apart in workload order.
func replayTrace(w openb.Workload) *replay.Trace {
	tr := &replay.Trace{
		Start:   openb.Epoch,
		Objects: &snapshot.Cluster{Namespaces: []*v1.Namespace{openb.NamespaceObject(openb.Options{})}},
		Nodes:   make([]replay.Node, len(w.Nodes)),
		Pods:    make([]replay.Pod, len(w.Pods)),
	}
	for i, n := range w.Nodes {
		tr.Nodes[i] = replay.Node{Node: n, Arrive: openb.Epoch}
	}
	for i, p := range w.Pods {
		tr.Pods[i] = replay.Pod{Pod: p, Arrive: openb.Epoch.Add(time.Duration(i) * ArrivalGap)}
	}
	return tr
}

// Dump returns a seed's workload as the objects of a cluster dump, for
// `kubectl sched dryrun -f` with a row's configuration: the namespace, the
// nodes (renamed as the seed renames them), in the DRA mapping its
// objects, and the pods in arrival order, a second apart.
func (t *Trace) Dump(seed int64, ratio float64, dra bool) ([]runtime.Object, error) {
	w := openb.TunedWorkload(t.Nodes, t.Pods, t.CapacityMilli, ratio, seed, openb.Epoch)
	objs := []runtime.Object{openb.NamespaceObject(openb.Options{})}
	pods := w.Pods
	if dra {
		var err error
		if objs, pods, err = DRAObjects(w.Nodes, w.Pods); err != nil {
			return nil, err
		}
	}
	for _, n := range w.Nodes {
		objs = append(objs, n)
	}
	for _, p := range pods {
		objs = append(objs, p)
	}
	return objs, nil
}

// eventsOf turns the replay's series into the artifact's log: one event
// before the first pod, then one after each pod's attempt (the last sample
// at which that many pods had arrived).
func eventsOf(res *replay.Result, w openb.Workload, model *gpushare.FragModel) ([]event, error) {
	s := &res.Series
	var used, frag []float64
	for _, e := range s.Extra {
		switch e.Name {
		case columnGPUAllocated:
			used = e.Values
		case columnGPUFrag:
			frag = e.Values
		}
	}
	if used == nil || frag == nil {
		return nil, fmt.Errorf("the replay's series lack the GPU columns")
	}
	events := make([]event, len(w.Pods)+1)
	events[0].frag = emptyFrag(w.Nodes, model)
	seen := make([]bool, len(w.Pods)+1)
	for i, n := range s.Arrived {
		if n <= 0 || n > len(w.Pods) {
			continue
		}
		events[n].used, events[n].frag = int64(used[i]), frag[i]
		seen[n] = true
	}
	var arrived int64
	for i, p := range w.Pods {
		_, t := openb.GPUMilli(p)
		arrived += t
		if !seen[i+1] {
			return nil, fmt.Errorf("no sample after the arrival of pod %d (%s)", i+1, p.Name)
		}
		events[i+1].arrived = arrived
	}
	return events, nil
}

// emptyFrag is the fragmentation of the nodes with every GPU free.
func emptyFrag(nodes []*v1.Node, model *gpushare.FragModel) float64 {
	var f float64
	for _, n := range nodes {
		q := n.Status.Allocatable[openb.GPUResource]
		g := &gpushare.NodeGPUs{Model: n.Labels[openb.LabelGPUModel], Free: make([]int64, q.Value())}
		for j := range g.Free {
			g.Free[j] = gpushare.MilliPerGPU
		}
		f += model.Frag(g, n.Status.Allocatable.Cpu().MilliValue())
	}
	return f
}

// gpuBooks keep, for the probes, each node's allocated GPU thousandths and
// fragmentation, recomputed only for the nodes whose NodeInfo changed since
// the last sample (one per placement), from the GPUs GpuShare gave each
// pod, or in the DRA row from the devices its claim was allocated.
type gpuBooks struct {
	model *gpushare.FragModel
	share *gpushare.GpuShare
	dra   *schedcore.DRAManager
	// slots are by the snapshot's list position.
	slots   []bookSlot
	used    int64
	frag    float64
	maxPods int
	at      time.Time
	synced  bool
	// err is the first overcommitted node seen.
	err error
}

type bookSlot struct {
	name string
	gen  int64
	used int64
	frag float64
}

// update brings the books up to the snapshot, once per sample.
func (b *gpuBooks) update(now time.Time, snap *schedcore.Snapshot) *gpuBooks {
	if b.synced && b.at.Equal(now) {
		return b
	}
	b.at, b.synced = now, true
	list := snap.List()
	if len(b.slots) != len(list) {
		b.slots = make([]bookSlot, len(list))
		b.used, b.frag = 0, 0
	}
	for i, ni := range list {
		s := &b.slots[i]
		if s.gen == ni.Generation && s.name == ni.Name() {
			continue
		}
		cpuLeft := ni.Allocatable.MilliCPU - ni.Requested.MilliCPU
		if cpuLeft < 0 && b.err == nil {
			b.err = fmt.Errorf("the CPU of node %s is overcommitted (%dm free)", ni.Name(), cpuLeft)
		}
		var g *gpushare.NodeGPUs
		if b.share != nil {
			g = b.share.NodeState(ni)
		} else {
			var err error
			if g, err = draGPUs(b.dra, ni); err != nil && b.err == nil {
				b.err = err
			}
		}
		var used int64
		for id, f := range g.Free {
			if f < 0 && b.err == nil {
				b.err = fmt.Errorf("GPU %d of node %s is overcommitted (%dm free)", id, ni.Name(), f)
			}
			used += gpushare.MilliPerGPU - f
		}
		frag := b.model.Frag(g, cpuLeft)
		b.used += used - s.used
		b.frag += frag - s.frag
		*s = bookSlot{name: ni.Name(), gen: ni.Generation, used: used, frag: frag}
		b.maxPods = max(b.maxPods, len(ni.Pods))
	}
	return b
}

// fragModel is FGD's model of the typical pods, which the fragmentation
// metric uses for every policy (as the artifact does).
func fragModel(typical []gpushare.TypicalPod) (*gpushare.FragModel, error) {
	pl, err := gpushare.NewFGD(context.Background(), &gpushare.FGDScoreArgs{TypicalPods: typical}, nil)
	if err != nil {
		return nil, err
	}
	return pl.(*gpushare.FGDScore).Model(), nil
}
