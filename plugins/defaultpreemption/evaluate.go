package defaultpreemption

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sort"
	"time"

	v1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/kubectl-sched/kubectl-sched/schedcore"
)

// Candidate is a node where the preemptor fits once Victims are evicted.
type Candidate struct {
	Node string
	// Victims are ordered from the most to the least important (priority
	// descending, then earliest start time).
	Victims []*v1.Pod
	// NumPDBViolations counts victims whose eviction violates a
	// PodDisruptionBudget.
	NumPDBViolations int
}

// Evaluate is kube's Evaluator.evaluate: eligibility, candidate nodes, the
// dry run on each and the choice of one, without evicting anything (explain
// calls it directly). On failure the status carries kube's message without
// the "preemption: " prefix, and res, when not nil, clears the pod's
// nomination (no candidate at all).
func (pl *DefaultPreemption) Evaluate(ctx context.Context, state *schedcore.CycleState, pod *v1.Pod, m *schedcore.NodeToStatus) (*Candidate, *schedcore.PostFilterResult, *schedcore.Status) {
	if ok, msg := pl.PodEligibleToPreemptOthers(pod, m.Get(pod.Status.NominatedNodeName)); !ok {
		return nil, nil, schedcore.NewStatus(schedcore.Unschedulable, msg)
	}
	all := pl.h.Snapshot().List()
	if len(all) == 0 {
		return nil, nil, schedcore.AsStatus(errors.New("no nodes available"))
	}
	candidates, statuses, err := pl.findCandidates(ctx, state, all, pod, m)
	if err != nil && len(candidates) == 0 {
		return nil, nil, schedcore.AsStatus(err)
	}
	if len(candidates) == 0 {
		statuses.SetAbsentNodesStatus(schedcore.NewStatus(schedcore.UnschedulableAndUnresolvable, ErrReasonNotHelpful))
		fe := &schedcore.FitError{Pod: pod, NumAllNodes: len(all), Diagnosis: schedcore.Diagnosis{NodeToStatus: statuses}}
		return nil, nominate(""), schedcore.NewStatus(schedcore.Unschedulable, fe.Error())
	}
	best := pl.SelectCandidate(candidates)
	if best == nil || best.Node == "" {
		return nil, nil, schedcore.NewStatus(schedcore.Unschedulable, MsgNoCandidateNode)
	}
	return best, nil, nil
}

// findCandidates dry-runs preemption on the nodes whose filter status is
// Unschedulable (UnschedulableAndUnresolvable nodes cannot be helped).
func (pl *DefaultPreemption) findCandidates(ctx context.Context, state *schedcore.CycleState, all []*schedcore.NodeInfo, pod *v1.Pod, m *schedcore.NodeToStatus) ([]*Candidate, *schedcore.NodeToStatus, error) {
	potential := m.NodesForStatusCode(all, schedcore.Unschedulable)
	if len(potential) == 0 {
		return nil, schedcore.NewNodeToStatus(), nil
	}
	var pdbs []*policyv1.PodDisruptionBudget
	if f := pl.h.Preemption().PDBs; f != nil {
		pdbs = f()
	}
	offset, num := pl.GetOffsetAndNumCandidates(int32(len(potential)))
	return pl.DryRunPreemption(ctx, state, pod, potential, pdbs, offset, num)
}

