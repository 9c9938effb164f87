package volumebinding

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	configv1 "k8s.io/kube-scheduler/config/v1"

	"github.com/kubectl-sched/kubectl-sched/schedcore"
	"github.com/kubectl-sched/kubectl-sched/schedcore/schedtest"
)

const wffc, immediate = storagev1.VolumeBindingWaitForFirstConsumer, storagev1.VolumeBindingImmediate

func nodes() []*v1.Node {
	return []*v1.Node{
		schedtest.MakeNode("n-a").Label(v1.LabelTopologyZone, "a").Label(v1.LabelHostname, "n-a").Obj(),
		schedtest.MakeNode("n-b").Label(v1.LabelTopologyZone, "b").Label(v1.LabelHostname, "n-b").Obj(),
	}
}

type cluster struct {
	pvcs     []*v1.PersistentVolumeClaim
	pvs      []*v1.PersistentVolume
	classes  []*storagev1.StorageClass
	drivers  []*storagev1.CSIDriver
	caps     []*storagev1.CSIStorageCapacity
	csiNodes []*storagev1.CSINode
}

func newPlugin(t *testing.T, c cluster, args *configv1.VolumeBindingArgs, opts ...schedcore.HandleOption) (*VolumeBinding, *schedcore.Handle) {
	t.Helper()
	snap := schedcore.NewSnapshot(nil, nodes())
	snap.Storage = schedcore.NewStorageState(c.pvcs, c.pvs, c.classes, c.csiNodes, c.drivers, c.caps)
	h := schedcore.NewHandle(snap, 1, opts...)
	var p schedcore.Plugin
	var err error
	if args == nil {
		p, err = New(context.Background(), nil, h)
	} else {
		p, err = New(context.Background(), args, h)
	}
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return p.(*VolumeBinding), h
}

// run returns the PreFilter status and, when it passed, each node's Filter
// status message ("" for feasible).
func run(t *testing.T, pl *VolumeBinding, h *schedcore.Handle, pod *v1.Pod) (*schedcore.CycleState, *schedcore.Status, map[string]string) {
	t.Helper()
	cs := schedcore.NewCycleState()
	_, st := pl.PreFilter(context.Background(), cs, pod, nil)
	if !st.IsSuccess() {
		return cs, st, nil
	}
	out := map[string]string{}
	for _, ni := range h.Snapshot().List() {
		fs := pl.Filter(context.Background(), cs, pod, ni)
		if fs.IsSuccess() {
			out[ni.Name()] = ""
			continue
		}
		if fs.Code() != schedcore.UnschedulableAndUnresolvable {
			out[ni.Name()] = fs.Code().String() + ": " + fs.Message()
			continue
		}
		out[ni.Name()] = strings.Join(fs.Reasons(), " | ")
	}
	return cs, nil, out
}

func pvc(name, size, class string) *schedtest.PVCWrapper { return schedtest.MakePVC(name, size, class) }
func pv(name, size, class string) *schedtest.PVWrapper   { return schedtest.MakePV(name, size, class) }

