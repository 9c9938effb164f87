package capacity

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/kubectl-sched/kubectl-sched/internal/explain"
	"github.com/kubectl-sched/kubectl-sched/internal/report"
)

// ErrNeedsReplicas is returned by --min-nodes for a spec without
// --replicas (there is nothing to reach).
var ErrNeedsReplicas = errors.New("--min-nodes needs --replicas for every spec")

// maxSearchNodes bounds the template nodes the search tries.
const maxSearchNodes = 1 << 16

// minNodes finds the fewest template nodes with which every spec gets its
// replicas.
//
// One node-local spec (every plugin that can reject it is node-local): a
// node's count of copies does not depend on the other nodes, so count(m) =
// C + m*k, C being the cluster's count and k a template node's. The answer
// is ceil((R-C)/k), checked with the per-node counts at that many nodes.
//
// Otherwise the search evaluates counts of template nodes (each
// evaluation placing every spec afresh), extrapolating upwards from the
// copies the last nodes added, doubling when they added none, then
// narrows down between the last count that was not enough and the first
// that was (searchMinNodes). That assumes count(m) never falls as m grows.
// It holds for node-local specs; with spreading it can fail (a template
// node in a zone of its own makes every other zone wait for it under a
// hard zone constraint), so every evaluation is kept and a contradiction
// among them is reported ("violated", the answer then being the smallest
// count seen to suffice).
//
// More nodes placing no more copies is no proof that no number of nodes
// would: earlier specs spread over new nodes and leave a later spec room
// only once there are enough of them. The search says "unreachable" only
// with a proof (unreachableProof); otherwise it keeps doubling up to one
// template node per copy wanted (plateauBound), and past that says what it
// tried.
func (r *runner) minNodes(ctx context.Context) (*report.MinNodes, error) {
	for _, s := range r.specs {
		if s.Replicas <= 0 {
			return nil, fmt.Errorf("%s %s: %w", s.Kind, s.Name, ErrNeedsReplicas)
		}
	}
	if len(r.specs) == 1 && !r.o.Cycles {
		res, ok, err := r.nodeLocalMinNodes(ctx)
		if err != nil || ok {
			return res, err
		}
	}
	return r.searchMinNodes(ctx)
}

// nodeLocalMinNodes answers for one node-local spec from per-node counts.
// ok is false when the spec is not node-local.
func (r *runner) nodeLocalMinNodes(ctx context.Context) (*report.MinNodes, bool, error) {
	s := r.specs[0]
	if s.perCopyObjects() || s.DaemonSet != nil {
		return nil, false, nil
	}
	fill := func(m int) (cluster int, perTemplate []int, ok bool, err error) {
		sim, err := r.newSim(ctx, m)
		if err != nil {
			return 0, nil, false, err
		}
		defer sim.Close()
		isTemplate := map[string]int{}
		for i, n := range TemplateNodes(r.o.Template, m, r.base.Nodes) {
			isTemplate[n.Name] = i
		}
		r.progress(s.Name, 0, s.Replicas, m)
		counts, ok, err := sim.Fill(ctx, s.Pod, 0)
		if err != nil || !ok {
			return 0, nil, ok, err
		}
		perTemplate = make([]int, m)
		for _, nc := range counts {
			if i, t := isTemplate[nc.Node]; t {
				perTemplate[i] = nc.Count
			} else {
				cluster += nc.Count
			}
		}
		return cluster, perTemplate, true, nil
	}
	res := &report.MinNodes{Method: report.MethodNodeLocal, Monotonicity: report.MonotoneProven, Evaluations: []report.Evaluation{}}
	record := func(m, count int) {
		res.Evaluations = append(res.Evaluations, report.Evaluation{Nodes: m, Counts: []int{min(count, s.Replicas)}, Enough: count >= s.Replicas})
	}
	c, one, ok, err := fill(1)
	if err != nil || !ok {
		return nil, false, err
	}
	record(0, c)
	if c >= s.Replicas {
		res.NodesNeeded, res.Reachable = 0, true
		return res, true, nil
	}
	record(1, c+one[0])
	k := one[0]
	if k == 0 {
		// Proof: the cluster's nodes hold c < R and each template node none.
		res.NodesNeeded, res.Unreachable = 1, true
		res.Message = fmt.Sprintf("%s, and the cluster's nodes hold %d of its %d", r.templateMessage(ctx, s), c, s.Replicas)
		return res, true, nil
	}
	m := (s.Replicas - c + k - 1) / k
	if m > maxSearchNodes {
		res.NodesNeeded, res.Message = m, fmt.Sprintf("%d template nodes would be needed, more than the %d tried at most", m, maxSearchNodes)
		return res, true, nil
	}
	cm, per, _, err := fill(m)
	if err != nil {
		return nil, false, err
	}
	total := cm
	for _, n := range per {
		total += n
	}
	record(m, total)
	if total < s.Replicas || total-per[m-1] >= s.Replicas {
		// Template nodes that are not alike (a name-dependent rule):
		// search instead.
		return nil, false, nil
	}
	res.NodesNeeded, res.Reachable = m, true
	return res, true, nil
}

