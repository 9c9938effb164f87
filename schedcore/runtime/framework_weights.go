package runtime

import (
	"fmt"
	"math"

	configv1 "k8s.io/kube-scheduler/config/v1"

	"github.com/kubectl-sched/kubectl-sched/schedcore"
)

// scoreMemoKeys bounds the distinct keys (workloads) whose scores a
// NodeLocalScorer's memo keeps.
const scoreMemoKeys = 64

// setScoreWeights takes weights from score.enabled first, then multiPoint;
// 0 means 1; the total must not overflow. It also gives each
// NodeLocalScorer its memo.
func (f *Framework) setScoreWeights(p *configv1.Plugins) error {
	weights, err := validScoreWeights(f.pluginsMap, is[schedcore.ScorePlugin], p.Score.Enabled, p.MultiPoint.Enabled)
	if err != nil {
		return err
	}
	f.scoreWeight = make([]int64, len(f.score))
	f.scoreMemo = make([]*schedcore.VerdictMemo, len(f.score))
	for i, s := range f.score {
		if _, ok := s.(schedcore.NodeLocalScorer); ok {
			f.scoreMemo[i] = schedcore.NewVerdictMemo(scoreMemoKeys)
		}
		f.scoreWeight[i] = weights[s.Name()]
		if f.scoreWeight[i] == 0 {
			return fmt.Errorf("score plugin %q is not configured with weight", s.Name())
		}
	}
	return nil
}

// setPlacementScoreWeights does for the PlacementScore plugins what
// setScoreWeights does for Score, from placementScore.enabled then
// multiPoint, as kube (NodeResourcesFit's multiPoint weight is its
// placement weight too).
func (f *Framework) setPlacementScoreWeights(p *configv1.Plugins) error {
	weights, err := validScoreWeights(f.pluginsMap, is[schedcore.PlacementScorePlugin], p.PlacementScore.Enabled, p.MultiPoint.Enabled)
	if err != nil {
		return err
	}
	f.placementScoreWeight = make([]int64, len(f.placementScore))
	for i, s := range f.placementScore {
		f.placementScoreWeight[i] = weights[s.Name()]
		if f.placementScoreWeight[i] == 0 {
			return fmt.Errorf("placement score plugin %q is not configured with weight", s.Name())
		}
	}
	return nil
}

// validScoreWeights is kube's getValidScoreWeights: the weight of each
// plugin of the kind, the point's own list first, then multiPoint (an
// explicit weight wins); 0 means 1; the total of weight*MaxNodeScore must
// not overflow.
func validScoreWeights(plugins map[string]schedcore.Plugin, implements func(schedcore.Plugin) bool, lists ...[]configv1.Plugin) (map[string]int64, error) {
	weights := map[string]int64{}
	var total int64
	for _, list := range lists {
		for _, e := range list {
			if !implements(plugins[e.Name]) {
				continue
			}
			if _, ok := weights[e.Name]; ok {
				continue
			}
			var w int64 = 1
			if e.Weight != nil && *e.Weight != 0 {
				w = int64(*e.Weight)
			}
			if w < 0 {
				return nil, fmt.Errorf("plugin %q: weight %d must be positive", e.Name, w)
			}
			if w*schedcore.MaxNodeScore > math.MaxInt64-total {
				return nil, fmt.Errorf("total score of Score plugins could overflow")
			}
			total += w * schedcore.MaxNodeScore
			weights[e.Name] = w
		}
	}
	return weights, nil
}

// GangSchedulingName is the plugin kube's framework wires as the one
// PlacementFeasible plugin when GenericWorkload is on.
const GangSchedulingName = "GangScheduling"

// setPlacementFeasible wires GangScheduling as the one PlacementFeasible
// plugin when GenericWorkload is on and the profile has it (kube's
// NewFramework: the point is internal and no config lists it).
func (f *Framework) setPlacementFeasible() error {
	if f.handle == nil || !f.handle.Features().GenericWorkload {
		return nil
	}
	gs, ok := f.pluginsMap[GangSchedulingName]
	if !ok {
		// kube logs "GenericWorkload is enabled, but GangScheduling
		// plugin is not set" and goes on.
		return nil
	}
	p, ok := gs.(schedcore.PlacementFeasiblePlugin)
	if !ok {
		return fmt.Errorf("GenericWorkload is enabled, but GangScheduling plugin does not fulfill PlacementFeasiblePlugin interface")
	}
	f.placementFeasible = append(f.placementFeasible, p)
	return nil
}
