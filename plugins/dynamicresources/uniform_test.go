package dynamicresources

import (
	"context"
	"testing"

	resourceapi "k8s.io/api/resource/v1"

	"github.com/kubectl-sched/kubectl-sched/schedcore"
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

// NormalizeColumn leaves the scores NormalizeScore leaves: this fails if
// the two part ways (the framework normalizes a column when it can).
func TestNormalizeColumnAsNormalizeScore(t *testing.T) {
	for _, tc := range []struct {
		name   string
		pl     *DynamicResources
		scores []int64
	}{
		{"all zero", &DynamicResources{enabled: true}, []int64{0, 0, 0}},
		{"scaled to the highest", &DynamicResources{enabled: true}, []int64{8, 3, 0, 7, 5}},
		{"one node", &DynamicResources{enabled: true}, []int64{6}},
		{"none", &DynamicResources{enabled: true}, nil},
		{"plugin disabled", &DynamicResources{}, []int64{8, 3}},
	} {
		list := make(schedcore.NodeScoreList, len(tc.scores))
		for i, sc := range tc.scores {
			list[i] = schedcore.NodeScore{Name: string(rune('a' + i)), Score: sc}
		}
		col := append([]int64(nil), tc.scores...)
		if s := tc.pl.NormalizeScore(context.Background(), nil, nil, list); !s.IsSuccess() {
			t.Fatalf("%s: NormalizeScore: %v", tc.name, s.AsError())
		}
		if s := tc.pl.NormalizeColumn(context.Background(), nil, nil, col); !s.IsSuccess() {
			t.Fatalf("%s: NormalizeColumn: %v", tc.name, s.AsError())
		}
		for i := range list {
			if col[i] != list[i].Score {
				t.Errorf("%s: node %d: NormalizeColumn %d, NormalizeScore %d", tc.name, i, col[i], list[i].Score)
			}
		}
	}
}
