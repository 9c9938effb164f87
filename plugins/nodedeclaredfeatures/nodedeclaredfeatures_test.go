package nodedeclaredfeatures

import (
	"context"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/kubectl-sched/kubectl-sched/schedcore"
)

func TestFilter(t *testing.T) {
	hostNetNoUsers := &v1.Pod{Spec: v1.PodSpec{HostNetwork: true, HostUsers: ptr.To(false), Containers: []v1.Container{{Name: "c"}}}}
	plain := &v1.Pod{Spec: v1.PodSpec{Containers: []v1.Container{{Name: "c"}}}}
	node := func(features ...string) *schedcore.NodeInfo {
		ni := schedcore.NewNodeInfo()
		ni.SetNode(&v1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1"}, Status: v1.NodeStatus{DeclaredFeatures: features}})
		return ni
	}
	cases := []struct {
		name     string
		pod      *v1.Pod
		node     *schedcore.NodeInfo
		skip     bool
		wantCode schedcore.Code
		// wantGap is what ExplainFilter says of a rejected node.
		wantGap string
	}{
		{name: "a pod needing no feature skips the filter", pod: plain, node: node(), skip: true},
		{name: "a node declaring the needed feature fits", pod: hostNetNoUsers, node: node("UserNamespacesHostNetworkSupport"), wantCode: schedcore.Success},
		{name: "a node lacking it is rejected for good", pod: hostNetNoUsers, node: node("VolumeBindMountOptions", "SomethingUnknown"), wantCode: schedcore.UnschedulableAndUnresolvable,
			wantGap: "the pod needs node feature(s) UserNamespacesHostNetworkSupport; n1 does not declare UserNamespacesHostNetworkSupport (it declares VolumeBindMountOptions, SomethingUnknown)"},
		{name: "a node declaring nothing says so", pod: hostNetNoUsers, node: node(), wantCode: schedcore.UnschedulableAndUnresolvable,
			wantGap: "the pod needs node feature(s) UserNamespacesHostNetworkSupport; n1 does not declare UserNamespacesHostNetworkSupport (it declares none)"},
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
			ex := pl.ExplainFilter(context.Background(), state, c.pod, c.node, got)
			switch {
			case c.wantGap == "" && ex != nil:
				t.Errorf("ExplainFilter = %+v on a node that fits", ex)
			case c.wantGap != "" && (ex == nil || len(ex.Gaps) != 1 || ex.Gaps[0].Text != c.wantGap || ex.Shortfall != 1):
				t.Errorf("ExplainFilter = %+v, want one gap %q, shortfall 1", ex, c.wantGap)
			}
		})
	}
}
