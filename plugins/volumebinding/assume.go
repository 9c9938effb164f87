package volumebinding

import (
	"fmt"
	"sync"

	v1 "k8s.io/api/core/v1"

	"github.com/kubectl-sched/kubectl-sched/schedcore"
)

// assumeCache is kube's passive assume cache over the storage lister: PVs
// bound and claims annotated in Reserve are seen by later cycles before
// their API writes land. An assumed object hides the lister's only while
// their resourceVersions agree, so a newer object from the API wins.
type assumeCache struct {
	mu   sync.RWMutex
	pvs  map[string]*v1.PersistentVolume      // by name
	pvcs map[string]*v1.PersistentVolumeClaim // by namespace/name
}

func newAssumeCache() *assumeCache {
	return &assumeCache{pvs: map[string]*v1.PersistentVolume{}, pvcs: map[string]*v1.PersistentVolumeClaim{}}
}

// pv returns the PV, the assumed version when it is current; nil when the
// lister has none.
func (c *assumeCache) pv(s schedcore.StorageLister, name string) *v1.PersistentVolume {
	base := s.PV(name)
	if base == nil {
		return nil
	}
	c.mu.RLock()
	defer c.mu.RUnlock()
	if a := c.pvs[name]; a != nil && a.ResourceVersion == base.ResourceVersion {
		return a
	}
	return base
}

// pvc returns the claim, the assumed version when it is current.
func (c *assumeCache) pvc(s schedcore.StorageLister, namespace, name string) *v1.PersistentVolumeClaim {
	base := s.PVC(namespace, name)
	if base == nil {
		return nil
	}
	c.mu.RLock()
	defer c.mu.RUnlock()
	if a := c.pvcs[namespace+"/"+name]; a != nil && a.ResourceVersion == base.ResourceVersion {
		return a
	}
	return base
}

// listPVs lists a class's PVs with assumed versions in place.
func (c *assumeCache) listPVs(s schedcore.StorageLister, class string) []*v1.PersistentVolume {
	base := s.PVsByClass(class)
	c.mu.RLock()
	defer c.mu.RUnlock()
	if len(c.pvs) == 0 {
		return base
	}
	var out []*v1.PersistentVolume
	for i, pv := range base {
		if a := c.pvs[pv.Name]; a != nil && a.ResourceVersion == pv.ResourceVersion {
			if out == nil {
				out = append(make([]*v1.PersistentVolume, 0, len(base)), base[:i]...)
			}
			out = append(out, a)
		} else if out != nil {
			out = append(out, pv)
		}
	}
	if out == nil {
		return base
	}
	return out
}

func (c *assumeCache) assumePV(s schedcore.StorageLister, pv *v1.PersistentVolume) error {
	stored := s.PV(pv.Name)
	if stored == nil {
		return fmt.Errorf("persistentvolumes %q not found", pv.Name)
	}
	if stored.ResourceVersion != pv.ResourceVersion {
		return fmt.Errorf("%q is out of sync (stored: %s, assume: %s)", pv.Name, stored.ResourceVersion, pv.ResourceVersion)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.pvs[pv.Name] = pv
	return nil
}

func (c *assumeCache) assumePVC(s schedcore.StorageLister, pvc *v1.PersistentVolumeClaim) error {
	key := pvc.Namespace + "/" + pvc.Name
	stored := s.PVC(pvc.Namespace, pvc.Name)
	if stored == nil {
		return fmt.Errorf("persistentvolumeclaims %q not found", key)
	}
	if stored.ResourceVersion != pvc.ResourceVersion {
		return fmt.Errorf("%q is out of sync (stored: %s, assume: %s)", key, stored.ResourceVersion, pvc.ResourceVersion)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.pvcs[key] = pvc
	return nil
}

func (c *assumeCache) restorePV(pv *v1.PersistentVolume) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if a := c.pvs[pv.Name]; a != nil && a.ResourceVersion == pv.ResourceVersion {
		delete(c.pvs, pv.Name)
	}
}

func (c *assumeCache) restorePVC(pvc *v1.PersistentVolumeClaim) {
	key := pvc.Namespace + "/" + pvc.Name
	c.mu.Lock()
	defer c.mu.Unlock()
	if a := c.pvcs[key]; a != nil && a.ResourceVersion == pvc.ResourceVersion {
		delete(c.pvcs, key)
	}
}

// prune forgets assumed objects the lister has replaced with newer ones (or
// deleted), as kube's informer handlers expire them.
func (c *assumeCache) prune(s schedcore.StorageLister) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for name, a := range c.pvs {
		if b := s.PV(name); b == nil || b.ResourceVersion != a.ResourceVersion {
			delete(c.pvs, name)
		}
	}
	for key, a := range c.pvcs {
		if b := s.PVC(a.Namespace, a.Name); b == nil || b.ResourceVersion != a.ResourceVersion {
			delete(c.pvcs, key)
		}
	}
}
