package schedcore

import (
	"context"
	"sort"

	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
)

// StorageLister is what the volume plugins read of the cluster's storage
// objects, as kube-scheduler's plugins read their informers' listers: a
// missing object is nil. Objects are shared and must not be modified.
// Drivers provide it through Snapshot.Storage (a StorageState); plugins get
// it with Snapshot.StorageLister.
type StorageLister interface {
	// PVC returns a PersistentVolumeClaim by namespace and name.
	PVC(namespace, name string) *v1.PersistentVolumeClaim
	// PV returns a PersistentVolume by name.
	PV(name string) *v1.PersistentVolume
	// PVsByClass lists the PersistentVolumes of a storage class ("" for
	// none; the beta annotation counts as in kube's index), sorted by name.
	PVsByClass(class string) []*v1.PersistentVolume
	// StorageClass returns a StorageClass by name.
	StorageClass(name string) *storagev1.StorageClass
	// CSINode returns the CSINode of a node.
	CSINode(name string) *storagev1.CSINode
	// CSIDriver returns a CSIDriver by name.
	CSIDriver(name string) *storagev1.CSIDriver
	// CSIStorageCapacities lists every CSIStorageCapacity.
	CSIStorageCapacities() []*storagev1.CSIStorageCapacity
}

// VolumeBinder makes the API writes of VolumeBinding's PreBind: the PVs
// bound to their claims (spec.claimRef set) and the claims to provision
// (annotated with the selected node), then waits, as kube's
// BindPodVolumes does, until the claims are bound. The dry-run commits them
// into its storage state; run writes them to the API server. Nil in the
// Handle means the driver does not bind volumes (explain).
type VolumeBinder interface {
	BindPodVolumes(ctx context.Context, pod *v1.Pod, pvs []*v1.PersistentVolume, pvcs []*v1.PersistentVolumeClaim) error
}

// StorageState holds PVCs (by "namespace/name"), PVs, StorageClasses,
// CSINodes, CSIDrivers (by name) and CSIStorageCapacities, with a
// per-class index of the PVs. Build it with NewStorageState; it implements
// StorageLister. Drivers replace it as a whole (run) or change it between
// cycles with PutPV/PutPVC (dryrun); plugins only read it.
type StorageState struct {
	PVCs           map[string]*v1.PersistentVolumeClaim
	PVs            map[string]*v1.PersistentVolume
	StorageClasses map[string]*storagev1.StorageClass
	CSINodes       map[string]*storagev1.CSINode
	CSIDrivers     map[string]*storagev1.CSIDriver
	Capacities     []*storagev1.CSIStorageCapacity

	pvsByClass map[string][]*v1.PersistentVolume
}

// NewStorageState indexes the given objects.
func NewStorageState(pvcs []*v1.PersistentVolumeClaim, pvs []*v1.PersistentVolume, classes []*storagev1.StorageClass,
	csiNodes []*storagev1.CSINode, drivers []*storagev1.CSIDriver, capacities []*storagev1.CSIStorageCapacity) *StorageState {
	s := &StorageState{
		PVCs:           make(map[string]*v1.PersistentVolumeClaim, len(pvcs)),
		PVs:            make(map[string]*v1.PersistentVolume, len(pvs)),
		StorageClasses: make(map[string]*storagev1.StorageClass, len(classes)),
		CSINodes:       make(map[string]*storagev1.CSINode, len(csiNodes)),
		CSIDrivers:     make(map[string]*storagev1.CSIDriver, len(drivers)),
		Capacities:     capacities,
		pvsByClass:     map[string][]*v1.PersistentVolume{},
	}
	for _, o := range pvcs {
		s.PVCs[o.Namespace+"/"+o.Name] = o
	}
	for _, o := range pvs {
		s.PVs[o.Name] = o
	}
	for _, o := range classes {
		s.StorageClasses[o.Name] = o
	}
	for _, o := range csiNodes {
		s.CSINodes[o.Name] = o
	}
	for _, o := range drivers {
		s.CSIDrivers[o.Name] = o
	}
	for _, pv := range s.PVs {
		c := PVClass(pv)
		s.pvsByClass[c] = append(s.pvsByClass[c], pv)
	}
	for _, l := range s.pvsByClass {
		sortPVs(l)
	}
	return s
}

