package openb

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	v1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// The DRA mapping of openb's GPU sharing (Options.GPU = GPUDRA), on
// consumable capacity (KEP-5075, beta and on in v1.37):
//
//   - DeviceClass DRAClassName selects the devices of driver DRADriver.
//   - Each GPU node has one ResourceSlice (pool = the node, one slice),
//     with one device per GPU, "gpu-0".."gpu-<n-1>": attribute model = the
//     node's GPU model, capacity milli = 1000, allowMultipleAllocations, so
//     several claims may share a device's thousandths.
//   - Each pod shape (num_gpu, gpu_milli, gpu_spec) has one
//     ResourceClaimTemplate (DRATemplateName) in the pods' namespace: one
//     request "gpu" for num_gpu devices of the class, each consuming
//     gpu_milli of its milli capacity; a multi-GPU pod asks for 1000 each,
//     so it takes whole devices. A non-empty gpu_spec becomes a CEL
//     selector on the model attribute.
const (
	// DRADriver is the devices' driver (and the attributes' domain).
	DRADriver = "gpu.openb.example.com"
	// DRAClassName is the DeviceClass of the GPUs.
	DRAClassName = "openb-gpu"
	// DRACapacity is the consumable capacity of each device, in thousandths.
	DRACapacity = "milli"
	// DRAModelAttribute is the device attribute holding the GPU model.
	DRAModelAttribute = "model"
	// DRAClaimName is the pod's claim (and request) name.
	DRAClaimName = "gpu"
	// MilliPerGPU is one whole GPU in thousandths.
	MilliPerGPU = 1000
)

// Shape is a pod's GPU request: Count devices, Milli thousandths each, of
// one of Models (any when empty).
type Shape struct {
	Count  int64
	Milli  int64
	Models []string
}

// DRATemplateName names the ResourceClaimTemplate of a shape:
// "gpu-1x460", "gpu-2x1000-v100m16-v100m32".
func DRATemplateName(s Shape) string {
	n := fmt.Sprintf("gpu-%dx%d", s.Count, s.Milli)
	for _, m := range s.Models {
		n += "-" + dnsLabel(m)
	}
	return n
}

// dnsLabel lowercases a model name and replaces what a DNS label may not
// hold with '-'.
func dnsLabel(s string) string {
	b := []byte(strings.ToLower(s))
	for i, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9') {
			b[i] = '-'
		}
	}
	return string(b)
}

// DRADeviceClass returns the GPUs' DeviceClass.
func DRADeviceClass() *resourcev1.DeviceClass {
	return &resourcev1.DeviceClass{
		TypeMeta:   metav1.TypeMeta{APIVersion: resourcev1.SchemeGroupVersion.String(), Kind: "DeviceClass"},
		ObjectMeta: metav1.ObjectMeta{Name: DRAClassName},
		Spec: resourcev1.DeviceClassSpec{Selectors: []resourcev1.DeviceSelector{{
			CEL: &resourcev1.CELDeviceSelector{Expression: fmt.Sprintf("device.driver == %q", DRADriver)},
		}}},
	}
}

// DRAResourceSlices returns one ResourceSlice per node with GPUs (nodes
// without nvidia.com/gpu get none), in node order.
func DRAResourceSlices(nodes []*v1.Node) []*resourcev1.ResourceSlice {
	var out []*resourcev1.ResourceSlice
	for _, n := range nodes {
		q, ok := n.Status.Allocatable[GPUResource]
		if !ok || q.Value() <= 0 {
			continue
		}
		model := n.Labels[LabelGPUModel]
		s := &resourcev1.ResourceSlice{
			TypeMeta:   metav1.TypeMeta{APIVersion: resourcev1.SchemeGroupVersion.String(), Kind: "ResourceSlice"},
			ObjectMeta: metav1.ObjectMeta{Name: n.Name + "-" + dnsLabel(DRADriver)},
			Spec: resourcev1.ResourceSliceSpec{
				Driver:   DRADriver,
				Pool:     resourcev1.ResourcePool{Name: n.Name, Generation: 1, ResourceSliceCount: 1},
				NodeName: ptr.To(n.Name),
			},
		}
		for i := int64(0); i < q.Value(); i++ {
			d := resourcev1.Device{
				Name:                     "gpu-" + strconv.FormatInt(i, 10),
				Capacity:                 map[resourcev1.QualifiedName]resourcev1.DeviceCapacity{DRACapacity: {Value: *resource.NewQuantity(MilliPerGPU, resource.DecimalSI)}},
				AllowMultipleAllocations: ptr.To(true),
			}
			if model != "" {
				d.Attributes = map[resourcev1.QualifiedName]resourcev1.DeviceAttribute{DRAModelAttribute: {StringValue: ptr.To(model)}}
			}
			s.Spec.Devices = append(s.Spec.Devices, d)
		}
		out = append(out, s)
	}
	return out
}

