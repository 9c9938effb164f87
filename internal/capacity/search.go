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
// Otherwise the search gallops (0, 1, 2, 4, ... template nodes, each
// evaluation placing every spec afresh) to the first count that is
// enough, then bisects between it and the last that was not. That assumes
// count(m) never falls as m grows. It holds for node-local specs; with
// spreading it can fail (a template node in a zone of its own makes every
// other zone wait for it under a hard zone constraint), so every
// evaluation is kept, a contradiction among them is reported
// ("violated", the answer then being the smallest count seen to suffice),
// and galloping stops when doubling the nodes places no more copies.
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
	if s.Gang != nil || s.DaemonSet != nil || len(s.ClaimTemplates) > 0 {
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
		res.NodesNeeded, res.Message = 1, r.templateMessage(ctx, s)
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

// searchMinNodes gallops then bisects over full evaluations.
func (r *runner) searchMinNodes(ctx context.Context) (*report.MinNodes, error) {
	res := &report.MinNodes{Method: "search", Monotonicity: report.MonotoneAssumed, Evaluations: []report.Evaluation{}}
	seen := map[int]report.Evaluation{}
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
	e, err := eval(0)
	if err != nil {
		return nil, err
	}
	if e.Enough {
		res.NodesNeeded, res.Reachable = 0, true
		return res, nil
	}
	lo, hi := 0, 1
	stalled := 0
	for {
		e, err := eval(hi)
		if err != nil {
			return nil, err
		}
		if e.Enough {
			break
		}
		if sum(e.Counts) <= sum(seen[lo].Counts) {
			stalled++
		} else {
			stalled = 0
		}
		if stalled >= 2 || hi*2 > maxSearchNodes {
			res.NodesNeeded = hi
			res.Message = fmt.Sprintf("more template nodes place no more copies: %d template nodes placed %s, as %d did", hi, counts(e.Counts), lo)
			r.checkMonotone(res, seen)
			return res, nil
		}
		lo, hi = hi, hi*2
	}
	for hi-lo > 1 {
		mid := lo + (hi-lo)/2
		e, err := eval(mid)
		if err != nil {
			return nil, err
		}
		if e.Enough {
			hi = mid
		} else {
			lo = mid
		}
	}
	res.NodesNeeded, res.Reachable = hi, true
	r.checkMonotone(res, seen)
	return res, nil
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
