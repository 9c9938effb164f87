package runtime

import (
	"slices"
	"sync"
	"sync/atomic"

	"github.com/kubectl-sched/kubectl-sched/schedcore"
)

// explainScratch is an explanation's working memory, by node: which nodes
// are feasible, the rejected nodes' statuses by position, the positions of
// the scored nodes and their places by name, and the ranking's sort keys.
// On 5000 nodes it is some 150 KB, garbage once the explanation is built
// (or, for ExplainShortfalls, released: Detail reads the statuses), so it
// is kept for the next explanation. Every column is handed out either
// zeroed or to be written whole before it is read (sized).
type explainScratch struct {
	feasible             scratchCol[bool]
	statuses             scratchCol[*schedcore.Status]
	at, byName, rejected scratchCol[int32]
	rank                 rankScratch
	verdicts             verdictSlab
}

// verdictSlab holds the rejected nodes' lists of verdicts side by side
// (most nodes have one or two verdicts: thousands of small lists
// otherwise), handed out to the nodes' diagnoses as they run in parallel.
type verdictSlab struct {
	buf []FilterVerdict
	// used counts the verdicts handed out.
	used atomic.Int64
}

// reset makes room for about n verdicts, none handed out.
func (s *verdictSlab) reset(n int) *verdictSlab {
	clear(s.buf[:min(int(s.used.Load()), len(s.buf))])
	if cap(s.buf) < n {
		s.buf = make([]FilterVerdict, n+n/4)
	}
	s.buf = s.buf[:cap(s.buf)]
	s.used.Store(0)
	return s
}

// copyOf returns a copy of vs, in the slab while it has room (a list of
// its own otherwise, and for a nil slab).
func (s *verdictSlab) copyOf(vs []FilterVerdict) []FilterVerdict {
	if s == nil {
		return slices.Clone(vs)
	}
	end := s.used.Add(int64(len(vs)))
	if end > int64(len(s.buf)) {
		return slices.Clone(vs)
	}
	out := s.buf[end-int64(len(vs)) : end : end]
	copy(out, vs)
	return out
}

// rankScratch is rankScores' working memory.
type rankScratch struct {
	rank, idx, byPlace, start scratchCol[int32]
	keys                      scratchCol[uint64]
}

// scratchCol is a column of scratch memory, grown as needed.
type scratchCol[T any] struct{ s []T }

// sized returns the column at length n with whatever it held: the caller
// writes every element before reading it.
func (c *scratchCol[T]) sized(n int) []T {
	if cap(c.s) < n {
		c.s = make([]T, n)
	}
	c.s = c.s[:n]
	return c.s
}

// zeroed returns the column at length n, every element zero.
func (c *scratchCol[T]) zeroed(n int) []T {
	s := c.sized(n)
	clear(s)
	return s
}

var spareExplainScratch sync.Pool

func getExplainScratch() *explainScratch {
	if sc, _ := spareExplainScratch.Get().(*explainScratch); sc != nil {
		return sc
	}
	return new(explainScratch)
}

// putExplainScratch keeps sc for another explanation; nothing may read
// what it handed out afterwards.
func putExplainScratch(sc *explainScratch) { spareExplainScratch.Put(sc) }
