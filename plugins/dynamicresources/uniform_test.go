package dynamicresources

import (
	"context"
	"testing"

	resourceapi "k8s.io/api/resource/v1"

	"github.com/kubectl-sched/kubectl-sched/schedcore"
	"github.com/kubectl-sched/kubectl-sched/schedcore/plugintest"
)

// UniformScore lets the framework skip Score on every node: it may say so
// only when Score returns 0 without looking at the node. A pod with claims
// is scored from its allocations node by node (TestScoreFirstAvailable).
func TestUniformScoreOnlyWithoutClaims(t *testing.T) {
	f := schedcore.DefaultFeatures
	f.DRAPrioritizedList = true
	withClaim := &stateData{claims: claimStore{claims: []*resourceapi.ResourceClaim{claim("c1", resourceapi.DeviceRequest{Name: "gpu"})}, numUserOwned: 1}}
	for _, tc := range []struct {
		name    string
		pl      *DynamicResources
		state   *stateData
		uniform bool
	}{
		{"no claims", &DynamicResources{enabled: true, features: f}, &stateData{}, true},
		{"claims", &DynamicResources{enabled: true, features: f}, withClaim, false},
		{"no state", &DynamicResources{enabled: true, features: f}, nil, false},
		{"plugin disabled", &DynamicResources{features: f}, withClaim, true},
		{"prioritized lists disabled", &DynamicResources{enabled: true, features: schedcore.Features{}}, withClaim, true},
	} {
		cs := schedcore.NewCycleState()
		if tc.state != nil {
			cs.Write(stateKey, tc.state)
		}
		v, ok := tc.pl.UniformScore(cs, nil)
		if ok != tc.uniform || v != 0 {
			t.Errorf("%s: UniformScore = %d, %v; want 0, %v", tc.name, v, ok, tc.uniform)
		}
	}
}

// NormalizeColumn (also NormalizeScore's arithmetic) scales the scores as
// kube's NormalizeScore does: MaxNodeScore * score / highest, integers, all
// zero left as they are.
func TestNormalizeColumn(t *testing.T) {
	for _, tc := range []struct {
		name         string
		pl           *DynamicResources
		scores, want []int64
	}{
		{"all zero", &DynamicResources{enabled: true}, []int64{0, 0, 0}, []int64{0, 0, 0}},
		{"scaled to the highest", &DynamicResources{enabled: true}, []int64{8, 3, 0, 7, 5}, []int64{100, 37, 0, 87, 62}},
		{"one node", &DynamicResources{enabled: true}, []int64{6}, []int64{100}},
		{"none", &DynamicResources{enabled: true}, nil, nil},
		{"plugin disabled", &DynamicResources{}, []int64{8, 3}, []int64{8, 3}},
	} {
		list := make(schedcore.NodeScoreList, len(tc.scores))
		for i, sc := range tc.scores {
			list[i] = schedcore.NodeScore{Name: string(rune('a' + i)), Score: sc}
		}
		if s := plugintest.Normalize(context.Background(), tc.pl, nil, nil, list); !s.IsSuccess() {
			t.Fatalf("%s: NormalizeScore: %v", tc.name, s.AsError())
		}
		for i := range list {
			if list[i].Score != tc.want[i] {
				t.Errorf("%s: node %d: %d, want %d", tc.name, i, list[i].Score, tc.want[i])
			}
		}
	}
}
