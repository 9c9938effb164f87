package explain

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kubectl-sched/kubectl-sched/internal/snapshot"
)

// TestVolumeGapsSayWhatTheVolumesLack explains pods of the volumes
// snapshot (testdata/kubebench/volumes-cluster.yaml, whose per-node
// verdicts test/conformance checks against kube-scheduler) on one node
// each and checks the volume plugins' gaps.
func TestVolumeGapsSayWhatTheVolumesLack(t *testing.T) {
	cl, err := snapshot.LoadPaths([]string{"../../testdata/kubebench/volumes-cluster.yaml"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, pod, node string
		plugin          string // only this plugin's gaps are compared
		want            []string
	}{
		{"no PV of the class is big enough", "p05-local-big", "n-b2", "VolumeBinding", []string{
			"claim default/local-claim-big (100Gi, ReadWriteOnce, class local): no available PV binds on this node and StorageClass local has no provisioner (static binding only); " +
				"PVs usable on this node: local-b2 (5Gi, too small), pv-prebound-b2 (2Gi, too small); 6 PV(s) of the class are for other nodes"}},
		{"PVs taken, of other access modes", "p05-local-big", "n-c2", "VolumeBinding", []string{
			"claim default/local-claim-big (100Gi, ReadWriteOnce, class local): no available PV binds on this node and StorageClass local has no provisioner (static binding only); " +
				"PVs usable on this node: local-c2 (access modes ReadOnlyMany, the claim wants ReadWriteOnce), pv-local-bound (bound to default/local-bound); 6 PV(s) of the class are for other nodes"}},
		{"a claim selector matching no PV", "p06-local-slow", "n-b1", "VolumeBinding", []string{
			"claim default/local-slow (1Gi, ReadWriteOnce, class local): no available PV binds on this node and StorageClass local has no provisioner (static binding only); " +
				"PVs usable on this node: local-b1 (labels do not match the claim's selector); 7 PV(s) of the class are for other nodes"}},
		{"a class whose allowed topologies exclude the node", "p36-dyn-on-c1", "n-c1", "VolumeBinding", []string{
			"claim default/dyn-3: StorageClass csi-wffc provisions only where topology.kubernetes.io/zone in (zone-a, zone-b); node has topology.kubernetes.io/zone=zone-c"}},
		{"a capacity with a maximum volume size", "p14-cap-50", "n-b2", "VolumeBinding", []string{
			"claim default/cap-50 requests 50Gi of class cap-wffc: the CSIStorageCapacities covering this node have less: cap-n-b2 100Gi, maximum volume size 2Gi"}},
		{"no capacity for the node", "p14-cap-50", "n-c1", "VolumeBinding", []string{
			"claim default/cap-50 requests 50Gi of class cap-wffc: no CSIStorageCapacity of the class covers this node"}},
		{"provisioning started for another node", "p44-selected-b1", "n-a2", "VolumeBinding", []string{
			"claim default/selected-b1 is being provisioned for node n-b1 (annotation volume.kubernetes.io/selected-node)"}},
		{"a bound PV's node affinity", "p31-affine-d", "n-b1", "VolumeBinding", []string{
			"claim default/affine-d is bound to PV pv-affine-d, whose node affinity excludes the node: label topology.kubernetes.io/zone=zone-d wanted, node has topology.kubernetes.io/zone=zone-b"}},
		{"a bound local PV on another node", "p37-local-bound-on-a1", "n-a1", "VolumeBinding", []string{
			"claim default/local-bound is bound to PV pv-local-bound, whose node affinity excludes the node: label kubernetes.io/hostname=n-c2 wanted, node has kubernetes.io/hostname=n-a1"}},
		{"a PV in a zone without nodes", "p33-zonal-d", "n-a2", "VolumeZone", []string{
			"PV pv-zone-d is in topology.kubernetes.io/zone=zone-d, node has topology.kubernetes.io/zone=zone-a"}},
		{"a PV's beta zone label against the node's GA one", "p51-beta-zone-c", "n-b1", "VolumeZone", []string{
			"PV pv-beta-zone-c is in failure-domain.beta.kubernetes.io/zone=zone-c, node has topology.kubernetes.io/zone=zone-b"}},
		{"a PV in another region", "p52-region-2", "n-a2", "VolumeZone", []string{
			"PV pv-region-2 is in topology.kubernetes.io/region=region-2, node has topology.kubernetes.io/region=region-1"}},
		{"a CSI volume limit reached", "p10-dyn-pinned-a1", "n-a1", "NodeVolumeLimits", []string{
			"csi.example.com: the node attaches at most 1 volume(s) (CSINode allocatable), its pods use 1, this pod adds 1"}},
		{"inline EBS volumes counted against the migrated driver's limit", "p47-two-ebs-a2", "n-a2", "NodeVolumeLimits", []string{
			"ebs.csi.aws.com: the node attaches at most 1 volume(s) (CSINode allocatable), its pods use 0, this pod adds 2"}},
		{"a CSI driver missing from the node", "p11-dyn-2-c2", "n-c2", "NodeVolumeLimits", []string{
			"CSI driver csi.example.com is not on the node's CSINode (its CSIDriver sets preventPodSchedulingIfMissing)"}},
		{"a ReadWriteOncePod claim in use elsewhere", "p20-rwop-used", "n-a2", "VolumeRestrictions", []string{
			"claim default/rwop-used (ReadWriteOncePod) is in use by pod default/run-rwop on node n-b2"}},
		{"a GCE PD mounted by a pod of the node", "p27-pd-c1", "n-c1", "VolumeRestrictions", []string{
			"GCE PD disk-1 is in use by pod default/run-pd on this node"}},
	}
	o := options(t)
	s, err := NewState(context.Background(), cl, o)
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pod, err := FindPod(cl, "default", tt.pod)
			if err != nil {
				t.Fatal(err)
			}
			s.o.Node = tt.node
			rep, err := s.Explain(context.Background(), pod)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, g := range rep.Nodes[0].Gaps {
				if g.Plugin == tt.plugin {
					got = append(got, g.Gap)
				}
			}
			if d := cmp.Diff(tt.want, got); d != "" {
				t.Errorf("%s gaps on %s (-want +got):\n%s\nall gaps: %+v", tt.plugin, tt.node, d, rep.Nodes[0].Gaps)
			}
		})
	}
}