// templateMessage says why a template node holds no copy: the rejecting
// plugins' reasons on it, from explain.
func (r *runner) templateMessage(ctx context.Context, s *Spec) string {
	tmpl := TemplateNodes(r.o.Template, 1, r.base.Nodes)
	cl := *r.base
	cl.Nodes = append(append(cl.Nodes[:0:0], r.base.Nodes...), tmpl...)
	ex, err := explain.Run(ctx, &cl, s.Pod, explain.Options{Config: r.o.Config, Registry: r.o.Registry, Features: r.o.Features, Node: tmpl[0].Name, Nearest: -1})
	msg := fmt.Sprintf("a template node holds no copy of %s", s.Name)
	if err != nil || len(ex.Nodes) != 1 {
		return msg
	}
	var reasons []string
	for _, f := range ex.Nodes[0].Failures {
		reasons = append(reasons, f.Plugin+": "+f.Reason)
	}
	if len(reasons) > 0 {
		msg += " (" + strings.Join(reasons, "; ") + ")"
	}
	return msg
}

// searchMinNodes searches over full evaluations. Progress is the copies
// placed, each spec's count capped at its replicas, against their sum.
// Upwards, the next count of template nodes is extrapolated from the last
// two evaluations that were not enough (the copies one more node adds),
// doubling instead when they did not grow (up to plateauBound, unless
// unreachableProof proves no count enough); then, between the last count
// that was not enough and the first that was, the same extrapolation from
// below (the node below the first that was enough, when it points there),
// falling back to bisection whenever a step did not halve the interval,
// and for good once the node below was enough too, until the two are one
// node apart. When counts grow about linearly with
// the nodes, as they do under a hostname spread, that takes a handful of
// evaluations.
func (r *runner) searchMinNodes(ctx context.Context) (*report.MinNodes, error) {
	res := &report.MinNodes{Method: "search", Monotonicity: report.MonotoneAssumed, Evaluations: []report.Evaluation{}}
	target, podsWanted := 0, 0
	for _, s := range r.specs {
		target += s.Replicas
		podsWanted += s.Replicas * s.Pods()
	}
	seen := map[int]report.Evaluation{}
	progress := func(m int) int {
		t := 0
		for i, c := range seen[m].Counts {
			t += min(c, r.specs[i].Replicas)
		}
		return t
	}
	eval := func(m int) (report.Evaluation, error) {
		if e, ok := seen[m]; ok {
			return e, nil
		}
		r.progress("", 0, 0, m)
		ev, err := r.evaluate(ctx, m, false)
		if err != nil {
			return report.Evaluation{}, err
		}
		e := report.Evaluation{Nodes: m, Enough: true}
		for i, s := range ev.specs {
			e.Counts = append(e.Counts, s.Count)
			if s.Count < r.specs[i].Replicas {
				e.Enough = false
			}
		}
		seen[m] = e
		res.Evaluations = append(res.Evaluations, e)
		return e, nil
	}
	// extrapolate guesses the count that reaches the target from the two
	// not-enough evaluations prev < lo; 0 when they did not grow.
	extrapolate := func(prev, lo int) int {
		gained := progress(lo) - progress(prev)
		if prev < 0 || gained <= 0 {
			return 0
		}
		return lo + ((target-progress(lo))*(lo-prev)+gained-1)/gained
	}
	e, err := eval(0)
	if err != nil {
		return nil, err
	}
	if e.Enough {
		res.NodesNeeded, res.Reachable = 0, true
		return res, nil
	}
	// A group's copy is several pods: a template node per pod wanted
	// (per copy for pods).
	bound := plateauBound(podsWanted)
	prev, lo, next, stalled := -1, 0, 1, 0
	proofTried := false
	for {
		e, err := eval(next)
		if err != nil {
			return nil, err
		}
		if e.Enough {
			break
		}
		if progress(next) <= progress(lo) {
			stalled++
		} else {
			stalled = 0
		}
		if stalled > 0 && !proofTried {
			proofTried = true
			msg, err := r.unreachableProof(ctx)
			if err != nil {
				return nil, err
			}
			if msg != "" {
				res.NodesNeeded, res.Unreachable, res.Message = next, true, msg
				r.checkMonotone(res, seen)
				return res, nil
			}
		}
		if next >= maxSearchNodes || stalled > 0 && next >= bound {
			res.NodesNeeded = next
			res.Message = fmt.Sprintf("tried up to %d template nodes (%s): %d placed %s, as %d did; not proven unreachable",
				next, boundWhy(next, podsWanted != target), next, counts(e.Counts), lo)
			r.checkMonotone(res, seen)
			return res, nil
		}
		prev, lo = lo, next
		guess := extrapolate(prev, lo)
		if guess <= lo || stalled > 0 {
			guess = 2 * lo
		}
		next = min(guess, maxSearchNodes)
		if stalled > 0 {
			next = min(next, bound)
		}
	}
	hi := next
	// bisect: the extrapolation pointed at hi and hi-1 was enough too, so
	// the counts do not grow linearly here; plain bisection from then on.
	halved, bisect := true, false
	for hi-lo > 1 {
		guess := extrapolate(prev, lo)
		belowHi := false
		switch {
		case bisect || !halved || guess <= lo:
			guess = lo + (hi-lo)/2
		case guess >= hi:
			// The extrapolation says hi: is hi-1 enough too?
			guess, belowHi = hi-1, true
		}
		width := hi - lo
		e, err := eval(guess)
		if err != nil {
			return nil, err
		}
		if e.Enough {
			hi = guess
			bisect = bisect || belowHi
		} else {
			prev, lo = lo, guess
		}
		halved = hi-lo <= width/2
	}
	res.NodesNeeded, res.Reachable = hi, true
	r.checkMonotone(res, seen)
	return res, nil
}

