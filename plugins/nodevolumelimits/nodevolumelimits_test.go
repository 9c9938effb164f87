package nodevolumelimits

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"

	"github.com/kubectl-sched/kubectl-sched/schedcore"
	"github.com/kubectl-sched/kubectl-sched/schedcore/schedtest"
)

const driver = "csi.example.com"

func TestFilter(t *testing.T) {
	yes := true
	optIn := &storagev1.CSIDriver{}
	optIn.Name, optIn.Spec.PreventPodSchedulingIfMissing = "strict.example.com", &yes
	pvs := []*v1.PersistentVolume{
		schedtest.MakePV("pv1", "1Gi", "csi").CSI(driver, "h1").ClaimRef("c1").Obj(),
		schedtest.MakePV("pv2", "1Gi", "csi").CSI(driver, "h2").ClaimRef("c2").Obj(),
		schedtest.MakePV("pv3", "1Gi", "csi").CSI(driver, "h3").ClaimRef("c3").Obj(),
		func() *v1.PersistentVolume {
			pv := schedtest.MakePV("ebs", "1Gi", "").ClaimRef("ebs").Obj()
			pv.Spec.AWSElasticBlockStore = &v1.AWSElasticBlockStoreVolumeSource{VolumeID: "vol-1"}
			return pv
		}(),
	}
	pvcs := []*v1.PersistentVolumeClaim{
		schedtest.MakePVC("c1", "1Gi", "csi").Bound("pv1").Obj(),
		schedtest.MakePVC("c2", "1Gi", "csi").Bound("pv2").Obj(),
		schedtest.MakePVC("c3", "1Gi", "csi").Bound("pv3").Obj(),
		schedtest.MakePVC("ebs", "1Gi", "").Bound("ebs").Obj(),
		schedtest.MakePVC("unbound", "1Gi", "csi").Obj(),
		schedtest.MakePVC("strict", "1Gi", "strict").Obj(),
	}
	classes := []*storagev1.StorageClass{
		schedtest.MakeStorageClass("csi", driver, storagev1.VolumeBindingWaitForFirstConsumer),
		schedtest.MakeStorageClass("strict", "strict.example.com", storagev1.VolumeBindingWaitForFirstConsumer),
	}
	exceed := schedcore.NewStatus(schedcore.Unschedulable, ErrReasonMaxVolumeCountExceeded)
	tests := []struct {
		name     string
		csiNode  *storagev1.CSINode
		existing []string // claims of a pod on the node
		claims   []string
		want     *schedcore.Status
	}{
		{"within the limit fits", schedtest.MakeCSINode("n", map[string]int32{driver: 2}), []string{"c1"}, []string{"c2"}, nil},
		{"over the limit does not", schedtest.MakeCSINode("n", map[string]int32{driver: 2}), []string{"c1", "c2"}, []string{"c3"}, exceed},
		{"a volume already attached counts once", schedtest.MakeCSINode("n", map[string]int32{driver: 2}), []string{"c1", "c2"}, []string{"c2"}, nil},
		{"an unbound claim counts through its class's provisioner", schedtest.MakeCSINode("n", map[string]int32{driver: 1}), []string{"c1"}, []string{"unbound"}, exceed},
		{"no CSINode means no limit", nil, []string{"c1", "c2"}, []string{"c3"}, nil},
		{"a driver without allocatable count has no limit", schedtest.MakeCSINode("n", map[string]int32{driver: -1}), []string{"c1", "c2"}, []string{"c3"}, nil},
		{"an in-tree EBS volume is translated when the node has a CSINode", schedtest.MakeCSINode("n", map[string]int32{"ebs.csi.aws.com": 0}), nil, []string{"ebs"}, exceed},
		{"an opted-in driver missing from the CSINode rejects the node", schedtest.MakeCSINode("n", map[string]int32{driver: 5}), nil, []string{"strict"},
			schedcore.NewStatus(schedcore.Unschedulable, ErrReasonDriverNotInstalled("strict.example.com"))},
		{"an opted-in driver on the CSINode fits", schedtest.MakeCSINode("n", map[string]int32{"strict.example.com": 5}), nil, []string{"strict"}, nil},
		{"a missing claim is unresolvable", schedtest.MakeCSINode("n", map[string]int32{driver: 5}), nil, []string{"gone"},
			schedcore.NewStatus(schedcore.UnschedulableAndUnresolvable, `looking up PVC default/gone: persistentvolumeclaim "gone" not found`)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var pods []*v1.Pod
			if len(tt.existing) > 0 {
				w := schedtest.MakePod("old").Node("n")
				for _, c := range tt.existing {
					w.PVC(c)
				}
				pods = append(pods, w.Obj())
			}
			var csiNodes []*storagev1.CSINode
			if tt.csiNode != nil {
				csiNodes = append(csiNodes, tt.csiNode)
			}
			snap := schedcore.NewSnapshot(pods, []*v1.Node{schedtest.MakeNode("n").Obj()})
			snap.Storage = schedcore.NewStorageState(pvcs, pvs, classes, csiNodes, []*storagev1.CSIDriver{optIn}, nil)
			h := schedcore.NewHandle(snap, 1)
			p, err := New(context.Background(), nil, h)
			if err != nil {
				t.Fatal(err)
			}
			pl := p.(*CSILimits)
			w := schedtest.MakePod("new")
			for _, c := range tt.claims {
				w.PVC(c)
			}
			pod := w.Obj()
			cs := schedcore.NewCycleState()
			if _, st := pl.PreFilter(context.Background(), cs, pod, nil); !st.IsSuccess() {
				t.Fatalf("PreFilter: %v", st)
			}
			ni, _ := snap.Get("n")
			if got := pl.Filter(context.Background(), cs, pod, ni); !got.Equal(tt.want) {
				t.Errorf("Filter = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestPreFilterSkipsPodsWithoutAttachableVolumes(t *testing.T) {
	p, _ := New(context.Background(), nil, schedcore.NewHandle(nil, 1))
	pod := schedtest.MakePod("p").Obj()
	pod.Spec.Volumes = []v1.Volume{{Name: "e", VolumeSource: v1.VolumeSource{EmptyDir: &v1.EmptyDirVolumeSource{}}}}
	if _, st := p.(*CSILimits).PreFilter(context.Background(), schedcore.NewCycleState(), pod, nil); !st.IsSkip() {
		t.Errorf("PreFilter = %v, want Skip", st)
	}
}

func TestQueueingHints(t *testing.T) {
	p, _ := New(context.Background(), nil, schedcore.NewHandle(nil, 1))
	pl := p.(*CSILimits)
	pod := schedtest.MakePod("p").PVC("c").Obj()
	tests := []struct {
		name     string
		fn       schedcore.QueueingHintFn
		old, new any
		want     schedcore.QueueingHint
	}{
		{"a raised limit queues", pl.isSchedulableAfterCSINodeUpdated, schedtest.MakeCSINode("n", map[string]int32{driver: 1}), schedtest.MakeCSINode("n", map[string]int32{driver: 2}), schedcore.Queue},
		{"a lowered limit is skipped", pl.isSchedulableAfterCSINodeUpdated, schedtest.MakeCSINode("n", map[string]int32{driver: 2}), schedtest.MakeCSINode("n", map[string]int32{driver: 1}), schedcore.QueueSkip},
		{"a deleted assigned pod with a claim queues", pl.isSchedulableAfterAssignedPodDeleted, schedtest.MakePod("o").Node("n").PVC("x").Obj(), nil, schedcore.Queue},
		{"a deleted pod without volumes is skipped", pl.isSchedulableAfterAssignedPodDeleted, schedtest.MakePod("o").Node("n").Obj(), nil, schedcore.QueueSkip},
		{"the pod's claim added queues", pl.isSchedulableAfterPVCAdded, nil, schedtest.MakePVC("c", "1Gi", "").Obj(), schedcore.Queue},
		{"another claim added is skipped", pl.isSchedulableAfterPVCAdded, nil, schedtest.MakePVC("d", "1Gi", "").Obj(), schedcore.QueueSkip},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.fn(pl.h.Logger(), pod, tt.old, tt.new)
			if err != nil || got != tt.want {
				t.Errorf("hint = %v, %v; want %v", got, err, tt.want)
			}
		})
	}
}

func TestVolumeCountsSayWhatFilterCounts(t *testing.T) {
	yes := true
	optIn := &storagev1.CSIDriver{}
	optIn.Name, optIn.Spec.PreventPodSchedulingIfMissing = "strict.example.com", &yes
	pvs := []*v1.PersistentVolume{
		schedtest.MakePV("pv1", "1Gi", "csi").CSI(driver, "h1").ClaimRef("c1").Obj(),
		schedtest.MakePV("pv2", "1Gi", "csi").CSI(driver, "h2").ClaimRef("c2").Obj(),
		schedtest.MakePV("pv3", "1Gi", "csi").CSI(driver, "h3").ClaimRef("c3").Obj(),
	}
	pvcs := []*v1.PersistentVolumeClaim{
		schedtest.MakePVC("c1", "1Gi", "csi").Bound("pv1").Obj(),
		schedtest.MakePVC("c2", "1Gi", "csi").Bound("pv2").Obj(),
		schedtest.MakePVC("c3", "1Gi", "csi").Bound("pv3").Obj(),
		schedtest.MakePVC("strict", "1Gi", "strict").Obj(),
	}
	classes := []*storagev1.StorageClass{
		schedtest.MakeStorageClass("csi", driver, storagev1.VolumeBindingWaitForFirstConsumer),
		schedtest.MakeStorageClass("strict", "strict.example.com", storagev1.VolumeBindingWaitForFirstConsumer),
	}
	tests := []struct {
		name     string
		csiNode  *storagev1.CSINode
		existing []string
		claims   []string
		want     []driverVolumes
		exceeded bool
	}{
		{"a volume over the limit counts what is attached and what is new", schedtest.MakeCSINode("n", map[string]int32{driver: 2}), []string{"c1", "c2"}, []string{"c3"},
			[]driverVolumes{{Driver: driver, Installed: true, Limit: 2, Attached: 2, New: 1}}, true},
		{"a volume already attached is not new", schedtest.MakeCSINode("n", map[string]int32{driver: 2}), []string{"c1", "c2"}, []string{"c2"},
			[]driverVolumes{{Driver: driver, Installed: true, Limit: 2, Attached: 2, New: 0}}, false},
		{"a driver without a count has no limit", schedtest.MakeCSINode("n", map[string]int32{driver: -1}), []string{"c1"}, []string{"c2", "c3"},
			[]driverVolumes{{Driver: driver, Installed: true, Limit: -1, Attached: 1, New: 2}}, false},
		{"an opted-in driver missing from the CSINode is not installed", schedtest.MakeCSINode("n", map[string]int32{driver: 5}), nil, []string{"strict"},
			[]driverVolumes{{Driver: "strict.example.com", Installed: false, Limit: -1, New: 1}}, false},
		{"a missing claim gives nothing", schedtest.MakeCSINode("n", map[string]int32{driver: 5}), nil, []string{"gone"}, nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var pods []*v1.Pod
			if len(tt.existing) > 0 {
				w := schedtest.MakePod("old").Node("n")
				for _, c := range tt.existing {
					w.PVC(c)
				}
				pods = append(pods, w.Obj())
			}
			snap := schedcore.NewSnapshot(pods, []*v1.Node{schedtest.MakeNode("n").Obj()})
			snap.Storage = schedcore.NewStorageState(pvcs, pvs, classes, []*storagev1.CSINode{tt.csiNode}, []*storagev1.CSIDriver{optIn}, nil)
			p, err := New(context.Background(), nil, schedcore.NewHandle(snap, 1))
			if err != nil {
				t.Fatal(err)
			}
			w := schedtest.MakePod("new")
			for _, c := range tt.claims {
				w.PVC(c)
			}
			ni, _ := snap.Get("n")
			got := p.(*CSILimits).volumeCounts(w.Obj(), ni)
			if d := cmp.Diff(tt.want, got); d != "" {
				t.Errorf("volumeCounts (-want +got):\n%s", d)
			}
			exceeded := false
			for _, d := range got {
				exceeded = exceeded || d.exceeded()
			}
			if exceeded != tt.exceeded {
				t.Errorf("exceeded = %v, want %v", exceeded, tt.exceeded)
			}
		})
	}
}
