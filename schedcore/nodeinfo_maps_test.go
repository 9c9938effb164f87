package schedcore_test

import (
	"testing"

	v1 "k8s.io/api/core/v1"

	"github.com/kubectl-sched/kubectl-sched/schedcore"
	"github.com/kubectl-sched/kubectl-sched/schedcore/schedtest"
)

// A NodeInfo's host port and claim maps are made when first written and
// copied by Clone only when not empty: a clone (preemption's and the
// nominated pods' what-ifs) takes and releases ports and claims without
// touching the original, either way.
func TestNodeInfoMapsAcrossClones(t *testing.T) {
	plain := schedtest.MakePod("plain").UID("plain").Node("n").Obj()
	ported := schedtest.MakePod("ported").UID("ported").Node("n").HostPort(8080, v1.ProtocolTCP, "").PVC("claim").Obj()

	empty := schedcore.NewNodeInfo(plain)
	c := empty.Clone()
	c.AddPod(ported)
	if !c.UsedPorts.CheckConflict("", "TCP", 8080) || c.PVCRefCounts["default/claim"] != 1 {
		t.Errorf("clone with the pod added: ports %v, claims %v; want port 8080 and the claim", c.UsedPorts, c.PVCRefCounts)
	}
	if empty.UsedPorts.Len() != 0 || len(empty.PVCRefCounts) != 0 {
		t.Errorf("original changed by its clone: ports %v, claims %v", empty.UsedPorts, empty.PVCRefCounts)
	}

	full := schedcore.NewNodeInfo(plain, ported)
	c = full.Clone()
	if err := c.RemovePod(ported, schedcore.DefaultFeatures); err != nil {
		t.Fatal(err)
	}
	if c.UsedPorts.CheckConflict("", "TCP", 8080) || len(c.PVCRefCounts) != 0 {
		t.Errorf("clone with the pod removed: ports %v, claims %v; want none", c.UsedPorts, c.PVCRefCounts)
	}
	if !full.UsedPorts.CheckConflict("", "TCP", 8080) || full.PVCRefCounts["default/claim"] != 1 {
		t.Errorf("original changed by its clone: ports %v, claims %v", full.UsedPorts, full.PVCRefCounts)
	}
	// Removing again from the emptied clone, and from a NodeInfo that never
	// had the maps, changes nothing.
	for _, ni := range []*schedcore.NodeInfo{c.Clone(), schedcore.NewNodeInfo()} {
		_ = ni.RemovePod(ported, schedcore.DefaultFeatures)
		if ni.UsedPorts.Len() != 0 || len(ni.PVCRefCounts) != 0 {
			t.Errorf("ports %v, claims %v after removing a pod not there; want none", ni.UsedPorts, ni.PVCRefCounts)
		}
	}
}
