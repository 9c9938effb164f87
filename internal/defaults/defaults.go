// Package defaults applies to objects read from files what the API server
// would have done to them before kube-scheduler saw them: the defaulting
// of their API group (k8s.io/kubernetes pkg/apis/<group>/<version>/defaults.go
// and the declarative defaults in zz_generated.defaults.go), and the parts
// of the Pod's create strategy (pkg/registry/core/pod/strategy.go) that a
// scheduling decision reads. It sets only fields a decision reads; the rest
// stay as written.
//
// Defaulting is idempotent, so an object listed from a cluster (already
// defaulted) comes out unchanged, and it allocates nothing for such an
// object: loading a 5000-node dump goes through it.
//
// It is used by internal/snapshot (every object a dump, a trace or
// `explain pod -f` reads) and internal/capacity (the pods a workload's
// controller would create, node templates). schedcore and plugins never
// import it: the engine sees objects as kube-scheduler does, already
// defaulted.
package defaults

import (
	v1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	schedulingv1beta1 "k8s.io/api/scheduling/v1beta1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// Object applies the defaults of obj's kind; objects of other kinds are
// left alone.
func Object(obj any) {
	switch o := obj.(type) {
	case *v1.Pod:
		Pod(o)
	case *v1.Node:
		Node(o)
	case *v1.Namespace:
		Namespace(o)
	case *v1.ReplicationController:
		ReplicationController(o)
	case *v1.PersistentVolumeClaim:
		PersistentVolumeClaim(o)
	case *v1.PersistentVolume:
		PersistentVolume(o)
	case *storagev1.StorageClass:
		StorageClass(o)
	case *storagev1.CSIDriver:
		CSIDriver(o)
	case *schedulingv1.PriorityClass:
		PriorityClass(o)
	case *schedulingv1beta1.PodGroup:
		PodGroup(o)
	case *resourceapi.ResourceClaim:
		ClaimSpec(&o.Spec)
	case *resourceapi.ResourceClaimTemplate:
		ClaimSpec(&o.Spec.Spec)
	}
}

// Node applies SetObjectDefaults_Node: status.allocatable is capacity
// when the node gives none (SetDefaults_NodeStatus: nil, not an empty
// map), and both are rounded up to milli scale.
func Node(n *v1.Node) {
	st := &n.Status
	if st.Allocatable == nil && st.Capacity != nil {
		// kube ends up sharing capacity's map; a copy reads the same and
		// keeps a change to one (a template node's) out of the other.
		st.Allocatable = st.Capacity.DeepCopy()
	}
	ResourceList(st.Capacity)
	ResourceList(st.Allocatable)
}

// ResourceList rounds each quantity up to milli scale, as
// SetDefaults_ResourceList does ("1n" is "1m"). Quantities already at
// that scale are not rewritten. A null quantity (Quantity.UnmarshalJSON
// reads it as a zero without a format) becomes the "0" the API server
// stores and returns for it.
func ResourceList(l v1.ResourceList) {
	for k, q := range l {
		if q.Format == "" && q.IsZero() {
			l[k] = storedZero
			continue
		}
		r := q
		if !r.RoundUp(resource.Milli) {
			l[k] = r
		}
	}
}

// storedZero is the "0" the API server returns for a null quantity, as
// decoded.
var storedZero = resource.MustParse("0")

// Namespace applies SetDefaults_Namespace: the kubernetes.io/metadata.name
// label, which namespaceSelectors of affinity terms match.
func Namespace(ns *v1.Namespace) {
	if ns.Name == "" || ns.Labels[v1.LabelMetadataName] == ns.Name {
		return
	}
	if ns.Labels == nil {
		ns.Labels = map[string]string{}
	}
	ns.Labels[v1.LabelMetadataName] = ns.Name
}

// ReplicationController applies SetDefaults_ReplicationController's
// selector: the template's labels when it gives none. Default topology
// spreading selects a pod's siblings by its controller's selector.
func ReplicationController(rc *v1.ReplicationController) {
	if rc.Spec.Template == nil || rc.Spec.Template.Labels == nil || len(rc.Spec.Selector) > 0 {
		return
	}
	rc.Spec.Selector = make(map[string]string, len(rc.Spec.Template.Labels))
	for k, v := range rc.Spec.Template.Labels {
		rc.Spec.Selector[k] = v
	}
}

// PersistentVolumeClaim applies SetObjectDefaults_PersistentVolumeClaim:
// phase Pending, volumeMode Filesystem, quantities rounded.
func PersistentVolumeClaim(c *v1.PersistentVolumeClaim) {
	if c.Status.Phase == "" {
		c.Status.Phase = v1.ClaimPending
	}
	claimSpec(&c.Spec)
	ResourceList(c.Status.Capacity)
	ResourceList(c.Status.AllocatedResources)
}

func claimSpec(s *v1.PersistentVolumeClaimSpec) {
	if s.VolumeMode == nil {
		m := v1.PersistentVolumeFilesystem
		s.VolumeMode = &m
	}
	ResourceList(s.Resources.Limits)
	ResourceList(s.Resources.Requests)
}

// PersistentVolume applies SetObjectDefaults_PersistentVolume's fields
// volume binding reads: phase Pending, reclaim policy Retain, volumeMode
// Filesystem, capacity rounded.
func PersistentVolume(pv *v1.PersistentVolume) {
	if pv.Status.Phase == "" {
		pv.Status.Phase = v1.VolumePending
	}
	if pv.Spec.PersistentVolumeReclaimPolicy == "" {
		pv.Spec.PersistentVolumeReclaimPolicy = v1.PersistentVolumeReclaimRetain
	}
	if pv.Spec.VolumeMode == nil {
		m := v1.PersistentVolumeFilesystem
		pv.Spec.VolumeMode = &m
	}
	ResourceList(pv.Spec.Capacity)
}

// StorageClass applies SetDefaults_StorageClass: reclaim policy Delete,
// volumeBindingMode Immediate.
func StorageClass(sc *storagev1.StorageClass) {
	if sc.ReclaimPolicy == nil {
		p := v1.PersistentVolumeReclaimDelete
		sc.ReclaimPolicy = &p
	}
	if sc.VolumeBindingMode == nil {
		m := storagev1.VolumeBindingImmediate
		sc.VolumeBindingMode = &m
	}
}

// CSIDriver applies SetDefaults_CSIDriver's fields the volume plugins
// read: attachRequired true, storageCapacity false.
func CSIDriver(d *storagev1.CSIDriver) {
	if d.Spec.AttachRequired == nil {
		t := true
		d.Spec.AttachRequired = &t
	}
	if d.Spec.StorageCapacity == nil {
		f := false
		d.Spec.StorageCapacity = &f
	}
}

// PriorityClass applies SetDefaults_PriorityClass: preemptionPolicy
// PreemptLowerPriority, which the Priority admission copies to pods.
func PriorityClass(pc *schedulingv1.PriorityClass) {
	if pc.PreemptionPolicy == nil {
		p := v1.PreemptLowerPriority
		pc.PreemptionPolicy = &p
	}
}

// ClaimSpec applies resource.k8s.io/v1's defaults to a claim spec:
// allocationMode ExactCount with count 1 (SetDefaults_ExactDeviceRequest,
// SetDefaults_DeviceSubRequest) and tolerations' operator Equal (a
// declarative default).
func ClaimSpec(spec *resourceapi.ResourceClaimSpec) {
	tolerations := func(ts []resourceapi.DeviceToleration) {
		for i := range ts {
			if ts[i].Operator == "" {
				ts[i].Operator = resourceapi.DeviceTolerationOpEqual
			}
		}
	}
	count := func(mode *resourceapi.DeviceAllocationMode, n *int64, ts []resourceapi.DeviceToleration) {
		if *mode == "" {
			*mode = resourceapi.DeviceAllocationModeExactCount
		}
		if *mode == resourceapi.DeviceAllocationModeExactCount && *n == 0 {
			*n = 1
		}
		tolerations(ts)
	}
	for i := range spec.Devices.Requests {
		r := &spec.Devices.Requests[i]
		if e := r.Exactly; e != nil {
			count(&e.AllocationMode, &e.Count, e.Tolerations)
		}
		for j := range r.FirstAvailable {
			sr := &r.FirstAvailable[j]
			count(&sr.AllocationMode, &sr.Count, sr.Tolerations)
		}
	}
}
