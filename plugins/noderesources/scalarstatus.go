package noderesources

import (
	"sync/atomic"

	v1 "k8s.io/api/core/v1"

	"github.com/kubectl-sched/kubectl-sched/schedcore"
)

// maxSharedScalars bounds the scalar resources a pod may request for its
// rejections naming them to be shared (scalarStatus): the table holds
// 2 << (4 + n) entries.
const maxSharedScalars = 3

// fixedNames are the resources of fixedReasons, in the same order.
var fixedNames = [...]v1.ResourceName{v1.ResourcePods, v1.ResourceCPU, v1.ResourceMemory, v1.ResourceEphemeralStorage}

// scalarStatus is the shared status for a shortfall that names one of the
// pod's scalar resources (nil when s keeps no table): the same code and
// reasons, in order, as insufficientStatus would make, one status per
// code and set of resources for the cycle, so that Filter allocates
// nothing on the nodes it rejects for, say, nvidia.com/gpu, and the
// framework remembers those rejections per node as it does the fixed
// ones (a table of a later cycle makes statuses of the same content,
// which the remembered verdicts take as the same rejection).
//
// The set's bit i is fixedNames[i], bit len(fixedNames)+j is
// s.scalars[j]; appendInsufficient lists the resources in that order.
func (s *preFilterState) scalarStatus(insufficient []InsufficientResource) *schedcore.Status {
	if s.scalarStatuses == nil {
		return nil
	}
	bitsUsed := len(fixedNames) + len(s.scalars)
	set, code, next := 0, 0, 0
	for i := range insufficient {
		r := &insufficient[i]
		k := next
		for k < bitsUsed && s.nameAt(k) != r.ResourceName {
			k++
		}
		if k == bitsUsed {
			return nil
		}
		set, next = set|1<<k, k+1
		if r.Unresolvable {
			code = 1
		}
	}
	slot := &s.scalarStatuses[code<<bitsUsed|set]
	if st := slot.Load(); st != nil {
		return st
	}
	reasons := make([]string, 0, len(insufficient))
	for i := range insufficient {
		reasons = append(reasons, insufficient[i].Reason)
	}
	c := schedcore.Unschedulable
	if code == 1 {
		c = schedcore.UnschedulableAndUnresolvable
	}
	// Filter runs on several nodes at once: the first status made wins.
	slot.CompareAndSwap(nil, schedcore.NewSharedStatus(c, reasons...))
	return slot.Load()
}

// makeScalarStatuses gives s its table of shared statuses, when it
// requests scalar resources, no more than maxSharedScalars.
func (s *preFilterState) makeScalarStatuses() {
	if n := len(s.scalars); n > 0 && n <= maxSharedScalars {
		s.scalarStatuses = make([]atomic.Pointer[schedcore.Status], 2<<(len(fixedNames)+n))
	}
}

// nameAt is the resource of the set's bit k.
func (s *preFilterState) nameAt(k int) v1.ResourceName {
	if k < len(fixedNames) {
		return fixedNames[k]
	}
	return s.scalars[k-len(fixedNames)].name
}
