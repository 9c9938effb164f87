package volumerestrictions

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"

	v1 "k8s.io/api/core/v1"

	"github.com/kubectl-sched/kubectl-sched/schedcore"
	"github.com/kubectl-sched/kubectl-sched/schedcore/schedtest"
)

func withVolume(w *schedtest.PodWrapper, vs v1.VolumeSource) *schedtest.PodWrapper {
	w.Spec.Volumes = append(w.Spec.Volumes, v1.Volume{Name: "v", VolumeSource: vs})
	return w
}

func gce(name string, ro bool) v1.VolumeSource {
	return v1.VolumeSource{GCEPersistentDisk: &v1.GCEPersistentDiskVolumeSource{PDName: name, ReadOnly: ro}}
}
func ebs(id string) v1.VolumeSource {
	return v1.VolumeSource{AWSElasticBlockStore: &v1.AWSElasticBlockStoreVolumeSource{VolumeID: id}}
}
func iscsi(iqn string, ro bool) v1.VolumeSource {
	return v1.VolumeSource{ISCSI: &v1.ISCSIVolumeSource{TargetPortal: "127.0.0.1:3260", IQN: iqn, ReadOnly: ro}}
}
func rbd(mons []string, pool, image string, ro bool) v1.VolumeSource {
	return v1.VolumeSource{RBD: &v1.RBDVolumeSource{CephMonitors: mons, RBDPool: pool, RBDImage: image, ReadOnly: ro}}
}

func newPlugin(t *testing.T, pods []*v1.Pod, pvcs ...*v1.PersistentVolumeClaim) (*VolumeRestrictions, *schedcore.Handle) {
	t.Helper()
	snap := schedcore.NewSnapshot(pods, []*v1.Node{schedtest.MakeNode("n1").Obj(), schedtest.MakeNode("n2").Obj()})
	snap.Storage = schedcore.NewStorageState(pvcs, nil, nil, nil, nil, nil)
	h := schedcore.NewHandle(snap, 1)
	p, err := New(context.Background(), nil, h)
	if err != nil {
		t.Fatal(err)
	}
	return p.(*VolumeRestrictions), h
}

func TestDiskConflicts(t *testing.T) {
	conflict := schedcore.NewStatus(schedcore.Unschedulable, ErrReasonDiskConflict)
	tests := []struct {
		name     string
		pod      v1.VolumeSource
		existing v1.VolumeSource
		want     *schedcore.Status
	}{
		{"the same GCE PD mounted read-write conflicts", gce("foo", false), gce("foo", false), conflict},
		{"the same GCE PD mounted read-only by both fits", gce("foo", true), gce("foo", true), nil},
		{"another GCE PD fits", gce("foo", false), gce("bar", false), nil},
		{"the same EBS volume conflicts even read-only", ebs("foo"), ebs("foo"), conflict},
		{"another EBS volume fits", ebs("foo"), ebs("bar"), nil},
		{"the same ISCSI IQN conflicts", iscsi("iqn.2016-12.server:storage.target01", false), iscsi("iqn.2016-12.server:storage.target01", false), conflict},
		{"the same ISCSI IQN read-only by both fits", iscsi("iqn.2016-12.server:storage.target01", true), iscsi("iqn.2016-12.server:storage.target01", true), nil},
		{"an RBD image sharing a monitor, pool and image conflicts", rbd([]string{"a", "b"}, "pool", "img", false), rbd([]string{"c", "b"}, "pool", "img", false), conflict},
		{"an RBD image without a common monitor fits", rbd([]string{"a"}, "pool", "img", false), rbd([]string{"c"}, "pool", "img", false), nil},
		{"an RBD image read-only by both fits", rbd([]string{"a"}, "pool", "img", true), rbd([]string{"a"}, "pool", "img", true), nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			existing := withVolume(schedtest.MakePod("old").Node("n1"), tt.existing).Obj()
			pl, h := newPlugin(t, []*v1.Pod{existing})
			pod := withVolume(schedtest.MakePod("new"), tt.pod).Obj()
			cs := schedcore.NewCycleState()
			if _, st := pl.PreFilter(context.Background(), cs, pod, nil); !st.IsSuccess() {
				t.Fatalf("PreFilter: %v", st)
			}
			ni, _ := h.Snapshot().Get("n1")
			if got := pl.Filter(context.Background(), cs, pod, ni); !got.Equal(tt.want) {
				t.Errorf("Filter on n1 = %v, want %v", got, tt.want)
			}
			ni, _ = h.Snapshot().Get("n2")
			if got := pl.Filter(context.Background(), cs, pod, ni); got != nil {
				t.Errorf("Filter on the empty n2 = %v, want success", got)
			}
		})
	}
}