// DryRunPreemption runs SelectVictimsOnNode on the potential nodes from
// offset on (wrapping around), in parallel windows, until num candidates
// with at least one that violates no PDB are found, as kube does. Unlike
// kube, whose workers race, results are taken in scan order, so which
// candidates are found never depends on timing: candidates that violate no
// PDB come first, each group in scan order. Nodes that yield no candidate
// get their status in the returned map.
func (pl *DefaultPreemption) DryRunPreemption(ctx context.Context, state *schedcore.CycleState, pod *v1.Pod, potential []*schedcore.NodeInfo,
	pdbs []*policyv1.PodDisruptionBudget, offset, num int32) ([]*Candidate, *schedcore.NodeToStatus, error) {
	n := len(potential)
	statuses := schedcore.NewNodeToStatus()
	type result struct {
		c  *Candidate
		st *schedcore.Status
	}
	results := make([]result, n)
	now := pl.now()
	prio := schedcore.PodPriority(pod)
	var nonViolating, violating []*Candidate
	var errs []error
	for off := 0; off < n; {
		window := min(n-off, max(int(num)-len(nonViolating)-len(violating), 16))
		base := off
		pl.h.Parallelizer().Until(ctx, window, func(k int) {
			ni := potential[(int(offset)+base+k)%n]
			var victims []*v1.Pod
			var numPDB int
			var st *schedcore.Status
			if pl.h.Features().GenericWorkload {
				victims, numPDB, _, st = pl.selectVictimUnitsOnNode(ctx, state.Clone(), pod, ni.Clone(), pdbs, now)
			} else if !hasLowerPriority(ni, prio) {
				// SelectVictimsOnNode's first answer, without the copies
				// of the cycle state and the node it would make for it:
				// most nodes a pod that fits nowhere is tried on.
				st = schedcore.NewStatus(schedcore.UnschedulableAndUnresolvable, ErrReasonNoVictims)
			} else {
				victims, numPDB, st = pl.SelectVictimsOnNode(ctx, state.Clone(), pod, ni.Clone(), pdbs, now)
			}
			if st.IsSuccess() && len(victims) == 0 {
				st = schedcore.AsStatus(fmt.Errorf("expected at least one victim pod on node %q", ni.Name()))
			}
			if st.IsSuccess() {
				results[base+k] = result{c: &Candidate{Node: ni.Name(), Victims: victims, NumPDBViolations: numPDB}}
			} else {
				results[base+k] = result{st: st}
			}
		})
		done := false
		for i := base; i < base+window; i++ {
			ni := potential[(int(offset)+i)%n]
			r := results[i]
			if r.c != nil {
				if r.c.NumPDBViolations == 0 {
					nonViolating = append(nonViolating, r.c)
				} else {
					violating = append(violating, r.c)
				}
				if len(nonViolating) > 0 && int32(len(nonViolating)+len(violating)) >= num {
					done = true
					break
				}
				continue
			}
			if r.st.Code() == schedcore.Error {
				errs = append(errs, r.st.AsError())
			}
			statuses.Set(ni.Name(), r.st)
		}
		off += window
		if done || ctx.Err() != nil {
			break
		}
	}
	// kube's candidate lists hold at most num entries each.
	if len(nonViolating) > int(num) {
		nonViolating = nonViolating[:num]
	}
	if len(violating) > int(num) {
		violating = violating[:num]
	}
	return append(nonViolating, violating...), statuses, errors.Join(errs...)
}

// hasLowerPriority reports whether a pod on the node has a priority below
// prio: a potential victim.
func hasLowerPriority(ni *schedcore.NodeInfo, prio int32) bool {
	for _, pi := range ni.Pods {
		if schedcore.PodPriority(pi.Pod) < prio {
			return true
		}
	}
	return false
}

func (pl *DefaultPreemption) now() time.Time {
	if pl.h.Clock() != nil {
		return pl.h.Clock().Now()
	}
	return time.Now()
}

