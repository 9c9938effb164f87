package workload

import (
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
)

// pod builds one replica of the app, as the API server would store it
// after defaulting and admission (default tolerations, schedulerName,
// priority from its class).
func (a *app) pod(names *nameGen, created metav1.Time) *v1.Pod {
	rs := a.name + "-" + a.hash
	labels := map[string]string{"app": a.name, labelTemplate: a.hash}
	requests := v1.ResourceList{
		v1.ResourceCPU:    *resource.NewMilliQuantity(a.cpu, resource.DecimalSI),
		v1.ResourceMemory: *resource.NewQuantity(a.mem, resource.BinarySI),
	}
	limits := v1.ResourceList{v1.ResourceMemory: *resource.NewQuantity(2*a.mem, resource.BinarySI)}
	if a.ephemeral > 0 {
		requests[v1.ResourceEphemeralStorage] = *resource.NewQuantity(a.ephemeral, resource.BinarySI)
	}
	if a.gpu > 0 {
		q := *resource.NewQuantity(a.gpu, resource.DecimalSI)
		requests[GPUResource], limits[GPUResource] = q, q.DeepCopy()
	}
	main := v1.Container{
		Name: "main", Image: a.image, ImagePullPolicy: v1.PullIfNotPresent,
		Resources: v1.ResourceRequirements{Requests: requests, Limits: limits},
	}
	if a.hostPort != 0 {
		main.Ports = []v1.ContainerPort{{Name: "metrics", ContainerPort: 8080, HostPort: a.hostPort, Protocol: v1.ProtocolTCP}}
	}
	p := &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name: names.next(rs + "-"), Namespace: a.ns, CreationTimestamp: created, Labels: labels,
			OwnerReferences: []metav1.OwnerReference{{
				APIVersion: "apps/v1", Kind: "ReplicaSet", Name: rs, UID: types.UID("rs-" + a.ns + "-" + a.name),
				Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true),
			}},
		},
		Spec: v1.PodSpec{
			SchedulerName: v1.DefaultSchedulerName,
			Containers:    []v1.Container{main},
			RestartPolicy: v1.RestartPolicyAlways,
			Priority:      ptr.To(a.priority),
			Tolerations: []v1.Toleration{
				{Key: v1.TaintNodeNotReady, Operator: v1.TolerationOpExists, Effect: v1.TaintEffectNoExecute, TolerationSeconds: ptr.To[int64](300)},
				{Key: v1.TaintNodeUnreachable, Operator: v1.TolerationOpExists, Effect: v1.TaintEffectNoExecute, TolerationSeconds: ptr.To[int64](300)},
			},
		},
		Status: v1.PodStatus{Phase: v1.PodPending},
	}
	switch a.priority {
	case 100000:
		p.Spec.PriorityClassName = "critical"
	case 1000:
		p.Spec.PriorityClassName = "high"
	}
	if a.initCPU > 0 {
		p.Spec.InitContainers = append(p.Spec.InitContainers, v1.Container{
			Name: "init", Image: a.image, ImagePullPolicy: v1.PullIfNotPresent,
			Resources: v1.ResourceRequirements{Requests: v1.ResourceList{
				v1.ResourceCPU: *resource.NewMilliQuantity(a.initCPU, resource.DecimalSI), v1.ResourceMemory: resource.MustParse("256Mi"),
			}},
		})
	}
	if a.sidecar {
		p.Spec.InitContainers = append(p.Spec.InitContainers, v1.Container{
			Name: "proxy", Image: "registry.example.com/proxy:v1", ImagePullPolicy: v1.PullIfNotPresent,
			RestartPolicy: ptr.To(v1.ContainerRestartPolicyAlways),
			Resources: v1.ResourceRequirements{Requests: v1.ResourceList{
				v1.ResourceCPU: resource.MustParse("100m"), v1.ResourceMemory: resource.MustParse("128Mi"),
			}},
		})
	}
	if a.overhead {
		p.Spec.RuntimeClassName = ptr.To("sandboxed")
		p.Spec.Overhead = v1.ResourceList{v1.ResourceCPU: resource.MustParse("250m"), v1.ResourceMemory: resource.MustParse("160Mi")}
	}
	if a.tolerateGPU {
		p.Spec.Tolerations = append(p.Spec.Tolerations, v1.Toleration{Key: TaintGPU, Operator: v1.TolerationOpEqual, Value: "gpu", Effect: v1.TaintEffectNoSchedule})
		p.Spec.NodeSelector = map[string]string{LabelGPU: "true"}
	}
	if a.tolerateSpot {
		p.Spec.Tolerations = append(p.Spec.Tolerations, v1.Toleration{Key: TaintSpot, Operator: v1.TolerationOpExists})
	}
	if a.multiArch {
		p.Spec.Tolerations = append(p.Spec.Tolerations, v1.Toleration{Key: v1.LabelArchStable, Operator: v1.TolerationOpEqual, Value: "arm64", Effect: v1.TaintEffectNoSchedule})
	}
	if a.infra {
		p.Spec.Tolerations = append(p.Spec.Tolerations, v1.Toleration{Key: TaintGPU, Operator: v1.TolerationOpEqual, Value: "infra", Effect: v1.TaintEffectNoSchedule})
		p.Spec.NodeSelector = map[string]string{LabelInfra: ""}
	}
	if a.ssd {
		if p.Spec.NodeSelector == nil {
			p.Spec.NodeSelector = map[string]string{}
		}
		p.Spec.NodeSelector[LabelDisk] = "ssd"
	}
	a.affinity(p)
	a.spread(p)
	return p
}

