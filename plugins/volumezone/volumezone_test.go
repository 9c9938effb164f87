package volumezone

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"

	"github.com/kubectl-sched/kubectl-sched/schedcore"
	"github.com/kubectl-sched/kubectl-sched/schedcore/schedtest"
)

func TestVolumeZone(t *testing.T) {
	pvs := []*v1.PersistentVolume{
		schedtest.MakePV("pv-a", "1Gi", "imm").Label(v1.LabelTopologyZone, "zone-a").Obj(),
		schedtest.MakePV("pv-beta-a", "1Gi", "imm").Label(v1.LabelFailureDomainBetaZone, "zone-a").Obj(),
		schedtest.MakePV("pv-ab", "1Gi", "imm").Label(v1.LabelTopologyZone, "zone-a__zone-b").Obj(),
		schedtest.MakePV("pv-region", "1Gi", "imm").Label(v1.LabelTopologyRegion, "r1").Obj(),
		schedtest.MakePV("pv-plain", "1Gi", "imm").Obj(),
	}
	pvcs := []*v1.PersistentVolumeClaim{
		schedtest.MakePVC("c-a", "1Gi", "imm").Bound("pv-a").Obj(),
		schedtest.MakePVC("c-beta-a", "1Gi", "imm").Bound("pv-beta-a").Obj(),
		schedtest.MakePVC("c-ab", "1Gi", "imm").Bound("pv-ab").Obj(),
		schedtest.MakePVC("c-region", "1Gi", "imm").Bound("pv-region").Obj(),
		schedtest.MakePVC("c-plain", "1Gi", "imm").Bound("pv-plain").Obj(),
		schedtest.MakePVC("c-ghost", "1Gi", "imm").Bound("pv-ghost").Obj(),
		schedtest.MakePVC("c-wffc", "1Gi", "wait").Obj(),
		schedtest.MakePVC("c-imm", "1Gi", "imm").Obj(),
		schedtest.MakePVC("c-noclass", "1Gi", "").Obj(),
		schedtest.MakePVC("c-unknown", "1Gi", "gone").Obj(),
	}
	classes := []*storagev1.StorageClass{
		schedtest.MakeStorageClass("wait", "x", storagev1.VolumeBindingWaitForFirstConsumer),
		schedtest.MakeStorageClass("imm", "x", storagev1.VolumeBindingImmediate),
	}
	nodes := []*v1.Node{
		schedtest.MakeNode("n-a").Label(v1.LabelTopologyZone, "zone-a").Label(v1.LabelTopologyRegion, "r1").Obj(),
		schedtest.MakeNode("n-b").Label(v1.LabelTopologyZone, "zone-b").Label(v1.LabelTopologyRegion, "r2").Obj(),
		schedtest.MakeNode("n-beta-b").Label(v1.LabelFailureDomainBetaZone, "zone-b").Obj(),
		schedtest.MakeNode("n-none").Obj(),
	}
	snap := schedcore.NewSnapshot(nil, nodes)
	snap.Storage = schedcore.NewStorageState(pvcs, pvs, classes, nil, nil, nil)
	h := schedcore.NewHandle(snap, 1)
	p, err := New(context.Background(), nil, h)
	if err != nil {
		t.Fatal(err)
	}
	pl := p.(*VolumeZone)
	conflict := ErrReasonConflict
	tests := []struct {
		name    string
		claim   string
		wantPre schedcore.Code
		wantMsg string
		// want is each node's Filter message, "" when it fits.
		want map[string]string
	}{
		{"a zonal PV fits its zone and nodes without zone labels", "c-a", schedcore.Success, "", map[string]string{"n-a": "", "n-b": conflict, "n-beta-b": conflict, "n-none": ""}},
		{"a PV's beta zone label matches the node's GA label", "c-beta-a", schedcore.Success, "", map[string]string{"n-a": "", "n-b": conflict, "n-beta-b": conflict, "n-none": ""}},
		{"a multi-zone PV fits each of its zones", "c-ab", schedcore.Success, "", map[string]string{"n-a": "", "n-b": "", "n-beta-b": conflict, "n-none": ""}},
		{"a regional PV needs the node's region", "c-region", schedcore.Success, "", map[string]string{"n-a": "", "n-b": conflict, "n-beta-b": conflict, "n-none": ""}},
		{"a PV without topology labels is skipped", "c-plain", schedcore.Skip, "", nil},
		{"an unbound WaitForFirstConsumer claim is skipped", "c-wffc", schedcore.Skip, "", nil},
		{"an unbound Immediate claim has no PV name", "c-imm", schedcore.UnschedulableAndUnresolvable, "PersistentVolume had no name", nil},
		{"an unbound claim without class", "c-noclass", schedcore.UnschedulableAndUnresolvable, "PersistentVolumeClaim had no pv name and storageClass name", nil},
		{"an unknown class is the lister's NotFound", "c-unknown", schedcore.UnschedulableAndUnresolvable, `storageclass.storage.k8s.io "gone" not found`, nil},
		{"a missing PV is the lister's NotFound", "c-ghost", schedcore.UnschedulableAndUnresolvable, `persistentvolume "pv-ghost" not found`, nil},
		{"a missing claim is the lister's NotFound", "nope", schedcore.UnschedulableAndUnresolvable, `persistentvolumeclaim "nope" not found`, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pod := schedtest.MakePod("p").PVC(tt.claim).Obj()
			cs := schedcore.NewCycleState()
			_, st := pl.PreFilter(context.Background(), cs, pod, nil)
			if st.Code() != tt.wantPre || st.Message() != tt.wantMsg {
				t.Fatalf("PreFilter = %v %q, want %v %q", st.Code(), st.Message(), tt.wantPre, tt.wantMsg)
			}
			if !st.IsSuccess() {
				return
			}
			for _, ni := range h.Snapshot().List() {
				fs := pl.Filter(context.Background(), cs, pod, ni)
				if got := fs.Message(); got != tt.want[ni.Name()] {
					t.Errorf("Filter on %s = %q, want %q", ni.Name(), got, tt.want[ni.Name()])
				}
				if !fs.IsSuccess() && fs.Code() != schedcore.UnschedulableAndUnresolvable {
					t.Errorf("Filter on %s code = %v", ni.Name(), fs.Code())
				}
				if got := pl.ExplainFilter(context.Background(), cs, pod, ni, fs); (got != nil) != !fs.IsSuccess() {
					t.Errorf("ExplainFilter on %s = %+v, but Filter = %v", ni.Name(), got, fs)
				}
			}
		})
	}
}

