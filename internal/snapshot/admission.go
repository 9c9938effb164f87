package snapshot

import (
	"sort"

	storagev1 "k8s.io/api/storage/v1"
)

// Default StorageClass annotations (kube's pkg/volume/util).
const (
	isDefaultClass     = "storageclass.kubernetes.io/is-default-class"
	betaIsDefaultClass = "storageclass.beta.kubernetes.io/is-default-class"
	betaClaimClass     = "volume.beta.kubernetes.io/storage-class"
)

// defaultClaimClasses gives each unbound claim without a class the
// default StorageClass, as the DefaultStorageClass admission does when
// the claim is created (and the PV controller, for claims created before
// there was a default, since RetroactiveDefaultStorageClass): volume
// binding then binds it as its class says. Of several default classes,
// the newest wins, then the lowest name (GetDefaultClass). Bound claims
// keep what they have. Defaulting needs the dump's StorageClasses, so it
// runs once all files are read (AddPaths).
func (c *Cluster) defaultClaimClasses() {
	var defaults []*storagev1.StorageClass
	for _, sc := range c.StorageClasses {
		if sc.Annotations[isDefaultClass] == "true" || sc.Annotations[betaIsDefaultClass] == "true" {
			defaults = append(defaults, sc)
		}
	}
	if len(defaults) == 0 {
		return
	}
	sort.SliceStable(defaults, func(i, j int) bool {
		a, b := defaults[i].CreationTimestamp.UnixNano(), defaults[j].CreationTimestamp.UnixNano()
		if a == b {
			return defaults[i].Name < defaults[j].Name
		}
		return a > b
	})
	name := defaults[0].Name
	for _, pvc := range c.PVCs {
		if pvc.Spec.StorageClassName != nil || pvc.Spec.VolumeName != "" {
			continue
		}
		if _, ok := pvc.Annotations[betaClaimClass]; ok {
			continue
		}
		n := name
		pvc.Spec.StorageClassName = &n
	}
}
