package workload

import (
	"fmt"
	"slices"

	v1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
)

func (g *draGen) pod(clk *clock, app string, cpu, mem string) *v1.Pod {
	name := g.names.next(app + "-")
	return &v1.Pod{
		TypeMeta: typed("v1", "Pod"),
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ml", UID: types.UID("uid-" + name), CreationTimestamp: clk.next(),
			Labels: map[string]string{"app": app}},
		Spec: v1.PodSpec{
			SchedulerName: v1.DefaultSchedulerName,
			Containers: []v1.Container{{Name: "main", Image: "registry.example.com/ml/" + app + ":v1", Resources: v1.ResourceRequirements{
				Requests: v1.ResourceList{v1.ResourceCPU: resource.MustParse(cpu), v1.ResourceMemory: resource.MustParse(mem)}}}},
			Tolerations: []v1.Toleration{{Key: "gpu.example.com/present", Operator: v1.TolerationOpExists, Effect: v1.TaintEffectNoSchedule}},
		},
	}
}

func (g *draGen) withTemplate(p *v1.Pod, podClaim, template string) {
	p.Spec.ResourceClaims = append(p.Spec.ResourceClaims, v1.PodResourceClaim{Name: podClaim, ResourceClaimTemplateName: ptr.To(template)})
	p.Spec.Containers[0].Resources.Claims = append(p.Spec.Containers[0].Resources.Claims, v1.ResourceClaim{Name: podClaim})
	if t := g.tmpl[template]; t != nil {
		g.w.DRA.Claims = append(g.w.DRA.Claims, templateClaim(g.names, p, podClaim, t))
	}
}

// running adds a running pod: on a GPU node with a free GPU, holding it
// through an allocated and reserved gpu-1 claim; otherwise a CPU pod.
func (g *draGen) running(clk *clock) {
	var cands []*draNode
	for _, n := range g.nodes {
		if len(n.gpus) > 0 {
			cands = append(cands, n)
		}
	}
	if len(cands) > 0 && g.rng.IntN(3) > 0 {
		n := cands[g.rng.IntN(len(cands))]
		p := g.pod(clk, "trainer", "4", "32Gi")
		p.Spec.NodeName = n.node.Name
		p.Status.Phase = v1.PodRunning
		g.withTemplate(p, "gpu", "gpu-1")
		c := g.w.DRA.Claims[len(g.w.DRA.Claims)-1]
		d := n.gpus[g.rng.IntN(len(n.gpus))]
		n.gpus = slices.DeleteFunc(n.gpus, func(x string) bool { return x == d })
		allocate(c, n.node.Name, []resourceapi.DeviceRequestAllocationResult{{Request: "gpu", Driver: n.driver, Pool: n.pool, Device: d}}, p)
		g.w.Existing = append(g.w.Existing, p)
		return
	}
	p := g.pod(clk, "web", "2", "4Gi")
	p.Spec.Tolerations = nil
	p.Spec.NodeName = g.nodes[g.rng.IntN(len(g.nodes))].node.Name
	p.Status.Phase = v1.PodRunning
	g.w.Existing = append(g.w.Existing, p)
}

// pendingKinds weighs the pending pods' kinds.
var pendingKinds = []struct {
	kind   string
	weight int
}{
	{"cpu", 40}, {"gpu-1", 10}, {"gpu-2", 4}, {"gpu-4-same-model", 3}, {"h100-8", 2}, {"gpu-mem40", 4}, {"gpu-mem80-x2", 2},
	{"infer-prioritized", 5}, {"train-prioritized", 2}, {"mig-1g", 3}, {"mig-3g", 2}, {"infer-small-prioritized", 2}, {"all-l4", 2},
	{"gpu-nic", 2}, {"fpga", 2}, {"gpu-monitor", 1}, {"gpu-tolerate-unhealthy", 1}, {"vgpu-10Gi", 3}, {"vgpu-30Gi", 2},
	{"fabric-1", 2}, {"two-gpus", 1}, {"tpu", 1}, {"missing-template", 1}, {"shared", 3}, {"extended-gpu", 3},
	{"extended-class", 1}, {"extended-fabric", 1}, {"features", 3},
}

