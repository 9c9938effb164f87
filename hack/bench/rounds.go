package main

import (
	"fmt"
	"sort"
	"strings"
)

// roundFigures are one side-by-side round: our runs, then kube's.
type roundFigures struct {
	kube kubeFigure
	ours oursFigures
}

// ratio is our pods per CPU-second over kube's in the round.
func (r roundFigures) ratio() float64 { return r.ours.perCPU() / r.kube.PodsPerCPU }

// medianRound is the round whose ratio is the median: of an even number,
// the lower of the two middle ones, so that the figure reported is one a
// round measured and never above what half of the rounds saw.
func medianRound(rs []roundFigures) roundFigures {
	s := append([]roundFigures(nil), rs...)
	sort.SliceStable(s, func(i, j int) bool { return s[i].ratio() < s[j].ratio() })
	return s[(len(s)-1)/2]
}

// ratios lists the rounds' ratios in the order they ran.
func ratios(rs []roundFigures) string {
	parts := make([]string, len(rs))
	for i, r := range rs {
		parts[i] = fmt.Sprintf("%.1f×", r.ratio())
	}
	return "rounds " + strings.Join(parts, " ")
}