func TestReadWriteOncePod(t *testing.T) {
	rwop := schedtest.MakePVC("rwop", "1Gi", "c").AccessModes(v1.ReadWriteOncePod).Bound("pv").Obj()
	rwo := schedtest.MakePVC("rwo", "1Gi", "c").Bound("pv2").Obj()
	user := schedtest.MakePod("user").Node("n1").PVC("rwop").Obj()
	tests := []struct {
		name     string
		pods     []*v1.Pod
		pod      *v1.Pod
		wantPre  schedcore.Code
		wantMsg  string
		wantFilt *schedcore.Status
	}{
		{"a pod without restricted volumes or claims in use is skipped", nil, schedtest.MakePod("p").PVC("rwo").Obj(), schedcore.Skip, "", nil},
		{"an unused ReadWriteOncePod claim is skipped", nil, schedtest.MakePod("p").PVC("rwop").Obj(), schedcore.Skip, "", nil},
		{"a ReadWriteOncePod claim in use rejects every node", []*v1.Pod{user}, schedtest.MakePod("p").PVC("rwop").Obj(), schedcore.Success, "",
			schedcore.NewStatus(schedcore.Unschedulable, ErrReasonReadWriteOncePodConflict)},
		{"a ReadWriteOnce claim in use is fine", []*v1.Pod{schedtest.MakePod("u").Node("n1").PVC("rwo").Obj()}, schedtest.MakePod("p").PVC("rwo").Obj(), schedcore.Skip, "", nil},
		{"a missing claim is unresolvable", nil, schedtest.MakePod("p").PVC("gone").Obj(), schedcore.UnschedulableAndUnresolvable, `persistentvolumeclaim "gone" not found`, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pl, h := newPlugin(t, tt.pods, rwop, rwo)
			cs := schedcore.NewCycleState()
			_, st := pl.PreFilter(context.Background(), cs, tt.pod, nil)
			if st.Code() != tt.wantPre || st.Message() != tt.wantMsg {
				t.Fatalf("PreFilter = %v %q, want %v %q", st.Code(), st.Message(), tt.wantPre, tt.wantMsg)
			}
			if !st.IsSuccess() {
				return
			}
			ni, _ := h.Snapshot().Get("n2")
			if got := pl.Filter(context.Background(), cs, tt.pod, ni); !got.Equal(tt.wantFilt) {
				t.Errorf("Filter = %v, want %v", got, tt.wantFilt)
			}
			// Removing the user (preemption) makes the claim free.
			c := cs.Clone()
			if s := pl.RemovePod(context.Background(), c, tt.pod, schedcore.NewPodInfo(user), ni); !s.IsSuccess() {
				t.Fatal(s)
			}
			if got := pl.Filter(context.Background(), c, tt.pod, ni); got != nil {
				t.Errorf("Filter after RemovePod = %v, want success", got)
			}
			if got := pl.Filter(context.Background(), cs, tt.pod, ni); !got.Equal(tt.wantFilt) {
				t.Errorf("Filter on the original state after RemovePod on a clone = %v", got)
			}
		})
	}
}

func TestQueueingHints(t *testing.T) {
	pl, _ := newPlugin(t, nil)
	pod := withVolume(schedtest.MakePod("p").PVC("c"), gce("foo", false)).Obj()
	tests := []struct {
		name     string
		fn       schedcore.QueueingHintFn
		old, new any
		want     schedcore.QueueingHint
	}{
		{"the pod's claim added queues", pl.isSchedulableAfterPersistentVolumeClaimAdded, nil, schedtest.MakePVC("c", "1Gi", "").Obj(), schedcore.Queue},
		{"another claim is skipped", pl.isSchedulableAfterPersistentVolumeClaimAdded, nil, schedtest.MakePVC("d", "1Gi", "").Obj(), schedcore.QueueSkip},
		{"a deleted pod with the conflicting disk queues", pl.isSchedulableAfterAssignedPodDeleted, withVolume(schedtest.MakePod("o").Node("n1"), gce("foo", false)).Obj(), nil, schedcore.Queue},
		{"a deleted pod sharing the claim queues", pl.isSchedulableAfterAssignedPodDeleted, schedtest.MakePod("o").Node("n1").PVC("c").Obj(), nil, schedcore.Queue},
		{"an unrelated deleted pod is skipped", pl.isSchedulableAfterAssignedPodDeleted, schedtest.MakePod("o").Node("n1").PVC("x").Obj(), nil, schedcore.QueueSkip},
		{"a deleted pod of another namespace is skipped", pl.isSchedulableAfterAssignedPodDeleted, withVolume(schedtest.MakePod("o").Namespace("other").Node("n1"), gce("foo", false)).Obj(), nil, schedcore.QueueSkip},
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

func TestExplainFilterNamesTheDiskAndThePod(t *testing.T) {
	tests := []struct {
		name     string
		pod      v1.VolumeSource
		existing v1.VolumeSource
		want     string // the disk; "" for no conflict
	}{
		{"a GCE PD", gce("foo", false), gce("foo", false), "GCE PD foo"},
		{"an EBS volume", ebs("vol-1"), ebs("vol-1"), "EBS vol-1"},
		{"an ISCSI IQN", iscsi("iqn.2016-12.server:storage.target01", false), iscsi("iqn.2016-12.server:storage.target01", false), "iSCSI iqn.2016-12.server:storage.target01"},
		{"an RBD image", rbd([]string{"a"}, "pool", "img", false), rbd([]string{"a"}, "pool", "img", false), "RBD pool/img"},
		{"a GCE PD read-only by both is no conflict", gce("foo", true), gce("foo", true), ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			existing := withVolume(schedtest.MakePod("old").Node("n1"), tt.existing).Obj()
			pl, h := newPlugin(t, []*v1.Pod{existing})
			ni, _ := h.Snapshot().Get("n1")
			pod := withVolume(schedtest.MakePod("new"), tt.pod).Obj()
			cs := schedcore.NewCycleState()
			if _, st := pl.PreFilter(context.Background(), cs, pod, nil); !st.IsSuccess() {
				t.Fatalf("PreFilter: %v", st)
			}
			st := pl.Filter(context.Background(), cs, pod, ni)
			var want *schedcore.FilterExplanation
			if tt.want != "" {
				want = schedcore.NewFilterExplanation(1, tt.want+" is in use by pod default/old on this node")
			}
			if st.IsSuccess() != (want == nil) {
				t.Fatalf("Filter = %v", st)
			}
			if d := cmp.Diff(want, pl.ExplainFilter(context.Background(), cs, pod, ni, st)); d != "" {
				t.Errorf("ExplainFilter (-want +got):\n%s", d)
			}
		})
	}
}
