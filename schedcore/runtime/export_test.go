package runtime

import "github.com/kubectl-sched/kubectl-sched/schedcore"

// DropSpareExplainScratch empties the pool of explanations' working
// memory, so that the next explanation starts on fresh memory.
func DropSpareExplainScratch() {
	for spareExplainScratch.Get() != nil {
	}
}

// MemoKeys lists, for each filter and score plugin of f with a memo, the
// keys its memo holds tables for (in no order), for tests that check which
// keys the framework built.
func (f *Framework) MemoKeys() (filter, score [][]string) {
	keys := func(ms []*schedcore.VerdictMemo) [][]string {
		var out [][]string
		for _, m := range ms {
			if m != nil {
				out = append(out, m.Keys())
			}
		}
		return out
	}
	return keys(f.filterMemo), keys(f.scoreMemo)
}
