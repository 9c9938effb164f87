package runtime

import (
	"cmp"
	"math/bits"
	"slices"

	"github.com/kubectl-sched/kubectl-sched/schedcore"
)

// rankScores orders the scores best first: highest total, then lowest
// name. Node names are unique, so the order is total and any sort gives
// it; the keys are sorted rather than the structs, then the structs are
// moved into place along the permutation's cycles. byName, when not nil,
// gives each score's place in the name order (-1: unknown), compared
// rather than the names where both have one. It returns each score's rank
// (0 = best) by its index before the sort.
func rankScores(scores []schedcore.NodePluginScores, byName []int32) (rank []int32) {
	var sc rankScratch
	return sc.rankScores(scores, byName)
}

// rankScores is rankScores in sc's memory: the ranks returned and the
// sort's keys are sc's, valid until its next use.
func (sc *rankScratch) rankScores(scores []schedcore.NodePluginScores, byName []int32) (rank []int32) {
	rank = sc.rank.zeroed(len(scores))
	if len(scores) < 2 {
		return rank
	}
	idx := sc.bucketRanking(scores, byName)
	if idx == nil {
		idx = sc.packedRanking(scores, byName)
	}
	if idx == nil {
		idx = keyedRanking(scores, byName)
	}
	for r, i := range idx {
		rank[i] = int32(r)
	}
	// scores[r] must become the old scores[idx[r]]; a moved slot is marked -1.
	for r := range idx {
		if idx[r] < 0 || int(idx[r]) == r {
			continue
		}
		tmp := scores[r]
		k := r
		for int(idx[k]) != r {
			scores[k] = scores[idx[k]]
			next := int(idx[k])
			idx[k] = -1
			k = next
		}
		scores[k] = tmp
		idx[k] = -1
	}
	return rank
}

// bucketRanking returns the indexes of scores best first when every score
// has its own place in the name order and the totals and places span
// little more than the scores do (an explanation's totals are sums of a
// few weighted scores of 0 to 100, its places those of the snapshot's
// nodes): the scores are listed in name order by their places, then
// distributed, stably, into one bucket per total. That is linear; sorting
// thousands of keys was a tenth of an explanation. Nil when it does not
// apply (packedRanking or keyedRanking then sort).
func (sc *rankScratch) bucketRanking(scores []schedcore.NodePluginScores, byName []int32) []int32 {
	if byName == nil {
		return nil
	}
	n := len(scores)
	limit := 4*n + 1024
	hi, lo := scores[0].TotalScore, scores[0].TotalScore
	var maxPlace int32
	for i := range scores {
		t := scores[i].TotalScore
		hi, lo = max(hi, t), min(lo, t)
		if byName[i] < 0 || int(byName[i]) >= limit {
			return nil
		}
		maxPlace = max(maxPlace, byName[i])
	}
	// hi-lo as a uint64 is right whatever it is as an int64.
	if span := uint64(hi) - uint64(lo); span >= uint64(limit) {
		return nil
	}
	byPlace := sc.byPlace.sized(int(maxPlace) + 1)
	for p := range byPlace {
		byPlace[p] = -1
	}
	for i, p := range byName {
		if byPlace[p] >= 0 {
			return nil // two scores of one place: the keys decide
		}
		byPlace[p] = int32(i)
	}
	// start[d] is where the scores hi-d below the best go next.
	start := sc.start.zeroed(int(hi-lo) + 2)
	for i := range scores {
		start[hi-scores[i].TotalScore+1]++
	}
	for d := 1; d < len(start); d++ {
		start[d] += start[d-1]
	}
	idx := sc.idx.sized(n)
	for _, i := range byPlace {
		if i < 0 {
			continue
		}
		d := hi - scores[i].TotalScore
		idx[start[d]] = i
		start[d]++
	}
	return idx
}