func (a *app) affinity(p *v1.Pod) {
	aff := &v1.Affinity{}
	if len(a.pools) > 0 || a.preferPool != "" {
		na := &v1.NodeAffinity{}
		if len(a.pools) > 0 {
			na.RequiredDuringSchedulingIgnoredDuringExecution = &v1.NodeSelector{NodeSelectorTerms: []v1.NodeSelectorTerm{{
				MatchExpressions: []v1.NodeSelectorRequirement{{Key: LabelPool, Operator: v1.NodeSelectorOpIn, Values: a.pools}},
			}}}
		}
		if a.preferPool != "" {
			na.PreferredDuringSchedulingIgnoredDuringExecution = []v1.PreferredSchedulingTerm{{
				Weight:     a.preferWeight,
				Preference: v1.NodeSelectorTerm{MatchExpressions: []v1.NodeSelectorRequirement{{Key: LabelPool, Operator: v1.NodeSelectorOpIn, Values: []string{a.preferPool}}}},
			}}
		}
		aff.NodeAffinity = na
	}
	self := &metav1.LabelSelector{MatchLabels: map[string]string{"app": a.name}}
	if a.antiHost {
		aff.PodAntiAffinity = &v1.PodAntiAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []v1.PodAffinityTerm{
			{LabelSelector: self, TopologyKey: v1.LabelHostname},
		}}
	}
	if a.preferAntiHost {
		aff.PodAntiAffinity = &v1.PodAntiAffinity{PreferredDuringSchedulingIgnoredDuringExecution: []v1.WeightedPodAffinityTerm{
			{Weight: 100, PodAffinityTerm: v1.PodAffinityTerm{LabelSelector: self, TopologyKey: v1.LabelHostname}},
		}}
	}
	if t := a.affinityTo; t != nil {
		aff.PodAffinity = &v1.PodAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []v1.PodAffinityTerm{{
			LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": t.name}},
			TopologyKey:   v1.LabelTopologyZone, Namespaces: []string{t.ns},
		}}}
	}
	if t := a.preferNear; t != nil {
		aff.PodAffinity = &v1.PodAffinity{PreferredDuringSchedulingIgnoredDuringExecution: []v1.WeightedPodAffinityTerm{{
			Weight: 50,
			PodAffinityTerm: v1.PodAffinityTerm{
				LabelSelector: &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
					{Key: "app", Operator: metav1.LabelSelectorOpIn, Values: []string{t.name}},
				}},
				TopologyKey: v1.LabelHostname, Namespaces: []string{t.ns, a.ns},
			},
		}}}
	}
	if aff.NodeAffinity != nil || aff.PodAffinity != nil || aff.PodAntiAffinity != nil {
		p.Spec.Affinity = aff
	}
}

func (a *app) spread(p *v1.Pod) {
	sel := &metav1.LabelSelector{MatchLabels: map[string]string{"app": a.name}}
	if a.spreadZone != "" {
		c := v1.TopologySpreadConstraint{MaxSkew: 1, TopologyKey: v1.LabelTopologyZone, WhenUnsatisfiable: a.spreadZone, LabelSelector: sel}
		if a.matchLabelKeys {
			c.MatchLabelKeys = []string{labelTemplate}
		}
		p.Spec.TopologySpreadConstraints = append(p.Spec.TopologySpreadConstraints, c)
	}
	if a.spreadHost {
		p.Spec.TopologySpreadConstraints = append(p.Spec.TopologySpreadConstraints, v1.TopologySpreadConstraint{
			MaxSkew: 2, TopologyKey: v1.LabelHostname, WhenUnsatisfiable: v1.ScheduleAnyway, LabelSelector: sel,
		})
	}
}
