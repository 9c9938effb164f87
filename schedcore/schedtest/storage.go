package schedtest

import (
	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// PVWrapper builds a PersistentVolume (Available, Filesystem, RWO).
type PVWrapper struct{ v1.PersistentVolume }

// MakePV returns an Available PV of the given size and class.
func MakePV(name, size, class string) *PVWrapper {
	w := &PVWrapper{}
	w.Name = name
	w.Spec.Capacity = v1.ResourceList{v1.ResourceStorage: resource.MustParse(size)}
	w.Spec.StorageClassName = class
	w.Spec.AccessModes = []v1.PersistentVolumeAccessMode{v1.ReadWriteOnce}
	w.Status.Phase = v1.VolumeAvailable
	return w
}

// Obj returns the PV.
func (w *PVWrapper) Obj() *v1.PersistentVolume { return &w.PersistentVolume }

// Label sets a label.
func (w *PVWrapper) Label(k, v string) *PVWrapper {
	if w.Labels == nil {
		w.Labels = map[string]string{}
	}
	w.Labels[k] = v
	return w
}

// NodeAffinityIn requires the node label key to be one of values.
func (w *PVWrapper) NodeAffinityIn(key string, values ...string) *PVWrapper {
	w.Spec.NodeAffinity = &v1.VolumeNodeAffinity{Required: &v1.NodeSelector{NodeSelectorTerms: []v1.NodeSelectorTerm{{
		MatchExpressions: []v1.NodeSelectorRequirement{{Key: key, Operator: v1.NodeSelectorOpIn, Values: values}}}}}}
	return w
}

// AccessModes replaces the access modes.
func (w *PVWrapper) AccessModes(m ...v1.PersistentVolumeAccessMode) *PVWrapper {
	w.Spec.AccessModes = m
	return w
}

// CSI makes it a CSI volume of driver with the given handle.
func (w *PVWrapper) CSI(driver, handle string) *PVWrapper {
	w.Spec.CSI = &v1.CSIPersistentVolumeSource{Driver: driver, VolumeHandle: handle}
	return w
}

// ClaimRef binds it to default/claim (phase Bound).
func (w *PVWrapper) ClaimRef(claim string) *PVWrapper {
	w.Spec.ClaimRef = &v1.ObjectReference{Kind: "PersistentVolumeClaim", APIVersion: "v1", Namespace: "default", Name: claim}
	w.Status.Phase = v1.VolumeBound
	return w
}

// Phase sets status.phase.
func (w *PVWrapper) Phase(p v1.PersistentVolumePhase) *PVWrapper { w.Status.Phase = p; return w }

// PVCWrapper builds a PersistentVolumeClaim in namespace default.
type PVCWrapper struct{ v1.PersistentVolumeClaim }

// MakePVC returns a Pending RWO claim of the given size and class ("" for
// none).
func MakePVC(name, size, class string) *PVCWrapper {
	w := &PVCWrapper{}
	w.Name, w.Namespace = name, "default"
	w.Spec.Resources.Requests = v1.ResourceList{v1.ResourceStorage: resource.MustParse(size)}
	if class != "" {
		w.Spec.StorageClassName = &class
	}
	w.Spec.AccessModes = []v1.PersistentVolumeAccessMode{v1.ReadWriteOnce}
	w.Status.Phase = v1.ClaimPending
	return w
}

// Obj returns the claim.
func (w *PVCWrapper) Obj() *v1.PersistentVolumeClaim { return &w.PersistentVolumeClaim }

// Bound binds it to the PV (volumeName and the bind-completed annotation).
func (w *PVCWrapper) Bound(pv string) *PVCWrapper {
	w.Spec.VolumeName = pv
	w.Annotation("pv.kubernetes.io/bind-completed", "yes")
	w.Status.Phase = v1.ClaimBound
	return w
}

// Annotation sets an annotation.
func (w *PVCWrapper) Annotation(k, v string) *PVCWrapper {
	metav1.SetMetaDataAnnotation(&w.ObjectMeta, k, v)
	return w
}

// AccessModes replaces the access modes.
func (w *PVCWrapper) AccessModes(m ...v1.PersistentVolumeAccessMode) *PVCWrapper {
	w.Spec.AccessModes = m
	return w
}

// Selector requires the PV labels.
func (w *PVCWrapper) Selector(labels map[string]string) *PVCWrapper {
	w.Spec.Selector = &metav1.LabelSelector{MatchLabels: labels}
	return w
}

// MakeStorageClass returns a StorageClass with the binding mode and, when
// zones are given, allowedTopologies on topology.kubernetes.io/zone.
func MakeStorageClass(name, provisioner string, mode storagev1.VolumeBindingMode, zones ...string) *storagev1.StorageClass {
	sc := &storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: name}, Provisioner: provisioner, VolumeBindingMode: &mode}
	if len(zones) > 0 {
		sc.AllowedTopologies = []v1.TopologySelectorTerm{{MatchLabelExpressions: []v1.TopologySelectorLabelRequirement{{Key: v1.LabelTopologyZone, Values: zones}}}}
	}
	return sc
}

// MakeCSINode returns a CSINode with the drivers, each with its
// allocatable count (a negative count: none).
func MakeCSINode(node string, drivers map[string]int32) *storagev1.CSINode {
	n := &storagev1.CSINode{ObjectMeta: metav1.ObjectMeta{Name: node}}
	for d, c := range drivers {
		nd := storagev1.CSINodeDriver{Name: d, NodeID: node}
		if c >= 0 {
			count := c
			nd.Allocatable = &storagev1.VolumeNodeResources{Count: &count}
		}
		n.Spec.Drivers = append(n.Spec.Drivers, nd)
	}
	return n
}