// packedRanking returns the indexes of scores best first when every score
// has a place in the name order and one integer holds a score's distance
// to the best total, its place and its index: those integers sort in the
// ranking's order without a comparison function. Nil when they do not fit.
func (sc *rankScratch) packedRanking(scores []schedcore.NodePluginScores, byName []int32) []int32 {
	if byName == nil {
		return nil
	}
	hi, lo := scores[0].TotalScore, scores[0].TotalScore
	var maxPlace int32
	for i := range scores {
		t := scores[i].TotalScore
		hi, lo = max(hi, t), min(lo, t)
		if byName[i] < 0 {
			return nil
		}
		maxPlace = max(maxPlace, byName[i])
	}
	// hi-lo, wrapped in int64, is right as a uint64: when it is over
	// MaxInt64 it takes 64 bits, and the key does not fit.
	iBits := bits.Len(uint(len(scores) - 1))
	placeBits := bits.Len32(uint32(maxPlace))
	if bits.Len64(uint64(hi-lo))+placeBits+iBits > 64 {
		return nil
	}
	keys := sc.keys.sized(len(scores))
	for i := range scores {
		keys[i] = uint64(hi-scores[i].TotalScore)<<(placeBits+iBits) | uint64(byName[i])<<iBits | uint64(i)
	}
	slices.Sort(keys)
	idx := sc.idx.sized(len(scores))
	mask := uint64(1)<<iBits - 1
	for r, k := range keys {
		idx[r] = int32(k & mask)
	}
	return idx
}

// keyedRanking returns the indexes of scores best first, comparing the
// totals, then the places in the name order where both have one, else the
// names.
func keyedRanking(scores []schedcore.NodePluginScores, byName []int32) []int32 {
	// The sort keys are copied side by side: comparing them in place
	// would reach into the large score structs at random.
	type sortKey struct {
		total int64
		name  string
		place int32 // in the name order; -1 unknown
		i     int32
	}
	keys := make([]sortKey, len(scores))
	for i := range scores {
		keys[i] = sortKey{scores[i].TotalScore, scores[i].Name, -1, int32(i)}
		if byName != nil {
			keys[i].place = byName[i]
		}
	}
	slices.SortFunc(keys, func(x, y sortKey) int {
		if x.total != y.total {
			return cmp.Compare(y.total, x.total)
		}
		if x.place >= 0 && y.place >= 0 {
			return cmp.Compare(x.place, y.place)
		}
		return cmp.Compare(x.name, y.name)
	})
	idx := make([]int32, len(scores))
	for r := range keys {
		idx[r] = keys[r].i
	}
	return idx
}

// positions finds nodes by name in list (the snapshot's List()). Names
// asked for in list order are found by comparing with the name of the node
// after the last one found (from the snapshot's column of listed names, so
// no NodeInfo is read); any other is looked up by the position the
// snapshot keeps in the NodeInfo, checked against the list.
type positions struct {
	snapshot *schedcore.Snapshot
	list     []*schedcore.NodeInfo
	// names[i] is list[i]'s name.
	names []string
	next  int
}

// newPositions finds nodes in list, the snapshot's List().
func newPositions(snapshot *schedcore.Snapshot, list []*schedcore.NodeInfo) *positions {
	names := snapshot.ListedNames()
	if len(names) != len(list) {
		names = make([]string, len(list))
		for i, ni := range list {
			names[i] = ni.Name()
		}
	}
	return &positions{snapshot: snapshot, list: list, names: names}
}

// scanAhead is how many names after the last one found positions.of
// compares before it looks the name up: names asked for in list order
// skip the nodes between them (the rejected ones between two feasible
// nodes, the feasible ones between two rejected), a few at a time.
const scanAhead = 16

// of returns the position of the node named name, or -1.
func (p *positions) of(name string) int {
	i := -1
	for j := p.next; j < min(p.next+scanAhead, len(p.names)); j++ {
		if p.names[j] == name {
			i = j
			break
		}
	}
	if i < 0 {
		i = listPosition(p.snapshot, p.list, name)
	}
	p.next = i + 1
	return i
}

// listPosition returns the position in list (the snapshot's List()) of the
// node named name, or -1. It reads the position the snapshot keeps in the
// NodeInfo and checks that the list holds that node there; when it does
// not, it searches the list.
func listPosition(snapshot *schedcore.Snapshot, list []*schedcore.NodeInfo, name string) int {
	if ni := snapshot.NodeInfo(name); ni != nil {
		if i := schedcore.IndexIn(list, ni); i >= 0 {
			return i
		}
	}
	return slices.IndexFunc(list, func(ni *schedcore.NodeInfo) bool { return ni.Name() == name })
}