func (g *draGen) pending(clk *clock) {
	total := 0
	for _, k := range pendingKinds {
		total += k.weight
	}
	x := g.rng.IntN(total)
	kind := ""
	for _, k := range pendingKinds {
		if x < k.weight {
			kind = k.kind
			break
		}
		x -= k.weight
	}
	var p *v1.Pod
	switch kind {
	case "cpu":
		p = g.pod(clk, "app", []string{"1", "2", "4"}[g.rng.IntN(3)], []string{"2Gi", "8Gi"}[g.rng.IntN(2)])
		p.Spec.Tolerations = nil
	case "two-gpus":
		p = g.pod(clk, "job-"+kind, "4", "16Gi")
		g.withTemplate(p, "gpu-a", "gpu-1")
		g.withTemplate(p, "gpu-b", "gpu-1")
	case "missing-template":
		p = g.pod(clk, "job-"+kind, "1", "2Gi")
		g.withTemplate(p, "gpu", "not-created-yet")
	case "shared":
		// Several pods share one claim.
		p = g.pod(clk, "shared-worker", "2", "16Gi")
		k := g.shared / 3
		g.shared++
		claim := fmt.Sprintf("shared-gpu-%d", k)
		if g.shared%3 == 1 {
			g.w.DRA.Claims = append(g.w.DRA.Claims, &resourceapi.ResourceClaim{
				TypeMeta:   typed(resourceV1, "ResourceClaim"),
				ObjectMeta: metav1.ObjectMeta{Name: claim, Namespace: "ml", UID: types.UID("uid-" + claim), ResourceVersion: "1", CreationTimestamp: metav1.NewTime(Epoch)},
				Spec:       *g.tmpl["gpu-1"].Spec.Spec.DeepCopy(),
			})
		}
		p.Spec.ResourceClaims = []v1.PodResourceClaim{{Name: "gpu", ResourceClaimName: ptr.To(claim)}}
		p.Spec.Containers[0].Resources.Claims = []v1.ResourceClaim{{Name: "gpu"}}
	case "extended-gpu", "extended-class", "extended-fabric":
		p = g.pod(clk, "job-"+kind, "2", "8Gi")
		name := map[string]v1.ResourceName{"extended-gpu": "example.com/gpu", "extended-class": "deviceclass.resource.kubernetes.io/a100.gpu.example.com", "extended-fabric": "example.com/fabric"}[kind]
		one := resource.MustParse("1")
		p.Spec.Containers[0].Resources.Requests[name] = one
		p.Spec.Containers[0].Resources.Limits = v1.ResourceList{name: one}
	case "features":
		p = g.pod(clk, "edge-proxy", "500m", "1Gi")
		p.Spec.Tolerations = nil
		if g.rng.IntN(2) == 0 {
			p.Spec.HostNetwork, p.Spec.HostUsers = true, ptr.To(false)
		} else {
			p.Spec.Containers[0].RestartPolicyRules = []v1.ContainerRestartRule{{Action: v1.ContainerRestartRuleActionRestartAllContainers,
				ExitCodes: &v1.ContainerRestartRuleOnExitCodes{Operator: v1.ContainerRestartRuleOnExitCodesOpIn, Values: []int32{42}}}}
			p.Spec.Containers[0].RestartPolicy = ptr.To(v1.ContainerRestartPolicyNever)
		}
	default:
		cpu, mem := "4", "32Gi"
		if kind == "h100-8" || kind == "all-l4" {
			cpu, mem = "16", "128Gi"
		}
		p = g.pod(clk, "job-"+kind, cpu, mem)
		g.withTemplate(p, "gpu", kind)
	}
	p.Status.Phase = v1.PodPending
	g.w.Pending = append(g.w.Pending, p)
}
