package schedcore

import "sync"

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
	if p, _ := spareScores.Get().(*[]NodePluginScores); p != nil {
		b.out = *p
	}
	return b
}

// putSpareScores keeps scores, a released explanation's, for another
// cycle's results; nothing may read them afterwards.
func putSpareScores(scores []NodePluginScores) {
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
func (b *scoreBuffers) listScores(out []NodePluginScores) {
	b.listScoresBy(out, b.rowHash)
}

// listScoresBy is listScores with the rows' hash function (tests give one
// that collides).
func (b *scoreBuffers) listScoresBy(out []NodePluginScores, rowHash func(i int) uint64) {
	np := len(b.names)
	if len(out) == 0 {
		return
	}
	sc := getRowScratch(len(out))
	defer putRowScratch(sc)
	// row[i] is the distinct row node i has; first[r] the first node with row r.
	row, first := sc.row, sc.first
	// byHash is the last row of a hash; sameHash[r] the row before r with r's hash (-1: none).
	byHash, sameHash := sc.byHash, sc.sameHash
	defer func() { sc.first, sc.sameHash = first, sameHash }()
	for i := range out {
		if i > 0 && b.sameRow(int(first[row[i-1]]), i) {
			row[i] = row[i-1]
			continue
		}
		h := rowHash(i)
		r, ok := byHash[h]
		if !ok {
			r = -1
		}
		for r >= 0 && !b.sameRow(int(first[r]), i) {
			r = sameHash[r]
		}
		if r < 0 {
			r = int32(len(first))
			first = append(first, int32(i))
			prev, ok := byHash[h]
			if !ok {
				prev = -1
			}
			sameHash = append(sameHash, prev)
			byHash[h] = r
		}
		row[i] = r
	}
	rs, ws := make([]PluginScore, len(first)*np), make([]PluginScore, len(first)*np)
	for r, i := range first {
		b.pluginScores(int(i), rs[r*np:(r+1)*np:(r+1)*np], ws[r*np:(r+1)*np:(r+1)*np])
	}
	for i := range out {
		r := int(row[i])
		out[i].RawScores, out[i].Scores = rs[r*np:(r+1)*np:(r+1)*np], ws[r*np:(r+1)*np:(r+1)*np]
	}
}

// rowScratch is listScoresBy's working memory, kept between cycles (a
// cycle of 5000 nodes needs some 40 KB of it): nothing of it outlives
// the call.
type rowScratch struct {
	row, first, sameHash []int32
	byHash               map[uint64]int32
}

var spareRowScratch sync.Pool

// getRowScratch returns empty working memory with n rows.
func getRowScratch(n int) *rowScratch {
	sc, _ := spareRowScratch.Get().(*rowScratch)
	if sc == nil {
		sc = &rowScratch{byHash: map[uint64]int32{}}
	}
	if cap(sc.row) < n {
		sc.row = make([]int32, n)
	}
	sc.row = sc.row[:n]
	sc.first, sc.sameHash = sc.first[:0], sc.sameHash[:0]
	clear(sc.byHash)
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
		for _, v := range [2]int64{b.raw[j][i], b.normalized(j, i)} {
			h = (h ^ uint64(v)) * 0x9e3779b97f4a7c15
			h ^= h >> 29
		}
	}
	return h
}
