package main

import (
	"testing"
	"time"
)

func TestMedianRound(t *testing.T) {
	// round has our pods per CPU-second ours and kube's k.
	round := func(ours, k float64) roundFigures {
		return roundFigures{kube: kubeFigure{PodsPerCPU: k}, ours: oursFigures{pending: int(ours), cpu: time.Second}}
	}
	for _, tc := range []struct {
		name   string
		rounds []roundFigures
		want   float64
		list   string
	}{
		{"one", []roundFigures{round(1000, 20)}, 50, "rounds 50.0×"},
		{"odd: the middle ratio, not the middle of either side", []roundFigures{round(3000, 50), round(1000, 25), round(2000, 20)}, 60, "rounds 60.0× 40.0× 100.0×"},
		{"even: the lower middle", []roundFigures{round(800, 10), round(600, 10), round(700, 10), round(900, 10)}, 70, "rounds 80.0× 60.0× 70.0× 90.0×"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := medianRound(tc.rounds).ratio(); got != tc.want {
				t.Errorf("median ratio = %v, want %v", got, tc.want)
			}
			if got := ratios(tc.rounds); got != tc.list {
				t.Errorf("ratios = %q, want %q", got, tc.list)
			}
		})
	}
}