// SelectVictimsOnNode is kube's: remove every pod of lower priority than the
// preemptor from nodeInfo (a copy) and from the cycle state (PreFilter
// RemovePod extensions); if the preemptor then fits (filters with nominated
// pods), add victims back one by one, the PDB-violating ones first and each
// group from the most important, keeping those the preemptor still fits
// with. It returns the victims left, most important first, and how many of
// them violate a PDB. now stands in for the start time of pods that have
// none, as kube's time.Now().
func (pl *DefaultPreemption) SelectVictimsOnNode(ctx context.Context, state *schedcore.CycleState, preemptor *v1.Pod, nodeInfo *schedcore.NodeInfo,
	pdbs []*policyv1.PodDisruptionBudget, now time.Time) ([]*v1.Pod, int, *schedcore.Status) {
	fw := pl.h.Framework()
	feats := pl.h.Features()
	remove := func(pi *schedcore.PodInfo) error {
		if err := nodeInfo.RemovePod(pi.Pod, feats); err != nil {
			return err
		}
		return fw.RunPreFilterExtensionRemovePod(ctx, state, preemptor, pi, nodeInfo).AsError()
	}
	add := func(pi *schedcore.PodInfo) error {
		nodeInfo.AddPodInfo(pi, feats)
		return fw.RunPreFilterExtensionAddPod(ctx, state, preemptor, pi, nodeInfo).AsError()
	}

	prio := schedcore.PodPriority(preemptor)
	var potential []*schedcore.PodInfo
	for _, pi := range nodeInfo.Pods {
		if schedcore.PodPriority(pi.Pod) < prio {
			potential = append(potential, pi)
		}
	}
	if len(potential) == 0 {
		return nil, 0, schedcore.NewStatus(schedcore.UnschedulableAndUnresolvable, ErrReasonNoVictims)
	}
	for _, pi := range potential {
		if err := remove(pi); err != nil {
			return nil, 0, schedcore.AsStatus(err)
		}
	}
	// Affinity of the preemptor to its victims is not considered, as kube.
	if st := fw.RunFilterPluginsWithNominatedPods(ctx, state, preemptor, nodeInfo); !st.IsSuccess() {
		return nil, 0, st
	}
	sort.SliceStable(potential, func(i, j int) bool { return moreImportantPod(potential[i].Pod, potential[j].Pod, now) })
	violatingPods, nonViolatingPods := filterPodsWithPDBViolation(potential, pdbs)

	var victims []*schedcore.PodInfo
	reprieve := func(pi *schedcore.PodInfo) (bool, error) {
		if err := add(pi); err != nil {
			return false, err
		}
		fits := fw.RunFilterPluginsWithNominatedPods(ctx, state, preemptor, nodeInfo).IsSuccess()
		if !fits {
			if err := remove(pi); err != nil {
				return false, err
			}
			victims = append(victims, pi)
		}
		return fits, nil
	}
	numViolating := 0
	for _, pi := range violatingPods {
		fits, err := reprieve(pi)
		if err != nil {
			return nil, 0, schedcore.AsStatus(err)
		}
		if !fits {
			numViolating++
		}
	}
	for _, pi := range nonViolatingPods {
		if _, err := reprieve(pi); err != nil {
			return nil, 0, schedcore.AsStatus(err)
		}
	}
	if len(violatingPods) != 0 && len(nonViolatingPods) != 0 {
		sort.SliceStable(victims, func(i, j int) bool { return moreImportantPod(victims[i].Pod, victims[j].Pod, now) })
	}
	out := make([]*v1.Pod, len(victims))
	for i, pi := range victims {
		out[i] = pi.Pod
	}
	return out, numViolating, nil
}

// moreImportantPod is kube's MoreImportantVictim for single pods: higher
// priority first, then the earlier start time.
func moreImportantPod(a, b *v1.Pod, now time.Time) bool {
	pa, pb := schedcore.PodPriority(a), schedcore.PodPriority(b)
	if pa != pb {
		return pa > pb
	}
	return startTime(a, now).Before(startTime(b, now))
}

// startTime is kube's GetPodStartTime, with now for pods not started yet.
func startTime(p *v1.Pod, now time.Time) time.Time {
	if p.Status.StartTime != nil {
		return p.Status.StartTime.Time
	}
	return now
}

// filterPodsWithPDBViolation is kube's FilterVictimsWithPDBViolation for
// single-pod victims: each matching PDB's disruptionsAllowed is spent in
// victim order (pods already in its disruptedPods do not count), and a pod
// that takes one below zero violates it.
func filterPodsWithPDBViolation(pods []*schedcore.PodInfo, pdbs []*policyv1.PodDisruptionBudget) (violating, nonViolating []*schedcore.PodInfo) {
	violates := newPDBBudget(pdbs).violates
	for _, pi := range pods {
		if violates(pi.Pod) {
			violating = append(violating, pi)
		} else {
			nonViolating = append(nonViolating, pi)
		}
	}
	return violating, nonViolating
}

