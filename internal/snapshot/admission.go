package snapshot

import (
	"fmt"
	"slices"
	"sort"

	v1 "k8s.io/api/core/v1"
	nodev1 "k8s.io/api/node/v1"
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
	name := DefaultStorageClass(c.StorageClasses)
	if name == "" {
		return
	}
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

// DefaultStorageClass is the class the DefaultStorageClass admission gives
// a claim without one: of the classes annotated as the default (GA or
// beta annotation), the newest, then the lowest name (kube's
// GetDefaultClass); "" when there is none.
func DefaultStorageClass(classes []*storagev1.StorageClass) string {
	var defaults []*storagev1.StorageClass
	for _, sc := range classes {
		if sc.Annotations[isDefaultClass] == "true" || sc.Annotations[betaIsDefaultClass] == "true" {
			defaults = append(defaults, sc)
		}
	}
	if len(defaults) == 0 {
		return ""
	}
	sort.SliceStable(defaults, func(i, j int) bool {
		a, b := defaults[i].CreationTimestamp.UnixNano(), defaults[j].CreationTimestamp.UnixNano()
		if a == b {
			return defaults[i].Name < defaults[j].Name
		}
		return a > b
	})
	return defaults[0].Name
}

// admitRuntimeClasses applies AdmitRuntimeClass to the pods, a warning
// each for a class the dump lacks.
func (c *Cluster) admitRuntimeClasses() {
	for _, p := range c.Pods {
		if w := AdmitRuntimeClass(p, c.RuntimeClasses); w != "" {
			c.Warnings = append(c.Warnings, w)
		}
	}
}

// AdmitRuntimeClass gives a pod naming a RuntimeClass what the
// RuntimeClass admission gives it on create: the class's
// overhead.podFixed as spec.overhead, its scheduling.nodeSelector merged
// into spec.nodeSelector and its scheduling.tolerations added to the
// pod's (a toleration the pod has already is not added twice; the
// admission's merge also drops tolerations another covers, which
// tolerates the same taints). What the pod has already wins: a pod of a
// dump was admitted when created, perhaps before its class changed (the
// API server refuses a hand-written pod whose overhead or nodeSelector
// contradicts its class). It returns a warning for a class not among
// classes when the pod has no overhead (one that has was admitted), or "".
func AdmitRuntimeClass(p *v1.Pod, classes []*nodev1.RuntimeClass) string {
	name := p.Spec.RuntimeClassName
	if name == nil || *name == "" {
		return ""
	}
	var rc *nodev1.RuntimeClass
	for _, c := range classes {
		if c.Name == *name {
			rc = c
			break
		}
	}
	if rc == nil {
		if len(p.Spec.Overhead) > 0 {
			// Admitted already (a dump written before RuntimeClasses
			// were listed): what it has is what kube-scheduler reads.
			return ""
		}
		return fmt.Sprintf("warning: pod %s/%s: runtimeClassName %q is not a RuntimeClass of the dump: no overhead or scheduling constraints from it (the API server would refuse the pod)",
			p.Namespace, p.Name, *name)
	}
	if rc.Overhead != nil && len(rc.Overhead.PodFixed) > 0 && len(p.Spec.Overhead) == 0 {
		p.Spec.Overhead = rc.Overhead.PodFixed.DeepCopy()
	}
	if s := rc.Scheduling; s != nil {
		for k, v := range s.NodeSelector {
			if _, ok := p.Spec.NodeSelector[k]; ok {
				continue
			}
			if p.Spec.NodeSelector == nil {
				p.Spec.NodeSelector = map[string]string{}
			}
			p.Spec.NodeSelector[k] = v
		}
		for _, t := range s.Tolerations {
			if !slices.ContainsFunc(p.Spec.Tolerations, func(have v1.Toleration) bool {
				return have.MatchToleration(&t) && ptrEqual(have.TolerationSeconds, t.TolerationSeconds)
			}) {
				// Clipped: the list may be shared with other pods
				// (Cluster.Sharer), whose room past its end is theirs too.
				p.Spec.Tolerations = append(slices.Clip(p.Spec.Tolerations), t)
			}
		}
	}
	return ""
}

func ptrEqual(a, b *int64) bool {
	return a == nil && b == nil || a != nil && b != nil && *a == *b
}
