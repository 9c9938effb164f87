package schedcore

// ListIndex is ni's position in its snapshot's list, for tests that check
// the list's bookkeeping.
func ListIndex(ni *NodeInfo) int { return ni.listIndex() }

// Values are the slots' values by list position.
func (n *NodeSlots[S]) Values() []S { return n.vals }

// ChangeLogSize is how many replaced positions a snapshot's change log
// holds.
const ChangeLogSize = changeLogSize

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
	keys := func(ms []*VerdictMemo) [][]string {
		var out [][]string
		for _, m := range ms {
			if m == nil {
				continue
			}
			var ks []string
			m.mu.Lock()
			for k := range m.tables {
				ks = append(ks, k)
			}
			m.mu.Unlock()
			out = append(out, ks)
		}
		return out
	}
	return keys(f.filterMemo), keys(f.scoreMemo)
}
