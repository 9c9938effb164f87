package openb

import (
	"fmt"
	"math/rand"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

const podHeader = "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,scheduled_time\n"

func TestGPUShareMapping(t *testing.T) {
	csv := podHeader +
		"share,6000,12288,1,460,,LS,Running,1,2,1\n" +
		"whole,88000,327680,8,1000,,LS,Running,2,3,2\n" +
		"spec,16000,32768,1,1000,V100M16|V100M32,LS,Running,3,4,3\n" +
		"cpu,12000,16384,0,0,,BE,Running,4,5,4\n" +
		"big,1000,1024,1,1500,,LS,Running,5,6,5\n" +
		"zero,1000,1024,1,-5,,LS,Running,6,7,6\n" +
		"failed,1000,1024,1,500,,LS,Failed,7,8,7\n"
	pods, err := ReadPods(strings.NewReader(csv), "pods.csv", Options{GPU: GPUShare})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]map[string]string{}
	for _, p := range pods {
		got[p.Name] = p.Annotations
		if _, ok := p.Spec.Containers[0].Resources.Requests[GPUResource]; ok {
			t.Errorf("%s requests %s: the GPU-share mapping requests none", p.Name, GPUResource)
		}
		if p.Spec.Affinity != nil {
			t.Errorf("%s has node affinity: gpu_spec is an annotation in the GPU-share mapping", p.Name)
		}
	}
	want := map[string]map[string]string{
		"share": {AnnotationGPUCount: "1", AnnotationGPUMilli: "460"},
		"whole": {AnnotationGPUCount: "8", AnnotationGPUMilli: "1000"},
		"spec":  {AnnotationGPUCount: "1", AnnotationGPUMilli: "1000", AnnotationGPUModel: "V100M16|V100M32"},
		"cpu":   nil,
		// Clamped as the artifact's pod_csv_to_yaml.py does: above 1000 is
		// 1000, 0 or below asks for no GPU.
		"big":  {AnnotationGPUCount: "1", AnnotationGPUMilli: "1000"},
		"zero": nil,
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("annotations (-want +got):\n%s", d)
	}
	all, err := ReadPods(strings.NewReader(csv), "pods.csv", Options{GPU: GPUShare, KeepFailed: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != 7 || all[6].Name != "failed" {
		t.Errorf("KeepFailed: got %d pods, want all 7 rows", len(all))
	}
	noMilli, err := ReadPods(strings.NewReader("name,cpu_milli,memory_mib,num_gpu\np,1000,1024,2\n"), "pods.csv", Options{GPU: GPUShare})
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(map[string]string{AnnotationGPUCount: "2", AnnotationGPUMilli: "1000"}, noMilli[0].Annotations); d != "" {
		t.Errorf("without a gpu_milli column a GPU is whole (-want +got):\n%s", d)
	}
}

func TestDRAMapping(t *testing.T) {
	csv := podHeader +
		"share,6000,12288,1,460,,LS,Running,1,2,1\n" +
		"share2,4000,12288,1,460,,LS,Running,1,2,1\n" +
		"whole,88000,327680,2,1000,,LS,Running,2,3,2\n" +
		"spec,16000,32768,1,1000,V100M16|V100M32,LS,Running,3,4,3\n" +
		"cpu,12000,16384,0,0,,BE,Running,4,5,4\n"
	pods, err := ReadPods(strings.NewReader(csv), "pods.csv", Options{GPU: GPUDRA})
	if err != nil {
		t.Fatal(err)
	}
	claims := map[string]string{}
	for _, p := range pods {
		if _, ok := p.Spec.Containers[0].Resources.Requests[GPUResource]; ok {
			t.Errorf("%s requests %s", p.Name, GPUResource)
		}
		for _, c := range p.Spec.ResourceClaims {
			claims[p.Name] = c.Name + "=" + *c.ResourceClaimTemplateName
			if d := cmp.Diff([]v1.ResourceClaim{{Name: DRAClaimName}}, p.Spec.Containers[0].Resources.Claims); d != "" {
				t.Errorf("%s: container claims (-want +got):\n%s", p.Name, d)
			}
		}
	}
	if d := cmp.Diff(map[string]string{"share": "gpu=gpu-1x460", "share2": "gpu=gpu-1x460", "whole": "gpu=gpu-2x1000", "spec": "gpu=gpu-1x1000-v100m16-v100m32"}, claims); d != "" {
		t.Errorf("claims (-want +got):\n%s", d)
	}
	// The GPU-share pods converted are the DRA mapping's pods.
	shared, err := ReadPods(strings.NewReader(csv), "pods.csv", Options{GPU: GPUShare})
	if err != nil {
		t.Fatal(err)
	}
	for i, p := range shared {
		before := p.DeepCopy()
		got, err := DRAPod(p)
		if err != nil {
			t.Fatal(err)
		}
		if d := cmp.Diff(pods[i], got, quantityExact); d != "" {
			t.Errorf("DRAPod(%s) (-read as DRA +converted):\n%s", p.Name, d)
		}
		if d := cmp.Diff(before, p, quantityExact); d != "" {
			t.Errorf("DRAPod modified its input (-before +after):\n%s", d)
		}
	}
	bad := shared[0].DeepCopy()
	bad.Annotations[AnnotationGPUMilli] = "1001"
	if _, err := DRAPod(bad); err == nil || !strings.Contains(err.Error(), "gpu-milli") {
		t.Errorf("DRAPod of 1001 thousandths: err = %v", err)
	}
	tmpls, err := DRAClaimTemplates(pods)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tm := range tmpls {
		names = append(names, tm.Name)
	}
	if d := cmp.Diff([]string{"gpu-1x1000-v100m16-v100m32", "gpu-1x460", "gpu-2x1000"}, names); d != "" {
		t.Errorf("one template per shape (-want +got):\n%s", d)
	}
	wantSpec := resourcev1.ResourceClaimTemplate{
		TypeMeta:   metav1.TypeMeta{APIVersion: "resource.k8s.io/v1", Kind: "ResourceClaimTemplate"},
		ObjectMeta: metav1.ObjectMeta{Name: "gpu-1x1000-v100m16-v100m32", Namespace: Namespace},
		Spec: resourcev1.ResourceClaimTemplateSpec{Spec: resourcev1.ResourceClaimSpec{Devices: resourcev1.DeviceClaim{
			Requests: []resourcev1.DeviceRequest{{Name: "gpu", Exactly: &resourcev1.ExactDeviceRequest{
				DeviceClassName: "openb-gpu",
				AllocationMode:  resourcev1.DeviceAllocationModeExactCount,
				Count:           1,
				Capacity:        &resourcev1.CapacityRequirements{Requests: map[resourcev1.QualifiedName]resource.Quantity{"milli": resource.MustParse("1000")}},
				Selectors: []resourcev1.DeviceSelector{{CEL: &resourcev1.CELDeviceSelector{
					Expression: `device.attributes["gpu.openb.example.com"].model in ["V100M16", "V100M32"]`,
				}}},
			}}},
		}}},
	}
	if d := cmp.Diff(&wantSpec, tmpls[0], quantityExact); d != "" {
		t.Errorf("template (-want +got):\n%s", d)
	}
	if tmpls[2].Spec.Spec.Devices.Requests[0].Exactly.Count != 2 || tmpls[1].Spec.Spec.Devices.Requests[0].Exactly.Selectors != nil {
		t.Errorf("whole: count %d; share: selectors %v", tmpls[2].Spec.Spec.Devices.Requests[0].Exactly.Count, tmpls[1].Spec.Spec.Devices.Requests[0].Exactly.Selectors)
	}

	nodes, err := ReadNodes(strings.NewReader("sn,cpu_milli,memory_mib,gpu,model\ncpu,32000,1024,0,\nt4,96000,1024,2,T4\n"), "nodes.csv")
	if err != nil {
		t.Fatal(err)
	}
	slices := DRAResourceSlices(nodes)
	gpu := func(i int) resourcev1.Device {
		return resourcev1.Device{
			Name:                     fmt.Sprintf("gpu-%d", i),
			Attributes:               map[resourcev1.QualifiedName]resourcev1.DeviceAttribute{"model": {StringValue: ptr.To("T4")}},
			Capacity:                 map[resourcev1.QualifiedName]resourcev1.DeviceCapacity{"milli": {Value: resource.MustParse("1000")}},
			AllowMultipleAllocations: ptr.To(true),
		}
	}
	wantSlices := []*resourcev1.ResourceSlice{{
		TypeMeta:   metav1.TypeMeta{APIVersion: "resource.k8s.io/v1", Kind: "ResourceSlice"},
		ObjectMeta: metav1.ObjectMeta{Name: "t4-gpu-openb-example-com"},
		Spec: resourcev1.ResourceSliceSpec{
			Driver:   "gpu.openb.example.com",
			Pool:     resourcev1.ResourcePool{Name: "t4", Generation: 1, ResourceSliceCount: 1},
			NodeName: ptr.To("t4"),
			Devices:  []resourcev1.Device{gpu(0), gpu(1)},
		},
	}}
	if d := cmp.Diff(wantSlices, slices, quantityExact); d != "" {
		t.Errorf("slices: one per GPU node (-want +got):\n%s", d)
	}
	if got := DRADeviceClass().Spec.Selectors[0].CEL.Expression; got != `device.driver == "gpu.openb.example.com"` {
		t.Errorf("device class selector %q", got)
	}
}

func TestTunedWorkload(t *testing.T) {
	var b strings.Builder
	b.WriteString(podHeader)
	for i := 0; i < 50; i++ {
		fmt.Fprintf(&b, "p%02d,1000,1024,1,%d,,LS,Running,%d,0,0\n", i, 100*(1+i%10), i)
	}
	pods, err := ReadPods(strings.NewReader(b.String()), "pods.csv", Options{GPU: GPUShare})
	if err != nil {
		t.Fatal(err)
	}
	nodes, err := ReadNodes(strings.NewReader("sn,cpu_milli,memory_mib,gpu,model\nb,1,1,4,T4\na,1,1,4,T4\nc,1,1,2,T4\n"), "nodes.csv")
	if err != nil {
		t.Fatal(err)
	}
	var demand int64
	for _, p := range pods {
		_, tot := GPUMilli(p)
		demand += tot
	}
	if demand != 27500 {
		t.Fatalf("demand %d, want 27500 (5 x 5500)", demand)
	}
	// 10 GPUs: 130% is 13000 thousandths, below the 27500 of the trace:
	// pods are removed; 400% (40000) is above: pods are added.
	for _, tt := range []struct {
		name  string
		ratio float64
	}{{"tuned down", 1.3}, {"tuned up", 4.0}} {
		t.Run(tt.name, func(t *testing.T) {
			w := TunedWorkload(nodes, pods, 10000, tt.ratio, 42, Epoch)
			again := TunedWorkload(nodes, pods, 10000, tt.ratio, 42, Epoch)
			if d := cmp.Diff(names(w.Pods), names(again.Pods)); d != "" {
				t.Fatalf("not deterministic (-first +second):\n%s", d)
			}
			if other := TunedWorkload(nodes, pods, 10000, tt.ratio, 43, Epoch); cmp.Equal(names(w.Pods), names(other.Pods)) {
				t.Error("seeds 42 and 43 give the same workload")
			}
			var sum int64
			for i, p := range w.Pods {
				_, tot := GPUMilli(p)
				sum += tot
				if want := Epoch.Add(time.Duration(i) * time.Second); !p.CreationTimestamp.Time.Equal(want) {
					t.Fatalf("pod %d created %v, want %v", i, p.CreationTimestamp, want)
				}
			}
			target := int64(tt.ratio * 10000)
			if sum > target || sum < target-1000 {
				t.Errorf("demand %d, want within one pod below %d", sum, target)
			}
			// The artifact's draws: Int, Shuffle of the name-sorted pods,
			// then Intn to remove or sample.
			r := rand.New(rand.NewSource(42))
			r.Int()
			order := names(pods)
			r.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
			if tt.ratio > 1.3 {
				if d := cmp.Diff(order, names(w.Pods)[:50]); d != "" {
					t.Errorf("the shuffled trace comes first (-want +got):\n%s", d)
				}
				if !strings.HasSuffix(w.Pods[50].Name, "-tuned-0") {
					t.Errorf("pod 50 is %s, want a tuned copy", w.Pods[50].Name)
				}
			}
			var prefixes []string
			for _, n := range w.Nodes {
				prefixes = append(prefixes, n.Name[:5])
			}
			sort.Strings(prefixes)
			if d := cmp.Diff([]string{"0000-", "0001-", "0002-"}, prefixes); d != "" {
				t.Errorf("node prefixes are a permutation (-want +got):\n%s", d)
			}
		})
	}
	if pods[0].Name != "p00" || len(nodes) != 3 || nodes[0].Name != "b" {
		t.Error("the inputs were modified")
	}
}

func names(pods []*v1.Pod) []string {
	out := make([]string, len(pods))
	for i, p := range pods {
		out[i] = p.Name
	}
	return out
}
