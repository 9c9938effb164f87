package runtime

import (
	"math/bits"
	"sync"

	"github.com/kubectl-sched/kubectl-sched/schedcore"
)

// spareScoreBuffers are score columns for the cycles that keep every
// node's scores (Explain, and cycles that find the framework's buffers
// taken): an explanation on 5000 nodes needs about a megabyte of them,
// which are garbage once its scores are listed. Only the columns are
// reused: the per-node results (scoreBuffers.out) are the caller's.
var spareScoreBuffers sync.Pool

// spareScores are the per-node results of released explanations
// (Explanation.Release), cleared: 72 bytes a node, which nothing reads
// once the explanation is rendered. A list taken from here is its
// taker's; only Release puts one back.
var spareScores sync.Pool

// getSpareScoreBuffers returns score columns no other cycle uses, with
// the per-node results of a released explanation, if any, for get to
// reuse (it makes them afresh when they are too short).
func getSpareScoreBuffers() *scoreBuffers {
	b, _ := spareScoreBuffers.Get().(*scoreBuffers)
	if b == nil {
		b = new(scoreBuffers)
	}
	b.out = nil
	if p, _ := spareScores.Get().(*[]schedcore.NodePluginScores); p != nil {
		b.out = *p
	}
	return b
}

// putSpareScores keeps scores, a released explanation's, for another
// cycle's results; nothing may read them afterwards.
func putSpareScores(scores []schedcore.NodePluginScores) {
	if cap(scores) == 0 {
		return
	}
	scores = scores[:cap(scores)]
	clear(scores)
	spareScores.Put(&scores)
}

// putSpareScoreBuffers keeps b's columns for another cycle; the per-node
// results stay the caller's.
func putSpareScoreBuffers(b *scoreBuffers) {
	b.out = nil
	spareScoreBuffers.Put(b)
}

// listScores gives every node of out (the cycle's nodes, in the columns'
// order) its per-plugin lists, RawScores and Scores, from b's columns.
// Nodes whose raw and normalized scores are all equal share one pair of
// lists, which readers only read: on a large cluster most nodes score
// alike (Explain on 5000 identical nodes has two distinct rows), and a
// pair of lists per node was most of what an explanation allocated. A
// node is compared with the previous node's row first (alike nodes are
// often listed side by side), then with the rows of the same hash.
func (b *scoreBuffers) listScores(out []schedcore.NodePluginScores) {
	b.listScoresBy(out, b.rowHashes)
}

// listScoresBy is listScores with the function that fills in the rows'
// hashes (tests give one that collides). The hashes are computed a column
// at a time and the rows are found in an open-addressing table of row
// numbers kept between cycles: a map of hashes, cleared and grown each
// cycle, and reading each node's row across the columns to hash it were
// most of the time listScores took.
func (b *scoreBuffers) listScoresBy(out []schedcore.NodePluginScores, rowHashes func(h []uint64)) {
	np := len(b.names)
	if len(out) == 0 {
		return
	}
	sc := getRowScratch(len(out))
	defer putRowScratch(sc)
	// row[i] is the distinct row node i has; first[r] the first node with row r.
	row, first, hash, table := sc.row, sc.first, sc.hash, sc.table
	defer func() { sc.first = first }()
	rowHashes(hash)
	mask := uint64(len(table) - 1)
	for i := range out {
		if i > 0 && hash[i] == hash[i-1] && b.sameRow(int(first[row[i-1]]), i) {
			row[i] = row[i-1]
			continue
		}
		// table holds row+1 (0: free) at the first free slot from its
		// hash on; a row is found by probing from the node's hash until a
		// free slot.
		h := hash[i]
		slot := h & mask
		r := int32(-1)
		for table[slot] != 0 {
			k := table[slot] - 1
			if f := int(first[k]); hash[f] == h && b.sameRow(f, i) {
				r = k
				break
			}
			slot = (slot + 1) & mask
		}
		if r < 0 {
			r = int32(len(first))
			first = append(first, int32(i))
			table[slot] = r + 1
		}
		row[i] = r
	}
	rs, ws := make([]schedcore.PluginScore, len(first)*np), make([]schedcore.PluginScore, len(first)*np)
	for r, i := range first {
		b.pluginScores(int(i), rs[r*np:(r+1)*np:(r+1)*np], ws[r*np:(r+1)*np:(r+1)*np])
	}
	for i := range out {
		r := int(row[i])
		out[i].RawScores, out[i].Scores = rs[r*np:(r+1)*np:(r+1)*np], ws[r*np:(r+1)*np:(r+1)*np]
	}
}

// rowScratch is listScoresBy's working memory, kept between cycles (a
// cycle of 5000 nodes needs some 100 KB of it): nothing of it outlives
// the call.
type rowScratch struct {
	row, first []int32
	hash       []uint64
	// table is the open-addressing table, a power of two at least twice
	// the nodes.
	table []int32
}

var spareRowScratch sync.Pool

// getRowScratch returns empty working memory with n rows.
func getRowScratch(n int) *rowScratch {
	sc, _ := spareRowScratch.Get().(*rowScratch)
	if sc == nil {
		sc = &rowScratch{}
	}
	if cap(sc.row) < n {
		sc.row, sc.hash = make([]int32, n), make([]uint64, n)
	}
	sc.row, sc.hash = sc.row[:n], sc.hash[:n]
	sc.first = sc.first[:0]
	size := 1 << bits.Len(uint(2*n-1))
	if cap(sc.table) < size {
		sc.table = make([]int32, size)
	}
	sc.table = sc.table[:size]
	clear(sc.table)
	return sc
}

func putRowScratch(sc *rowScratch) { spareRowScratch.Put(sc) }

// sameRow reports whether nodes i and k have the same raw and normalized
// score for every plugin.
func (b *scoreBuffers) sameRow(i, k int) bool {
	for j := range b.names {
		if b.raw[j][i] != b.raw[j][k] || b.normalized(j, i) != b.normalized(j, k) {
			return false
		}
	}
	return true
}

// rowHash mixes node i's raw and normalized scores.
func (b *scoreBuffers) rowHash(i int) uint64 {
	var h uint64
	for j := range b.names {
		h = mixScore(mixScore(h, b.raw[j][i]), b.normalized(j, i))
	}
	return h
}

// rowHashes sets h[i] to rowHash(i) for every node, a column at a time.
func (b *scoreBuffers) rowHashes(h []uint64) {
	clear(h)
	for j := range b.names {
		raw := b.raw[j][:len(h)]
		switch {
		case len(b.cols[j]) != 0:
			col := b.cols[j][:len(h)]
			for i := range h {
				h[i] = mixScore(mixScore(h[i], raw[i]), col[i])
			}
		default:
			for i := range h {
				h[i] = mixScore(mixScore(h[i], raw[i]), raw[i])
			}
		}
	}
}

// mixScore mixes v into the hash h.
func mixScore(h uint64, v int64) uint64 {
	h = (h ^ uint64(v)) * 0x9e3779b97f4a7c15
	return h ^ h>>29
}
