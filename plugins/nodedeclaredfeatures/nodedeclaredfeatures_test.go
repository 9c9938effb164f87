package nodedeclaredfeatures

import (
	"context"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	"github.com/kubectl-sched/kubectl-sched/schedcore"
)

func TestFilter(t *testing.T) {
	hostNetNoUsers := &v1.Pod{Spec: v1.PodSpec{HostNetwork: true, HostUsers: ptr.To(false), Containers: []v1.Container{{Name: "c"}}}}
	plain := &v1.Pod{Spec: v1.PodSpec{Containers: []v1.Container{{Name: "c"}}}}
	node := func(features ...string) *schedcore.NodeInfo {
		ni := schedcore.NewNodeInfo()
		ni.SetNode(&v1.Node{Status: v1.NodeStatus{DeclaredFeatures: features}})
		return ni
	}
	cases := []struct {
		name     string
		pod      *v1.Pod
		node     *schedcore.NodeInfo
		skip     bool
		wantCode schedcore.Code
	}{
		{name: "a pod needing no feature skips the filter", pod: plain, node: node(), skip: true},
		{name: "a node declaring the needed feature fits", pod: hostNetNoUsers, node: node("UserNamespacesHostNetworkSupport"), wantCode: schedcore.Success},
		{name: "a node lacking it is rejected for good", pod: hostNetNoUsers, node: node("VolumeBindMountOptions", "SomethingUnknown"), wantCode: schedcore.UnschedulableAndUnresolvable},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p, _ := New(context.Background(), nil, nil)
			pl := p.(*NodeDeclaredFeatures)
			state := schedcore.NewCycleState()
			_, st := pl.PreFilter(context.Background(), state, c.pod, nil)
			if c.skip {
				if !st.IsSkip() {
					t.Fatalf("PreFilter = %v, want Skip", st)
				}
				return
			}
			got := pl.Filter(context.Background(), state, c.pod, c.node)
			if got.Code() != c.wantCode || (c.wantCode != schedcore.Success && got.Message() != ErrReason) {
				t.Errorf("Filter = %v, want %s %q", got, c.wantCode, ErrReason)
			}
		})
	}
}