// DRAClaimTemplate returns the ResourceClaimTemplate of a shape in
// namespace ns.
func DRAClaimTemplate(ns string, s Shape) *resourcev1.ResourceClaimTemplate {
	req := resourcev1.ExactDeviceRequest{
		DeviceClassName: DRAClassName,
		AllocationMode:  resourcev1.DeviceAllocationModeExactCount,
		Count:           s.Count,
		Capacity: &resourcev1.CapacityRequirements{Requests: map[resourcev1.QualifiedName]resource.Quantity{
			DRACapacity: *resource.NewQuantity(s.Milli, resource.DecimalSI),
		}},
	}
	if len(s.Models) > 0 {
		quoted := make([]string, len(s.Models))
		for i, m := range s.Models {
			quoted[i] = strconv.Quote(m)
		}
		req.Selectors = []resourcev1.DeviceSelector{{CEL: &resourcev1.CELDeviceSelector{
			Expression: fmt.Sprintf("device.attributes[%q].%s in [%s]", DRADriver, DRAModelAttribute, strings.Join(quoted, ", ")),
		}}}
	}
	return &resourcev1.ResourceClaimTemplate{
		TypeMeta:   metav1.TypeMeta{APIVersion: resourcev1.SchemeGroupVersion.String(), Kind: "ResourceClaimTemplate"},
		ObjectMeta: metav1.ObjectMeta{Name: DRATemplateName(s), Namespace: ns},
		Spec: resourcev1.ResourceClaimTemplateSpec{Spec: resourcev1.ResourceClaimSpec{Devices: resourcev1.DeviceClaim{
			Requests: []resourcev1.DeviceRequest{{Name: DRAClaimName, Exactly: &req}},
		}}},
	}
}

// DRAClaimTemplates returns the templates the pods reference (pods read
// with Options.GPU = GPUDRA), one per namespace and shape, sorted by
// namespace and name. A pod's shape is read from the GPU-share
// annotations the DRA mapping keeps on it.
func DRAClaimTemplates(pods []*v1.Pod) ([]*resourcev1.ResourceClaimTemplate, error) {
	seen := map[string]bool{}
	var out []*resourcev1.ResourceClaimTemplate
	for _, p := range pods {
		if len(p.Spec.ResourceClaims) == 0 {
			continue
		}
		s, err := shapeOf(p)
		if err != nil {
			return nil, fmt.Errorf("pod %s/%s: %w", p.Namespace, p.Name, err)
		}
		t := DRAClaimTemplate(p.Namespace, s)
		for _, c := range p.Spec.ResourceClaims {
			if c.ResourceClaimTemplateName != nil && *c.ResourceClaimTemplateName != t.Name {
				return nil, fmt.Errorf("pod %s/%s: claim %s uses template %q, not %q of its GPU annotations", p.Namespace, p.Name, c.Name, *c.ResourceClaimTemplateName, t.Name)
			}
		}
		if k := p.Namespace + "/" + t.Name; !seen[k] {
			seen[k] = true
			out = append(out, t)
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Namespace != out[j].Namespace {
			return out[i].Namespace < out[j].Namespace
		}
		return out[i].Name < out[j].Name
	})
	return out, nil
}

// DRAPod returns a pod of the GPU-share mapping in the DRA mapping: a copy
// with the claim "gpu" from its shape's template, as GPUDRA reads it from
// the CSV (the annotations stay, the record of its shape). A pod without
// GPU annotations is returned as it is.
func DRAPod(p *v1.Pod) (*v1.Pod, error) {
	if _, total := GPUMilli(p); total == 0 {
		return p, nil
	}
	s, err := shapeOf(p)
	if err != nil {
		return nil, fmt.Errorf("pod %s/%s: %w", p.Namespace, p.Name, err)
	}
	c := p.DeepCopy()
	withDRAClaim(c, s)
	return c, nil
}

// withDRAClaim gives a pod the claim of its shape's template.
func withDRAClaim(p *v1.Pod, s Shape) {
	tmpl := DRATemplateName(s)
	p.Spec.ResourceClaims = []v1.PodResourceClaim{{Name: DRAClaimName, ResourceClaimTemplateName: &tmpl}}
	p.Spec.Containers[0].Resources.Claims = []v1.ResourceClaim{{Name: DRAClaimName}}
}

// shapeOf reads a pod's shape from its GPU-share annotations.
func shapeOf(p *v1.Pod) (Shape, error) {
	var s Shape
	var err error
	if s.Count, err = strconv.ParseInt(p.Annotations[AnnotationGPUCount], 10, 64); err != nil || s.Count <= 0 {
		return s, fmt.Errorf("annotation %s: invalid value %q", AnnotationGPUCount, p.Annotations[AnnotationGPUCount])
	}
	if s.Milli, err = strconv.ParseInt(p.Annotations[AnnotationGPUMilli], 10, 64); err != nil || s.Milli <= 0 || s.Milli > MilliPerGPU {
		return s, fmt.Errorf("annotation %s: invalid value %q", AnnotationGPUMilli, p.Annotations[AnnotationGPUMilli])
	}
	for _, m := range strings.Split(p.Annotations[AnnotationGPUModel], "|") {
		if m != "" {
			s.Models = append(s.Models, m)
		}
	}
	return s, nil
}
