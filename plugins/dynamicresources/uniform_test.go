package dynamicresources

import (
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