func TestExplainFilterNamesThePVLabelAndTheNodeValue(t *testing.T) {
	pvs := []*v1.PersistentVolume{
		schedtest.MakePV("pv-ab", "1Gi", "imm").Label(v1.LabelTopologyZone, "zone-b__zone-a").Obj(),
		schedtest.MakePV("pv-beta-a", "1Gi", "imm").Label(v1.LabelFailureDomainBetaZone, "zone-a").Obj(),
		schedtest.MakePV("pv-region", "1Gi", "imm").Label(v1.LabelTopologyRegion, "r1").Obj(),
	}
	pvcs := []*v1.PersistentVolumeClaim{
		schedtest.MakePVC("c-ab", "1Gi", "imm").Bound("pv-ab").Obj(),
		schedtest.MakePVC("c-beta-a", "1Gi", "imm").Bound("pv-beta-a").Obj(),
		schedtest.MakePVC("c-region", "1Gi", "imm").Bound("pv-region").Obj(),
	}
	snap := schedcore.NewSnapshot(nil, nil)
	snap.Storage = schedcore.NewStorageState(pvcs, pvs, nil, nil, nil, nil)
	p, err := New(context.Background(), nil, schedcore.NewHandle(snap, 1))
	if err != nil {
		t.Fatal(err)
	}
	pl := p.(*VolumeZone)
	tests := []struct {
		name  string
		claim string
		node  *v1.Node
		want  *schedcore.FilterExplanation
	}{
		{"a node in another zone", "c-ab", schedtest.MakeNode("n").Label(v1.LabelTopologyZone, "zone-c").Obj(),
			schedcore.NewFilterExplanation(1, "PV pv-ab is in topology.kubernetes.io/zone in (zone-a, zone-b), node has topology.kubernetes.io/zone=zone-c")},
		{"a node in one of the zones", "c-ab", schedtest.MakeNode("n").Label(v1.LabelTopologyZone, "zone-a").Obj(), nil},
		{"a beta label compared with the node's GA one", "c-beta-a", schedtest.MakeNode("n").Label(v1.LabelTopologyZone, "zone-b").Obj(),
			schedcore.NewFilterExplanation(1, "PV pv-beta-a is in failure-domain.beta.kubernetes.io/zone=zone-a, node has topology.kubernetes.io/zone=zone-b")},
		{"a node without the region label", "c-region", schedtest.MakeNode("n").Label(v1.LabelTopologyZone, "zone-a").Obj(),
			schedcore.NewFilterExplanation(1, "PV pv-region is in topology.kubernetes.io/region=r1, node has no topology.kubernetes.io/region label")},
		{"a node without any topology label passes", "c-region", schedtest.MakeNode("n").Obj(), nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pod := schedtest.MakePod("p").PVC(tt.claim).Obj()
			cs := schedcore.NewCycleState()
			if _, st := pl.PreFilter(context.Background(), cs, pod, nil); !st.IsSuccess() {
				t.Fatalf("PreFilter: %v", st)
			}
			ni := schedcore.NewNodeInfo()
			ni.SetNode(tt.node)
			got := pl.ExplainFilter(context.Background(), cs, pod, ni, schedcore.NewStatus(schedcore.UnschedulableAndUnresolvable, ErrReasonConflict))
			if d := cmp.Diff(tt.want, got); d != "" {
				t.Errorf("ExplainFilter (-want +got):\n%s", d)
			}
		})
	}
}

