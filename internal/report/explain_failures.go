package report

import (
	"hash/maphash"
	"strings"

	"github.com/kubectl-sched/kubectl-sched/schedcore"
	schedruntime "github.com/kubectl-sched/kubectl-sched/schedcore/runtime"
)

// failureLists gives the rejected nodes their report failures. Nodes
// whose failures read the same (plugins, codes, reasons, in the same
// order) share one list, which readers only read: thousands of rejected
// nodes have a handful of distinct lists (Mixed/5000: 3500 rejected
// nodes, 8 lists), and a list per node was a fifth of what an
// explanation allocated. A list is shared only after its text is
// compared with the node's verdicts, field by field. The nodes sharing a
// list share its NodeFailures too.
type failureLists struct {
	// hash is the key of a node's verdicts (tests give one that collides);
	// nil: hashOf.
	hash func(fl *failureLists, ne *schedruntime.NodeExplanation) uint64
	last *NodeFailures
	// byHash is the first list made for a key.
	byHash map[uint64]*NodeFailures
	// none is shared by the nodes without failures.
	none *NodeFailures
	// slab is where the lists are cut from.
	slab []Failure
}

// of returns the report failures of ne, a rejected node: every rejecting
// filter in order, or the status of a node no filter ran on (an empty
// list when it has neither).
func (fl *failureLists) of(ne *schedruntime.NodeExplanation) *NodeFailures {
	n := len(ne.Failures)
	if n == 0 {
		if ne.Status == nil {
			return fl.empty()
		}
		n = 1
	}
	if fl.last != nil && reads(fl.last.Failures, ne) {
		return fl.last
	}
	hash := fl.hash
	if hash == nil {
		hash = (*failureLists).hashOf
	}
	h := hash(fl, ne)
	l, seen := fl.byHash[h]
	if seen && reads(l.Failures, ne) {
		fl.last = l
		return l
	}
	if len(fl.slab)+n > cap(fl.slab) {
		fl.slab = make([]Failure, 0, max(64, 4*n))
	}
	start := len(fl.slab)
	eachVerdict(ne, func(j int, plugin string, s *schedcore.Status) bool {
		fl.slab = append(fl.slab, failure(plugin, s, j == 0))
		return true
	})
	l = &NodeFailures{Failures: fl.slab[start:len(fl.slab):len(fl.slab)]}
	if !seen {
		if fl.byHash == nil {
			fl.byHash = map[uint64]*NodeFailures{}
		}
		fl.byHash[h] = l
	}
	fl.last = l
	return l
}

// empty returns the failures of the nodes without any (feasible nodes,
// read only).
func (fl *failureLists) empty() *NodeFailures {
	if fl.none == nil {
		fl.none = &NodeFailures{}
	}
	return fl.none
}

// eachVerdict calls f with each of ne's verdicts in order (its Status
// alone when it has none), until f returns false.
func eachVerdict(ne *schedruntime.NodeExplanation, f func(j int, plugin string, s *schedcore.Status) bool) {
	if len(ne.Failures) == 0 {
		f(0, ne.Status.Plugin(), ne.Status)
		return
	}
	for j := range ne.Failures {
		if !f(j, ne.Failures[j].Plugin, ne.Failures[j].Status) {
			return
		}
	}
}

// reads reports whether l is exactly the list failure would make of ne's
// verdicts.
func reads(l []Failure, ne *schedruntime.NodeExplanation) bool {
	if len(l) != max(len(ne.Failures), 1) {
		return false
	}
	ok := true
	eachVerdict(ne, func(j int, plugin string, s *schedcore.Status) bool {
		f := &l[j]
		ok = f.Plugin == plugin && f.First == (j == 0) && f.Code == s.Code().String() && joined(f.Reason, s.Reasons())
		return ok
	})
	return ok
}

// joined reports whether s is strings.Join(parts, "; ").
func joined(s string, parts []string) bool {
	for k, p := range parts {
		if k > 0 {
			if !strings.HasPrefix(s, "; ") {
				return false
			}
			s = s[2:]
		}
		if !strings.HasPrefix(s, p) {
			return false
		}
		s = s[len(p):]
	}
	return s == ""
}

// failureSeed seeds the keys of failureLists.
var failureSeed = maphash.MakeSeed()

// hashOf mixes the plugins, codes and reasons of ne's verdicts.
func (fl *failureLists) hashOf(ne *schedruntime.NodeExplanation) uint64 {
	var h uint64
	mix := func(s string) {
		h = (h ^ maphash.String(failureSeed, s)) * 0x9e3779b97f4a7c15
	}
	eachVerdict(ne, func(_ int, plugin string, s *schedcore.Status) bool {
		mix(plugin)
		mix(s.Code().String())
		for _, r := range s.Reasons() {
			mix(r)
		}
		return true
	})
	return h
}