func sortPVs(l []*v1.PersistentVolume) {
	sort.Slice(l, func(i, j int) bool { return l[i].Name < l[j].Name })
}

// PVClass is a PV's storage class: the beta annotation first, then
// spec.storageClassName (component-helpers' GetPersistentVolumeClass).
func PVClass(pv *v1.PersistentVolume) string {
	if c, ok := pv.Annotations[v1.BetaStorageClassAnnotation]; ok {
		return c
	}
	return pv.Spec.StorageClassName
}

// PutPV adds or replaces a PV (dryrun's committed bindings). Not safe
// during a cycle.
func (s *StorageState) PutPV(pv *v1.PersistentVolume) {
	if old := s.PVs[pv.Name]; old != nil {
		c := PVClass(old)
		l := s.pvsByClass[c]
		for i := range l {
			if l[i].Name == pv.Name {
				s.pvsByClass[c] = append(l[:i:i], l[i+1:]...)
				break
			}
		}
	}
	s.PVs[pv.Name] = pv
	c := PVClass(pv)
	s.pvsByClass[c] = append(s.pvsByClass[c], pv)
	sortPVs(s.pvsByClass[c])
}

// PutPVC adds or replaces a PVC. Not safe during a cycle.
func (s *StorageState) PutPVC(pvc *v1.PersistentVolumeClaim) {
	s.PVCs[pvc.Namespace+"/"+pvc.Name] = pvc
}

// PVC implements StorageLister.
func (s *StorageState) PVC(namespace, name string) *v1.PersistentVolumeClaim {
	if s == nil {
		return nil
	}
	return s.PVCs[namespace+"/"+name]
}

// PV implements StorageLister.
func (s *StorageState) PV(name string) *v1.PersistentVolume {
	if s == nil {
		return nil
	}
	return s.PVs[name]
}

// PVsByClass implements StorageLister.
func (s *StorageState) PVsByClass(class string) []*v1.PersistentVolume {
	if s == nil {
		return nil
	}
	return s.pvsByClass[class]
}

// StorageClass implements StorageLister.
func (s *StorageState) StorageClass(name string) *storagev1.StorageClass {
	if s == nil {
		return nil
	}
	return s.StorageClasses[name]
}

// CSINode implements StorageLister.
func (s *StorageState) CSINode(name string) *storagev1.CSINode {
	if s == nil {
		return nil
	}
	return s.CSINodes[name]
}

// CSIDriver implements StorageLister.
func (s *StorageState) CSIDriver(name string) *storagev1.CSIDriver {
	if s == nil {
		return nil
	}
	return s.CSIDrivers[name]
}

// CSIStorageCapacities implements StorageLister.
func (s *StorageState) CSIStorageCapacities() []*storagev1.CSIStorageCapacity {
	if s == nil {
		return nil
	}
	return s.Capacities
}

var _ StorageLister = (*StorageState)(nil)

// StorageLister returns the snapshot's storage objects; never nil (an
// empty lister when the driver set none).
func (s *Snapshot) StorageLister() StorageLister {
	if s == nil || s.Storage == nil {
		return (*StorageState)(nil)
	}
	return s.Storage
}

// IsPVCUsedByPods reports whether a pod on some node uses the claim
// "namespace/name" (kube's StorageInfos().IsPVCUsedByPods).
func (s *Snapshot) IsPVCUsedByPods(key string) bool {
	for _, n := range s.nodeInfoList {
		if n.PVCRefCounts[key] > 0 {
			return true
		}
	}
	return false
}
