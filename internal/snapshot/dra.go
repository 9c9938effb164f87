package snapshot

import (
	"fmt"
	"strings"

	resourceapi "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/utils/ptr"
)

// DRA holds the Dynamic Resource Allocation objects of a dump
// (resource.k8s.io/v1).
type DRA struct {
	DeviceClasses          []*resourceapi.DeviceClass
	ResourceSlices         []*resourceapi.ResourceSlice
	ResourceClaims         []*resourceapi.ResourceClaim
	ResourceClaimTemplates []*resourceapi.ResourceClaimTemplate
	DeviceTaintRules       []*resourceapi.DeviceTaintRule
}

// Empty reports whether the dump has no DRA object.
func (d *DRA) Empty() bool {
	return len(d.DeviceClasses)+len(d.ResourceSlices)+len(d.ResourceClaims)+len(d.ResourceClaimTemplates)+len(d.DeviceTaintRules) == 0
}

// draKinds are the resource.k8s.io kinds the scheduler reads.
var draKinds = sets.New("DeviceClass", "ResourceSlice", "ResourceClaim", "ResourceClaimTemplate", "DeviceTaintRule")

// addDRA decodes a resource.k8s.io object into c.DRA; handled is false for
// other kinds. v1beta2 has v1's shape and is read as v1; older versions
// are refused with a hint.
func (c *Cluster) addDRA(apiVersion, kind string, decode func(any) error, fail func(string) error) (handled bool, err error) {
	group, version, _ := strings.Cut(apiVersion, "/")
	if group != resourceapi.GroupName || !draKinds.Has(kind) {
		return false, nil
	}
	if version != "v1" && version != "v1beta2" {
		return true, fail(fmt.Sprintf("apiVersion %s is not supported: dump resource.k8s.io objects as v1 (kubectl get %ss.v1.resource.k8s.io)", apiVersion, strings.ToLower(kind)))
	}
	ns := func(m *metav1.ObjectMeta) {
		if m.Namespace == "" {
			m.Namespace = c.DefaultNamespace
			if m.Namespace == "" {
				m.Namespace = "default"
			}
		}
	}
	switch kind {
	case "DeviceClass":
		o := &resourceapi.DeviceClass{}
		if err := decodeDefaulted(decode, o); err != nil {
			return true, err
		}
		c.DRA.DeviceClasses = append(c.DRA.DeviceClasses, o)
	case "ResourceSlice":
		o := &resourceapi.ResourceSlice{}
		if err := decodeDefaulted(decode, o); err != nil {
			return true, err
		}
		if msg := validateSlice(o); msg != "" {
			return true, fail(msg)
		}
		c.DRA.ResourceSlices = append(c.DRA.ResourceSlices, o)
	case "ResourceClaim":
		o := &resourceapi.ResourceClaim{}
		if err := decodeDefaulted(decode, o); err != nil {
			return true, err
		}
		ns(&o.ObjectMeta)
		c.DRA.ResourceClaims = append(c.DRA.ResourceClaims, o)
	case "ResourceClaimTemplate":
		o := &resourceapi.ResourceClaimTemplate{}
		if err := decodeDefaulted(decode, o); err != nil {
			return true, err
		}
		ns(&o.ObjectMeta)
		c.DRA.ResourceClaimTemplates = append(c.DRA.ResourceClaimTemplates, o)
	case "DeviceTaintRule":
		o := &resourceapi.DeviceTaintRule{}
		if err := decodeDefaulted(decode, o); err != nil {
			return true, err
		}
		c.DRA.DeviceTaintRules = append(c.DRA.DeviceTaintRules, o)
	}
	return true, nil
}

// validateSlice checks what the allocator relies on and the API server
// would have enforced: a driver, a pool with a name and a positive slice
// count, exactly one way to select nodes, named and unique devices and
// counter sets. It returns "" or the first problem with its field path.
func validateSlice(s *resourceapi.ResourceSlice) string {
	spec := &s.Spec
	switch {
	case spec.Driver == "":
		return "spec.driver: Required value"
	case spec.Pool.Name == "":
		return "spec.pool.name: Required value"
	case spec.Pool.ResourceSliceCount <= 0:
		return fmt.Sprintf("spec.pool.resourceSliceCount: Invalid value: %d: must be greater than zero", spec.Pool.ResourceSliceCount)
	}
	selections := 0
	if ptr.Deref(spec.NodeName, "") != "" {
		selections++
	}
	if spec.NodeSelector != nil {
		selections++
	}
	if ptr.Deref(spec.AllNodes, false) {
		selections++
	}
	if ptr.Deref(spec.PerDeviceNodeSelection, false) {
		selections++
	}
	if selections == 0 && len(spec.SharedCounters) == 0 {
		return "spec: Required value: exactly one of `nodeName`, `nodeSelector`, `allNodes`, `perDeviceNodeSelection` is required"
	}
	if selections > 1 {
		return "spec: Invalid value: exactly one of `nodeName`, `nodeSelector`, `allNodes`, `perDeviceNodeSelection` is required"
	}
	if spec.NodeSelector != nil && len(spec.NodeSelector.NodeSelectorTerms) == 0 {
		return "spec.nodeSelector.nodeSelectorTerms: Required value"
	}
	seen := sets.New[string]()
	for i, d := range spec.Devices {
		if d.Name == "" {
			return fmt.Sprintf("spec.devices[%d].name: Required value", i)
		}
		if seen.Has(d.Name) {
			return fmt.Sprintf("spec.devices[%d].name: Duplicate value: %q", i, d.Name)
		}
		seen.Insert(d.Name)
	}
	counters := sets.New[string]()
	for i, cs := range spec.SharedCounters {
		if cs.Name == "" {
			return fmt.Sprintf("spec.sharedCounters[%d].name: Required value", i)
		}
		if counters.Has(cs.Name) {
			return fmt.Sprintf("spec.sharedCounters[%d].name: Duplicate value: %q", i, cs.Name)
		}
		counters.Insert(cs.Name)
	}
	return ""
}

// draObjects lists the DRA objects for writing a dump.
func (c *Cluster) draObjects(add func(apiVersion, kind string, n int, get func(i int) (*metav1.ObjectMeta, runtime.Object))) {
	const gv = "resource.k8s.io/v1"
	d := &c.DRA
	add(gv, "DeviceClass", len(d.DeviceClasses), func(i int) (*metav1.ObjectMeta, runtime.Object) {
		return &d.DeviceClasses[i].ObjectMeta, d.DeviceClasses[i]
	})
	add(gv, "ResourceSlice", len(d.ResourceSlices), func(i int) (*metav1.ObjectMeta, runtime.Object) {
		return &d.ResourceSlices[i].ObjectMeta, d.ResourceSlices[i]
	})
	add(gv, "DeviceTaintRule", len(d.DeviceTaintRules), func(i int) (*metav1.ObjectMeta, runtime.Object) {
		return &d.DeviceTaintRules[i].ObjectMeta, d.DeviceTaintRules[i]
	})
	add(gv, "ResourceClaimTemplate", len(d.ResourceClaimTemplates), func(i int) (*metav1.ObjectMeta, runtime.Object) {
		return &d.ResourceClaimTemplates[i].ObjectMeta, d.ResourceClaimTemplates[i]
	})
	add(gv, "ResourceClaim", len(d.ResourceClaims), func(i int) (*metav1.ObjectMeta, runtime.Object) {
		return &d.ResourceClaims[i].ObjectMeta, d.ResourceClaims[i]
	})
}
