// Package helper holds the few pieces several in-tree plugins share, as
// kube-scheduler's plugins/helper does.
package helper

import "github.com/kubectl-sched/kubectl-sched/schedcore"

// DefaultNormalizeColumn rescales scores to [0, maxPriority] by the
// highest score, with kube's integer arithmetic (DefaultNormalizeScore);
// reverse flips them. All zero scores stay zero (or become maxPriority
// when reversed).
func DefaultNormalizeColumn(maxPriority int64, reverse bool, scores []int64) *schedcore.Status {
	var maxCount int64
	for _, s := range scores {
		maxCount = max(maxCount, s)
	}
	if maxCount == 0 {
		if reverse {
			for i := range scores {
				scores[i] = maxPriority
			}
		}
		return nil
	}
	for i, s := range scores {
		s = maxPriority * s / maxCount
		if reverse {
			s = maxPriority - s
		}
		scores[i] = s
	}
	return nil
}