func TestPreFilter(t *testing.T) {
	classes := []*storagev1.StorageClass{
		schedtest.MakeStorageClass("wait", "csi.example.com", wffc),
		schedtest.MakeStorageClass("imm", "csi.example.com", immediate),
	}
	lost := pvc("lost", "1Gi", "imm").Bound("pv-lost").Obj()
	lost.Status.Phase = v1.ClaimLost
	tests := []struct {
		name     string
		pod      *v1.Pod
		pvcs     []*v1.PersistentVolumeClaim
		wantCode schedcore.Code
		wantMsg  string
	}{
		{"a pod without claims is skipped", schedtest.MakePod("p").Obj(), nil, schedcore.Skip, ""},
		{"a missing claim is unresolvable with the lister's message", schedtest.MakePod("p").PVC("nope").Obj(), nil,
			schedcore.UnschedulableAndUnresolvable, `persistentvolumeclaim "nope" not found`},
		{"a lost claim is unresolvable", schedtest.MakePod("p").PVC("lost").Obj(), []*v1.PersistentVolumeClaim{lost},
			schedcore.UnschedulableAndUnresolvable, `persistentvolumeclaim "lost" bound to non-existent persistentvolume "pv-lost"`},
		{"an unbound claim of an Immediate class is unresolvable", schedtest.MakePod("p").PVC("c").Obj(),
			[]*v1.PersistentVolumeClaim{pvc("c", "1Gi", "imm").Obj()}, schedcore.UnschedulableAndUnresolvable, ErrReasonUnboundImmediate},
		{"an unbound claim of an unknown class counts as immediate", schedtest.MakePod("p").PVC("c").Obj(),
			[]*v1.PersistentVolumeClaim{pvc("c", "1Gi", "gone").Obj()}, schedcore.UnschedulableAndUnresolvable, ErrReasonUnboundImmediate},
		{"an unbound claim without class counts as immediate", schedtest.MakePod("p").PVC("c").Obj(),
			[]*v1.PersistentVolumeClaim{pvc("c", "1Gi", "").Obj()}, schedcore.UnschedulableAndUnresolvable, ErrReasonUnboundImmediate},
		{"a claim with volumeName but no bind-completed annotation is pre-bound, hence immediate", schedtest.MakePod("p").PVC("c").Obj(),
			[]*v1.PersistentVolumeClaim{func() *v1.PersistentVolumeClaim {
				c := pvc("c", "1Gi", "wait").Obj()
				c.Spec.VolumeName = "pv"
				return c
			}()},
			schedcore.UnschedulableAndUnresolvable, ErrReasonUnboundImmediate},
		{"an unbound WaitForFirstConsumer claim passes", schedtest.MakePod("p").PVC("c").Obj(),
			[]*v1.PersistentVolumeClaim{pvc("c", "1Gi", "wait").Obj()}, schedcore.Success, ""},
		{"a missing ephemeral claim waits for the controller", func() *v1.Pod {
			p := schedtest.MakePod("p").Obj()
			p.Spec.Volumes = append(p.Spec.Volumes, v1.Volume{Name: "scratch", VolumeSource: v1.VolumeSource{Ephemeral: &v1.EphemeralVolumeSource{}}})
			return p
		}(), nil, schedcore.UnschedulableAndUnresolvable, `waiting for ephemeral volume controller to create the persistentvolumeclaim "p-scratch"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pl, h := newPlugin(t, cluster{pvcs: tt.pvcs, classes: classes}, nil)
			_, st := pl.PreFilter(context.Background(), schedcore.NewCycleState(), tt.pod, h.Snapshot().List())
			if st.Code() != tt.wantCode || st.Message() != tt.wantMsg {
				t.Errorf("PreFilter = %v %q, want %v %q", st.Code(), st.Message(), tt.wantCode, tt.wantMsg)
			}
		})
	}
}

func TestFilter(t *testing.T) {
	local := schedtest.MakeStorageClass("local", "kubernetes.io/no-provisioner", wffc)
	csiA := schedtest.MakeStorageClass("csi-a", "csi.example.com", wffc, "a")
	capClass := schedtest.MakeStorageClass("cap", "cap.example.com", wffc)
	imm := schedtest.MakeStorageClass("imm", "csi.example.com", immediate)
	yes := true
	capDriver := &storagev1.CSIDriver{}
	capDriver.Name, capDriver.Spec.StorageCapacity = "cap.example.com", &yes
	capA := &storagev1.CSIStorageCapacity{StorageClassName: "cap", Capacity: resourcePtr("10Gi")}
	capA.Name, capA.Namespace = "cap-a", "kube-system"
	capA.NodeTopology = labelSelector(v1.LabelHostname, "n-a")
	anyZone := schedtest.MakeStorageClass("csi-any", "csi.example.com", wffc)
	base := cluster{classes: []*storagev1.StorageClass{local, csiA, capClass, imm, anyZone}, drivers: []*storagev1.CSIDriver{capDriver}, caps: []*storagev1.CSIStorageCapacity{capA}}
	with := func(c cluster, pvcs []*v1.PersistentVolumeClaim, pvs ...*v1.PersistentVolume) cluster {
		c.pvcs, c.pvs = pvcs, pvs
		return c
	}
	claims := func(c ...*v1.PersistentVolumeClaim) []*v1.PersistentVolumeClaim { return c }
	tests := []struct {
		name string
		c    cluster
		pod  *v1.Pod
		want map[string]string
	}{
		{"a bound PV's node affinity excludes other nodes", with(base, claims(pvc("c", "1Gi", "imm").Bound("pv").Obj()), pv("pv", "1Gi", "imm").NodeAffinityIn(v1.LabelTopologyZone, "b").ClaimRef("c").Obj()),
			schedtest.MakePod("p").PVC("c").Obj(), map[string]string{"n-a": ErrReasonNodeConflict, "n-b": ""}},
		{"a bound claim whose PV is missing fails everywhere", with(base, claims(pvc("c", "1Gi", "imm").Bound("gone").Obj())),
			schedtest.MakePod("p").PVC("c").Obj(), map[string]string{"n-a": ErrReasonPVNotExist, "n-b": ErrReasonPVNotExist}},
		{"a local PV binds only on its node", with(base, claims(pvc("c", "5Gi", "local").Obj()), pv("pv-a", "10Gi", "local").NodeAffinityIn(v1.LabelHostname, "n-a").Obj()),
			schedtest.MakePod("p").PVC("c").Obj(), map[string]string{"n-a": "", "n-b": ErrReasonBindConflict}},
		{"a PV too small, of another class, not available, or with the wrong access modes does not bind", with(base, claims(pvc("c", "5Gi", "local").Obj()),
			pv("small", "1Gi", "local").Obj(), pv("other", "10Gi", "imm").Obj(), pv("released", "10Gi", "local").Phase(v1.VolumeReleased).Obj(),
			pv("rox", "10Gi", "local").AccessModes(v1.ReadOnlyMany).Obj()),
			schedtest.MakePod("p").PVC("c").Obj(), map[string]string{"n-a": ErrReasonBindConflict, "n-b": ErrReasonBindConflict}},
		{"a claim's selector must match the PV's labels", with(base, claims(pvc("c", "1Gi", "local").Selector(map[string]string{"tier": "fast"}).Obj()),
			pv("slow", "1Gi", "local").Label("tier", "slow").Obj(), pv("fast", "1Gi", "local").Label("tier", "fast").NodeAffinityIn(v1.LabelHostname, "n-b").Obj()),
			schedtest.MakePod("p").PVC("c").Obj(), map[string]string{"n-a": ErrReasonBindConflict, "n-b": ""}},
		{"provisioning is limited to the class's allowed topologies", with(base, claims(pvc("c", "1Gi", "csi-a").Obj())),
			schedtest.MakePod("p").PVC("c").Obj(), map[string]string{"n-a": "", "n-b": ErrReasonBindConflict}},
		{"a claim already provisioned for a node fits only there", with(base, claims(pvc("c", "1Gi", "csi-any").Annotation("volume.kubernetes.io/selected-node", "n-b").Obj())),
			schedtest.MakePod("p").PVC("c").Obj(), map[string]string{"n-a": ErrReasonBindConflict, "n-b": ""}},
		{"a capacity-tracking driver needs a reachable capacity with room", with(base, claims(pvc("c", "5Gi", "cap").Obj())),
			schedtest.MakePod("p").PVC("c").Obj(), map[string]string{"n-a": "", "n-b": ErrReasonNotEnoughSpace}},
		{"a claim bigger than every capacity has not enough space anywhere", with(base, claims(pvc("c", "50Gi", "cap").Obj())),
			schedtest.MakePod("p").PVC("c").Obj(), map[string]string{"n-a": ErrReasonNotEnoughSpace, "n-b": ErrReasonNotEnoughSpace}},
		{"node and bind conflicts are both reported, in kube's order", with(base,
			claims(pvc("b", "1Gi", "imm").Bound("pv").Obj(), pvc("u", "1Gi", "local").Obj()), pv("pv", "1Gi", "imm").NodeAffinityIn(v1.LabelTopologyZone, "b").ClaimRef("b").Obj()),
			schedtest.MakePod("p").PVC("b").PVC("u").Obj(), map[string]string{"n-a": ErrReasonNodeConflict + " | " + ErrReasonBindConflict, "n-b": ErrReasonBindConflict}},
		{"two claims do not take the same PV", with(base, claims(pvc("c1", "1Gi", "local").Obj(), pvc("c2", "1Gi", "local").Obj()), pv("only", "1Gi", "local").Obj()),
			schedtest.MakePod("p").PVC("c1").PVC("c2").Obj(), map[string]string{"n-a": ErrReasonBindConflict, "n-b": ErrReasonBindConflict}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pl, h := newPlugin(t, tt.c, nil)
			_, st, got := run(t, pl, h, tt.pod)
			if st != nil {
				t.Fatalf("PreFilter: %v", st)
			}
			if d := cmp.Diff(tt.want, got); d != "" {
				t.Errorf("Filter (-want +got):\n%s", d)
			}
			// The diagnosis hook gives the same reasons, claim by claim.
			for _, n := range nodes() {
				if d := cmp.Diff(tt.want[n.Name], problemReasons(problemsOn(t, pl, tt.pod, n))); d != "" {
					t.Errorf("claimProblems on %s (-Filter +claimProblems):\n%s", n.Name, d)
				}
			}
		})
	}
}

// problemsOn runs PreFilter and returns the claims' problems on the node
// from the claims it read, as ExplainFilter does.
func problemsOn(t *testing.T, pl *VolumeBinding, pod *v1.Pod, node *v1.Node) []claimProblem {
	t.Helper()
	cs := schedcore.NewCycleState()
	if _, st := pl.PreFilter(context.Background(), cs, pod, nil); !st.IsSuccess() {
		t.Fatalf("PreFilter: %v", st)
	}
	state, err := getStateData(cs)
	if err != nil {
		t.Fatal(err)
	}
	return pl.claimProblems(state.claims, node)
}

// problemReasons are the problems' reasons in Filter's order and format.
func problemReasons(ps []claimProblem) string {
	var out []string
	for _, r := range []string{ErrReasonNodeConflict, ErrReasonBindConflict, ErrReasonNotEnoughSpace, ErrReasonPVNotExist} {
		for _, p := range ps {
			if p.Reason == r {
				out = append(out, r)
				break
			}
		}
	}
	return strings.Join(out, " | ")
}

func TestClaimProblemsSayWhatEachClaimLacks(t *testing.T) {
	local := schedtest.MakeStorageClass("local", "kubernetes.io/no-provisioner", wffc)
	csiA := schedtest.MakeStorageClass("csi-a", "csi.example.com", wffc, "a")
	capClass := schedtest.MakeStorageClass("cap", "cap.example.com", wffc)
	imm := schedtest.MakeStorageClass("imm", "csi.example.com", immediate)
	yes := true
	capDriver := &storagev1.CSIDriver{}
	capDriver.Name, capDriver.Spec.StorageCapacity = "cap.example.com", &yes
	capA := &storagev1.CSIStorageCapacity{StorageClassName: "cap", Capacity: resourcePtr("10Gi")}
	capA.Name, capA.Namespace = "cap-a", "kube-system"
	capA.NodeTopology = labelSelector(v1.LabelHostname, "n-a")
	zonalB := pv("pv-b", "1Gi", "imm").NodeAffinityIn(v1.LabelTopologyZone, "b").ClaimRef("bound").Obj()
	localA := pv("local-a", "10Gi", "local").NodeAffinityIn(v1.LabelHostname, "n-a").Obj()
	c := cluster{
		classes: []*storagev1.StorageClass{local, csiA, capClass, imm}, drivers: []*storagev1.CSIDriver{capDriver}, caps: []*storagev1.CSIStorageCapacity{capA},
		pvcs: []*v1.PersistentVolumeClaim{
			pvc("bound", "1Gi", "imm").Bound("pv-b").Obj(),
			pvc("ghost", "1Gi", "imm").Bound("gone").Obj(),
			pvc("local", "5Gi", "local").Obj(),
			pvc("dyn", "1Gi", "csi-a").Obj(),
			pvc("big", "50Gi", "cap").Obj(),
			pvc("elsewhere", "1Gi", "csi-a").Annotation("volume.kubernetes.io/selected-node", "n-a").Obj(),
		},
		pvs: []*v1.PersistentVolume{zonalB, localA},
	}
	pl, _ := newPlugin(t, c, nil)
	nodeA, nodeB := nodes()[0], nodes()[1]
	tests := []struct {
		name  string
		claim string
		node  *v1.Node
		want  claimProblem
	}{
		{"a bound PV's node affinity", "bound", nodeA, claimProblem{Reason: ErrReasonNodeConflict, PV: zonalB}},
		{"a bound claim's missing PV", "ghost", nodeA, claimProblem{Reason: ErrReasonPVNotExist, VolumeName: "gone"}},
		{"a class that cannot provision and PVs that do not fit here", "local", nodeB, claimProblem{Reason: ErrReasonBindConflict, ClassName: "local", Class: local, CannotProvision: true, Candidates: []*v1.PersistentVolume{localA}}},
		{"a class whose topologies exclude the node", "dyn", nodeB, claimProblem{Reason: ErrReasonBindConflict, ClassName: "csi-a", Class: csiA, TopologyMismatch: true, Candidates: []*v1.PersistentVolume{}}},
		{"capacities too small", "big", nodeA, claimProblem{Reason: ErrReasonNotEnoughSpace, ClassName: "cap", Class: capClass, Capacities: []*storagev1.CSIStorageCapacity{capA}}},
		{"no capacity reaching the node", "big", nodeB, claimProblem{Reason: ErrReasonNotEnoughSpace, ClassName: "cap", Class: capClass}},
		{"a claim being provisioned for another node", "elsewhere", nodeB, claimProblem{Reason: ErrReasonBindConflict, ClassName: "csi-a", Class: csiA, SelectedNode: "n-a"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := problemsOn(t, pl, schedtest.MakePod("p").PVC(tt.claim).Obj(), tt.node)
			if len(got) != 1 {
				t.Fatalf("claimProblems = %+v, want one", got)
			}
			want := tt.want
			want.Claim, want.PVC = "default/"+tt.claim, got[0].PVC
			if got[0].PVC == nil || got[0].PVC.Name != tt.claim {
				t.Errorf("PVC = %v, want %s", got[0].PVC, tt.claim)
			}
			if d := cmp.Diff(want, got[0], cmpopts.EquateEmpty()); d != "" {
				t.Errorf("claimProblems (-want +got):\n%s", d)
			}
		})
	}
	if got := problemsOn(t, pl, schedtest.MakePod("p").PVC("local").Obj(), nodeA); got != nil {
		t.Errorf("a claim that binds on the node has problems: %+v", got)
	}
}

func resourcePtr(s string) *resource.Quantity { q := resource.MustParse(s); return &q }

func TestReserveAssumesBindingsForLaterCycles(t *testing.T) {
	local := schedtest.MakeStorageClass("local", "kubernetes.io/no-provisioner", wffc)
	csiA := schedtest.MakeStorageClass("csi-a", "csi.example.com", wffc, "a", "b")
	c := cluster{
		classes: []*storagev1.StorageClass{local, csiA},
		pvcs:    []*v1.PersistentVolumeClaim{pvc("c1", "5Gi", "local").Obj(), pvc("c2", "5Gi", "local").Obj(), pvc("dyn", "1Gi", "csi-a").Obj()},
		pvs: []*v1.PersistentVolume{
			pv("big-b", "20Gi", "local").NodeAffinityIn(v1.LabelHostname, "n-b").Obj(),
			pv("small-a", "6Gi", "local").NodeAffinityIn(v1.LabelHostname, "n-a").Obj(),
		},
	}
	pl, h := newPlugin(t, c, nil)
	// c1 on n-a takes small-a; c1 again (a second pod) finds it pre-bound.
	p1 := schedtest.MakePod("p1").PVC("c1").Obj()
	cs, _, got := run(t, pl, h, p1)
	if d := cmp.Diff(map[string]string{"n-a": "", "n-b": ""}, got); d != "" {
		t.Fatalf("first Filter (-want +got):\n%s", d)
	}
	if st := pl.Reserve(context.Background(), cs, p1, "n-a"); !st.IsSuccess() {
		t.Fatalf("Reserve: %v", st)
	}
	if a := pl.assumed.pv(h.Snapshot().StorageLister(), "small-a"); a.Spec.ClaimRef == nil || a.Spec.ClaimRef.Name != "c1" || a.Annotations["pv.kubernetes.io/bound-by-controller"] != "yes" {
		t.Fatalf("small-a not assumed bound to c1: %+v", a.Spec.ClaimRef)
	}
	_, _, got = run(t, pl, h, schedtest.MakePod("p1b").PVC("c1").Obj())
	if d := cmp.Diff(map[string]string{"n-a": "", "n-b": ErrReasonBindConflict}, got); d != "" {
		t.Errorf("same claim again (-want +got):\n%s", d)
	}
	// c2 cannot take small-a any more.
	_, _, got = run(t, pl, h, schedtest.MakePod("p2").PVC("c2").Obj())
	if d := cmp.Diff(map[string]string{"n-a": ErrReasonBindConflict, "n-b": ""}, got); d != "" {
		t.Errorf("other claim (-want +got):\n%s", d)
	}
	// Provisioning: the claim is annotated with the node.
	p3 := schedtest.MakePod("p3").PVC("dyn").Obj()
	cs, _, _ = run(t, pl, h, p3)
	if st := pl.Reserve(context.Background(), cs, p3, "n-b"); !st.IsSuccess() {
		t.Fatalf("Reserve: %v", st)
	}
	_, _, got = run(t, pl, h, schedtest.MakePod("p3b").PVC("dyn").Obj())
	if d := cmp.Diff(map[string]string{"n-a": ErrReasonBindConflict, "n-b": ""}, got); d != "" {
		t.Errorf("provisioned claim again (-want +got):\n%s", d)
	}
	// Unreserve forgets it.
	pl.Unreserve(context.Background(), cs, p3, "n-b")
	_, _, got = run(t, pl, h, schedtest.MakePod("p3c").PVC("dyn").Obj())
	if d := cmp.Diff(map[string]string{"n-a": "", "n-b": ""}, got); d != "" {
		t.Errorf("after Unreserve (-want +got):\n%s", d)
	}
}

type recordingBinder struct {
	pvs  []*v1.PersistentVolume
	pvcs []*v1.PersistentVolumeClaim
}

func (r *recordingBinder) BindPodVolumes(_ context.Context, _ *v1.Pod, pvs []*v1.PersistentVolume, pvcs []*v1.PersistentVolumeClaim) error {
	r.pvs, r.pvcs = pvs, pvcs
	return nil
}

func TestPreBindHandsTheAssumedObjectsToTheDriver(t *testing.T) {
	c := cluster{
		classes: []*storagev1.StorageClass{schedtest.MakeStorageClass("local", "kubernetes.io/no-provisioner", wffc), schedtest.MakeStorageClass("dyn", "csi.example.com", wffc)},
		pvcs:    []*v1.PersistentVolumeClaim{pvc("c", "1Gi", "local").Obj(), pvc("d", "1Gi", "dyn").Obj(), pvc("bound", "1Gi", "dyn").Bound("pv-bound").Obj()},
		pvs:     []*v1.PersistentVolume{pv("pv", "1Gi", "local").Obj(), pv("pv-bound", "1Gi", "dyn").ClaimRef("bound").Obj()},
	}
	rb := &recordingBinder{}
	pl, h := newPlugin(t, c, nil, schedcore.WithVolumeBinder(rb))
	pod := schedtest.MakePod("p").PVC("c").PVC("d").Obj()
	cs, _, _ := run(t, pl, h, pod)
	if st := pl.Reserve(context.Background(), cs, pod, "n-a"); !st.IsSuccess() {
		t.Fatal(st)
	}
	if st := pl.PreBindPreFlight(context.Background(), cs, pod, "n-a"); !st.IsSuccess() {
		t.Fatalf("PreBindPreFlight = %v, want success", st)
	}
	if st := pl.PreBind(context.Background(), cs, pod, "n-a"); !st.IsSuccess() {
		t.Fatal(st)
	}
	if len(rb.pvs) != 1 || rb.pvs[0].Spec.ClaimRef.Name != "c" || len(rb.pvcs) != 1 || rb.pvcs[0].Annotations["volume.kubernetes.io/selected-node"] != "n-a" {
		t.Errorf("binder got pvs %v pvcs %v", rb.pvs, rb.pvcs)
	}
	// All bound: PreBind is skipped.
	pod = schedtest.MakePod("q").PVC("bound").Obj()
	cs, _, _ = run(t, pl, h, pod)
	if st := pl.Reserve(context.Background(), cs, pod, "n-a"); !st.IsSuccess() {
		t.Fatal(st)
	}
	if st := pl.PreBindPreFlight(context.Background(), cs, pod, "n-a"); !st.IsSkip() {
		t.Errorf("PreBindPreFlight = %v, want Skip", st)
	}
}

func TestScore(t *testing.T) {
	local := schedtest.MakeStorageClass("local", "kubernetes.io/no-provisioner", wffc)
	c := cluster{
		classes: []*storagev1.StorageClass{local},
		pvcs:    []*v1.PersistentVolumeClaim{pvc("c", "8Gi", "local").Obj()},
		pvs: []*v1.PersistentVolume{
			pv("a", "10Gi", "local").NodeAffinityIn(v1.LabelHostname, "n-a").Obj(),
			pv("b", "32Gi", "local").NodeAffinityIn(v1.LabelHostname, "n-b").Obj(),
		},
	}
	tests := []struct {
		name string
		args *configv1.VolumeBindingArgs
		want map[string]int64
	}{
		// Default shape {0: 100, 100: 0}: 8/10 -> 80% -> 20; 8/32 -> 25% -> 75.
		{"the default shape prefers the emptier PV", nil, map[string]int64{"n-a": 20, "n-b": 75}},
		{"a custom shape prefers the fuller one", &configv1.VolumeBindingArgs{Shape: []configv1.UtilizationShapePoint{{Utilization: 0, Score: 0}, {Utilization: 100, Score: 10}}},
			map[string]int64{"n-a": 80, "n-b": 25}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pl, h := newPlugin(t, c, tt.args)
			pod := schedtest.MakePod("p").PVC("c").Obj()
			cs, _, _ := run(t, pl, h, pod)
			if st := pl.PreScore(context.Background(), cs, pod, h.Snapshot().List()); !st.IsSuccess() {
				t.Fatalf("PreScore: %v", st)
			}
			got := map[string]int64{}
			for _, ni := range h.Snapshot().List() {
				s, st := pl.Score(context.Background(), cs, pod, ni)
				if !st.IsSuccess() {
					t.Fatal(st)
				}
				got[ni.Name()] = s
			}
			if d := cmp.Diff(tt.want, got); d != "" {
				t.Errorf("Score (-want +got):\n%s", d)
			}
		})
	}
	t.Run("PreScore skips when no node has a static binding or a capacity", func(t *testing.T) {
		pl, h := newPlugin(t, cluster{classes: []*storagev1.StorageClass{schedtest.MakeStorageClass("d", "csi.example.com", wffc)}, pvcs: []*v1.PersistentVolumeClaim{pvc("c", "1Gi", "d").Obj()}}, nil)
		pod := schedtest.MakePod("p").PVC("c").Obj()
		cs, _, _ := run(t, pl, h, pod)
		if st := pl.PreScore(context.Background(), cs, pod, nil); !st.IsSkip() {
			t.Errorf("PreScore = %v, want Skip", st)
		}
	})
}

func TestArgs(t *testing.T) {
	neg := int64(-1)
	tests := []struct {
		name    string
		args    *configv1.VolumeBindingArgs
		scoring bool
		wantErr string
	}{
		{"defaults are valid", &configv1.VolumeBindingArgs{}, true, ""},
		{"a negative bind timeout is rejected", &configv1.VolumeBindingArgs{BindTimeoutSeconds: &neg}, true,
			"bindTimeoutSeconds: Invalid value: -1: invalid BindTimeoutSeconds, should not be a negative value"},
		{"shape utilizations must increase", &configv1.VolumeBindingArgs{Shape: []configv1.UtilizationShapePoint{{Utilization: 50, Score: 1}, {Utilization: 10, Score: 2}}}, true,
			"shape[1].utilization: Invalid value: 10: values must be sorted in increasing order"},
		{"shape scores are at most 10", &configv1.VolumeBindingArgs{Shape: []configv1.UtilizationShapePoint{{Utilization: 0, Score: 11}}}, true,
			"shape[0].score: Invalid value: 11: not in valid range [0, 10]"},
		{"a shape without StorageCapacityScoring is rejected", &configv1.VolumeBindingArgs{Shape: []configv1.UtilizationShapePoint{{Utilization: 0, Score: 1}}}, false,
			"shape: Invalid value"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := schedcore.DefaultFeatures
			f.StorageCapacityScoring = tt.scoring
			h := schedcore.NewHandle(nil, 1, schedcore.WithFeatures(f))
			_, err := New(context.Background(), tt.args, h)
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("New: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("New error = %v, want %q", err, tt.wantErr)
			}
		})
	}
	a, _ := args(nil, true)
	if *a.BindTimeoutSeconds != 600 || len(a.Shape) != 2 || a.Shape[0].Score != 10 || a.Shape[1].Utilization != 100 {
		t.Errorf("defaults = %+v", a)
	}
}

func TestQueueingHints(t *testing.T) {
	pl, _ := newPlugin(t, cluster{}, nil)
	pod := schedtest.MakePod("p").PVC("c").Obj()
	sc := schedtest.MakeStorageClass("s", "x", wffc)
	sc2 := sc.DeepCopy()
	sc2.AllowedTopologies = []v1.TopologySelectorTerm{{}}
	csiOld, csiNew := schedtest.MakeCSINode("n", nil), schedtest.MakeCSINode("n", nil)
	csiNew.Annotations = map[string]string{v1.MigratedPluginsAnnotationKey: "kubernetes.io/aws-ebs"}
	tests := []struct {
		name     string
		fn       schedcore.QueueingHintFn
		old, new any
		want     schedcore.QueueingHint
	}{
		{"the pod's claim added queues", pl.isSchedulableAfterPersistentVolumeClaimChange, nil, pvc("c", "1Gi", "s").Obj(), schedcore.Queue},
		{"another claim added is skipped", pl.isSchedulableAfterPersistentVolumeClaimChange, nil, pvc("d", "1Gi", "s").Obj(), schedcore.QueueSkip},
		{"a new StorageClass queues", pl.isSchedulableAfterStorageClassChange, nil, sc, schedcore.Queue},
		{"a StorageClass update without topology change is skipped", pl.isSchedulableAfterStorageClassChange, sc, sc.DeepCopy(), schedcore.QueueSkip},
		{"a StorageClass topology change queues", pl.isSchedulableAfterStorageClassChange, sc, sc2, schedcore.Queue},
		{"a CSINode migration change queues", pl.isSchedulableAfterCSINodeChange, csiOld, csiNew, schedcore.Queue},
		{"a CSINode update without migration change is skipped", pl.isSchedulableAfterCSINodeChange, csiOld, csiOld.DeepCopy(), schedcore.QueueSkip},
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

func labelSelector(k, v string) *metav1.LabelSelector {
	return &metav1.LabelSelector{MatchLabels: map[string]string{k: v}}
}