func TestQueueingHints(t *testing.T) {
	pl := &VolumeZone{}
	pod := schedtest.MakePod("p").PVC("c").Obj()
	wffc := schedtest.MakeStorageClass("w", "x", storagev1.VolumeBindingWaitForFirstConsumer)
	imm := schedtest.MakeStorageClass("i", "x", storagev1.VolumeBindingImmediate)
	pvA := schedtest.MakePV("pv", "1Gi", "").Label(v1.LabelTopologyZone, "a").Obj()
	pvB := schedtest.MakePV("pv", "1Gi", "").Label(v1.LabelTopologyZone, "b").Obj()
	pvA2 := pvA.DeepCopy()
	pvA2.Labels["other"] = "x"
	tests := []struct {
		name     string
		fn       schedcore.QueueingHintFn
		old, new any
		want     schedcore.QueueingHint
	}{
		{"a WaitForFirstConsumer class queues", pl.isSchedulableAfterStorageClassAdded, nil, wffc, schedcore.Queue},
		{"an Immediate class is skipped", pl.isSchedulableAfterStorageClassAdded, nil, imm, schedcore.QueueSkip},
		{"the pod's claim queues", pl.isSchedulableAfterPersistentVolumeClaimChange, nil, schedtest.MakePVC("c", "1Gi", "").Obj(), schedcore.Queue},
		{"another claim is skipped", pl.isSchedulableAfterPersistentVolumeClaimChange, nil, schedtest.MakePVC("d", "1Gi", "").Obj(), schedcore.QueueSkip},
		{"a new PV queues", pl.isSchedulableAfterPersistentVolumeChange, nil, pvA, schedcore.Queue},
		{"a PV zone change queues", pl.isSchedulableAfterPersistentVolumeChange, pvA, pvB, schedcore.Queue},
		{"another PV label change is skipped", pl.isSchedulableAfterPersistentVolumeChange, pvA, pvA2, schedcore.QueueSkip},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.fn(schedcore.NewHandle(nil, 1).Logger(), pod, tt.old, tt.new)
			if err != nil || got != tt.want {
				t.Errorf("hint = %v, %v; want %v", got, err, tt.want)
			}
		})
	}
}