// pdbBudget spends the disruptionsAllowed of the PDBs matching each pod
// asked, in the order asked, as kube's FilterVictimsWithPDBViolation
// does: pods already in a PDB's disruptedPods do not count, and a pod that
// takes one below zero violates it.
type pdbBudget struct {
	pdbs      []*policyv1.PodDisruptionBudget
	allowed   []int32
	selectors []labels.Selector
}

func newPDBBudget(pdbs []*policyv1.PodDisruptionBudget) *pdbBudget {
	b := &pdbBudget{pdbs: pdbs, allowed: make([]int32, len(pdbs)), selectors: make([]labels.Selector, len(pdbs))}
	for i, pdb := range pdbs {
		b.allowed[i] = pdb.Status.DisruptionsAllowed
		if s, err := metav1.LabelSelectorAsSelector(pdb.Spec.Selector); err == nil {
			b.selectors[i] = s
		}
	}
	return b
}

// violates spends pod's disruption and reports whether a PDB went below
// zero.
func (b *pdbBudget) violates(pod *v1.Pod) bool {
	if len(pod.Labels) == 0 {
		return false
	}
	for i, pdb := range b.pdbs {
		if pdb.Namespace != pod.Namespace {
			continue
		}
		sel := b.selectors[i]
		// An invalid, nil or empty selector matches nothing.
		if sel == nil || sel.Empty() || !sel.Matches(labels.Set(pod.Labels)) {
			continue
		}
		if _, ok := pdb.Status.DisruptedPods[pod.Name]; ok {
			continue
		}
		b.allowed[i]--
		if b.allowed[i] < 0 {
			return true
		}
	}
	return false
}

// SelectCandidate is kube's pickOneNodeForPreemption over the candidates:
// fewest PDB violations, then the lowest priority of the most important
// victim, then the smallest sum of priorities, then the fewest victims,
// then the latest start time of the highest-priority victims. kube breaks
// a remaining tie by map iteration order (random); here the first
// candidate in DryRunPreemption's order wins.
func (pl *DefaultPreemption) SelectCandidate(cs []*Candidate) *Candidate {
	switch len(cs) {
	case 0:
		return nil
	case 1:
		return cs[0]
	}
	now := pl.now()
	scores := []func(c *Candidate) int64{
		func(c *Candidate) int64 { return -int64(c.NumPDBViolations) },
		func(c *Candidate) int64 { return -int64(schedcore.PodPriority(c.Victims[0])) },
		func(c *Candidate) int64 {
			var sum int64
			for _, p := range c.Victims {
				// Shifted so that every term is >= 0: more pods of negative
				// priority never beat fewer of the same priority.
				sum += int64(schedcore.PodPriority(p)) + int64(math.MaxInt32+1)
			}
			return -sum
		},
		func(c *Candidate) int64 { return -int64(len(c.Victims)) },
		func(c *Candidate) int64 { return earliestStartTime(c.Victims, now).UnixNano() },
	}
	for _, f := range scores {
		var selected []*Candidate
		best := int64(math.MinInt64)
		for _, c := range cs {
			s := f(c)
			if s > best {
				best, selected = s, selected[:0]
			}
			if s == best {
				selected = append(selected, c)
			}
		}
		if len(selected) == 1 {
			return selected[0]
		}
		cs = selected
	}
	return cs[0]
}

// earliestStartTime is kube's GetEarliestPodStartTime: the earliest start
// time among the victims of the highest priority.
func earliestStartTime(victims []*v1.Pod, now time.Time) time.Time {
	earliest := startTime(victims[0], now)
	maxPrio := schedcore.PodPriority(victims[0])
	for _, p := range victims {
		switch pr := schedcore.PodPriority(p); {
		case pr == maxPrio:
			if t := startTime(p, now); t.Before(earliest) {
				earliest = t
			}
		case pr > maxPrio:
			maxPrio, earliest = pr, startTime(p, now)
		}
	}
	return earliest
}
