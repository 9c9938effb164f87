package plugins_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	configv1 "k8s.io/kube-scheduler/config/v1"

	"github.com/kubectl-sched/kubectl-sched/plugins"
	"github.com/kubectl-sched/kubectl-sched/schedcore"
	schedruntime "github.com/kubectl-sched/kubectl-sched/schedcore/runtime"
	st "github.com/kubectl-sched/kubectl-sched/schedcore/schedtest"
)

// NodePorts' verdicts are remembered per wanted ports: pods that want
// other ports (number, protocol or address) get their own, and a node
// whose ports change is decided again.
func TestRememberedPortVerdictsFollowTheWantedPorts(t *testing.T) {
	ctx := context.Background()
	cache := schedcore.NewCache(schedcore.DefaultFeatures)
	snap := schedcore.NewEmptySnapshot()
	for i := range 3 {
		cache.AddNode(st.MakeNode(fmt.Sprintf("n%d", i)).Capacity("cpu", "8", "memory", "32Gi", "pods", "110").Obj())
	}
	holder := func(name, node string, port int32, proto v1.Protocol) *v1.Pod {
		p := st.MakePod(name).HostPort(port, proto, "").Obj()
		p.Spec.NodeName = node
		return p
	}
	for _, p := range []*v1.Pod{holder("a", "n0", 8080, v1.ProtocolTCP), holder("b", "n1", 8081, v1.ProtocolTCP), holder("c", "n2", 8080, v1.ProtocolUDP)} {
		if err := cache.AddPod(p); err != nil {
			t.Fatal(err)
		}
	}
	cache.UpdateSnapshot(snap)
	name := v1.DefaultSchedulerName
	prof := &configv1.KubeSchedulerProfile{SchedulerName: &name, Plugins: plugins.DefaultPlugins()}
	fw, err := schedruntime.NewFramework(ctx, plugins.NewInTreeRegistry(), prof, schedcore.NewHandle(snap, 2), schedruntime.FrameworkOptions{})
	if err != nil {
		t.Fatal(err)
	}
	alg := &schedruntime.Algorithm{Snapshot: snap, PercentageOfNodesToScore: 100}
	rejected := func(port int32, proto v1.Protocol) []string {
		_, diag, _ := alg.SchedulePod(ctx, fw, schedcore.NewCycleState(), st.MakePod("p").HostPort(port, proto, "").Obj())
		var out []string
		if diag != nil {
			diag.NodeToStatus.ForEachExplicitNode(func(node string, s *schedcore.Status) {
				out = append(out, node+" "+s.Plugin())
			})
		}
		return out
	}
	check := func(step string, port int32, proto v1.Protocol, want ...string) {
		t.Helper()
		if diff := cmp.Diff(want, rejected(port, proto)); diff != "" {
			t.Errorf("%s: rejected nodes (-want +got):\n%s", step, diff)
		}
	}
	check("8080/TCP", 8080, v1.ProtocolTCP, "n0 NodePorts")
	check("8081/TCP", 8081, v1.ProtocolTCP, "n1 NodePorts")
	check("8080/UDP", 8080, v1.ProtocolUDP, "n2 NodePorts")
	check("8080/TCP again", 8080, v1.ProtocolTCP, "n0 NodePorts")
	cache.RemovePod(holder("a", "n0", 8080, v1.ProtocolTCP))
	if err := cache.AddPod(holder("d", "n1", 8080, v1.ProtocolTCP)); err != nil {
		t.Fatal(err)
	}
	cache.UpdateSnapshot(snap)
	check("8080/TCP after the holder moved", 8080, v1.ProtocolTCP, "n1 NodePorts")
}