// plateauBound is how far the search doubles template nodes that place no
// more copies: one per copy wanted. For node-local specs each of which fits
// on an empty template node it is enough: however the copies before it
// spread, a copy finds a template node none of them took. (A spec that
// fits on no template node is caught by unreachableProof.)
func plateauBound(copies int) int {
	return min(max(copies, 1), maxSearchNodes)
}

// boundWhy says why the search stopped at n template nodes.
func boundWhy(n int, groups bool) string {
	if n >= maxSearchNodes {
		return "the most the search tries"
	}
	if groups {
		return "one per pod wanted"
	}
	return "one per copy wanted"
}

// unreachableProof returns why no number of template nodes can give every
// spec its replicas, or "" when it finds no proof. The proof is a
// node-local spec (every plugin that can reject it is node-local: its
// count on a node depends on that node alone) of which a template node
// holds no copy and the cluster's own nodes fewer than its replicas, with
// no other spec's copies beside them: those only take room, so no number
// of template nodes makes up the difference.
func (r *runner) unreachableProof(ctx context.Context) (string, error) {
	for _, s := range r.specs {
		if s.perCopyObjects() || s.DaemonSet != nil {
			continue
		}
		tmpl := TemplateNodes(r.o.Template, 1, r.base.Nodes)[0].Name
		sim, err := r.newSim(ctx, 1)
		if err != nil {
			return "", err
		}
		counts, ok, err := sim.Fill(ctx, s.Pod, 0)
		sim.Close()
		if err != nil {
			return "", err
		}
		if !ok {
			continue
		}
		cluster, onTemplate := 0, 0
		for _, nc := range counts {
			if nc.Node == tmpl {
				onTemplate += nc.Count
			} else {
				cluster += nc.Count
			}
		}
		if onTemplate == 0 && cluster < s.Replicas {
			return fmt.Sprintf("%s, and the cluster's nodes hold %d of its %d even without the other specs", r.templateMessage(ctx, s), cluster, s.Replicas), nil
		}
	}
	return "", nil
}

// checkMonotone marks the search violated when a larger node count placed
// fewer copies of some spec than a smaller one, and then answers with the
// smallest count seen to suffice.
func (r *runner) checkMonotone(res *report.MinNodes, seen map[int]report.Evaluation) {
	for a, ea := range seen {
		for b, eb := range seen {
			if a >= b {
				continue
			}
			for i := range ea.Counts {
				if eb.Counts[i] < ea.Counts[i] {
					res.Monotonicity = report.MonotoneViolated
				}
			}
		}
	}
	if res.Monotonicity != report.MonotoneViolated {
		return
	}
	for m, e := range seen {
		if e.Enough && (!res.Reachable || m < res.NodesNeeded) {
			res.NodesNeeded, res.Reachable = m, true
		}
	}
}

func sum(xs []int) int {
	t := 0
	for _, x := range xs {
		t += x
	}
	return t
}

func counts(xs []int) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = fmt.Sprint(x)
	}
	return strings.Join(s, "+")
}

func (r *runner) progress(spec string, placed, target, nodes int) {
	if r.o.Progress != nil {
		r.o.Progress(Progress{Spec: spec, Placed: placed, Target: target, Nodes: nodes})
	}
}
