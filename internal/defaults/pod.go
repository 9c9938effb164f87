package defaults

import (
	"strings"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	resourcehelper "k8s.io/component-helpers/resource"
)

// Pod applies to a pod what the API server does on create, for the
// fields a scheduling decision reads:
//   - SetDefaults_Pod: a container's (or init container's, sidecars
//     included) requests default to its limits, resource by resource; a
//     hostNetwork pod's container ports get hostPort = containerPort;
//   - SetDefaults_PodSpec: restartPolicy Always, schedulerName
//     default-scheduler;
//   - the declarative default of ports' protocol, TCP;
//   - SetDefaults_ResourceList: containers' requests and limits, overhead
//     and pod-level resources rounded up to milli scale;
//   - the create strategy (PrepareForCreate): pod-level requests from the
//     containers' (DefaultPodLevelResources, PodLevelResourcesFixDefaulting
//     being on in v1.37) and the values of matchLabelKeys and
//     mismatchLabelKeys of pod (anti-)affinity terms merged into their
//     labelSelector (MatchLabelKeysInPodAffinity, GA), which
//     kube-scheduler reads instead of the keys;
//   - the DefaultTolerationSeconds admission: tolerations of the
//     not-ready and unreachable NoExecute taints for 300s.
//
// spec.priority from priorityClassName (the Priority admission) is
// snapshot.ResolvePriority's, which needs the PriorityClasses.
func Pod(p *v1.Pod) {
	spec := &p.Spec
	containers(spec.Containers, spec.HostNetwork)
	containers(spec.InitContainers, spec.HostNetwork)
	for i := range spec.EphemeralContainers {
		ports(spec.EphemeralContainers[i].Ports, false)
	}
	if spec.RestartPolicy == "" {
		spec.RestartPolicy = v1.RestartPolicyAlways
	}
	if spec.SchedulerName == "" {
		spec.SchedulerName = v1.DefaultSchedulerName
	}
	ResourceList(spec.Overhead)
	if r := spec.Resources; r != nil {
		ResourceList(r.Limits)
		ResourceList(r.Requests)
		podLevelResources(p)
	}
	podAffinityLabelKeys(p)
	defaultTolerations(p)
}

// defaultTolerationSeconds is the DefaultTolerationSeconds admission
// plugin's default (--default-not-ready-toleration-seconds and
// --default-unreachable-toleration-seconds).
const defaultTolerationSeconds = 300

// defaultTolerations is the DefaultTolerationSeconds admission plugin
// (on by default): a pod that does not tolerate the not-ready or the
// unreachable NoExecute taint gets a toleration of it for 300 seconds, so
// that such a taint does not keep it off a node.
func defaultTolerations(p *v1.Pod) {
	notReady, unreachable := false, false
	for _, t := range p.Spec.Tolerations {
		noExecute := t.Effect == v1.TaintEffectNoExecute || t.Effect == ""
		if noExecute && (t.Key == v1.TaintNodeNotReady || t.Key == "") {
			notReady = true
		}
		if noExecute && (t.Key == v1.TaintNodeUnreachable || t.Key == "") {
			unreachable = true
		}
	}
	add := func(key string) {
		s := int64(defaultTolerationSeconds)
		p.Spec.Tolerations = append(p.Spec.Tolerations, v1.Toleration{Key: key, Operator: v1.TolerationOpExists, Effect: v1.TaintEffectNoExecute, TolerationSeconds: &s})
	}
	if !notReady {
		add(v1.TaintNodeNotReady)
	}
	if !unreachable {
		add(v1.TaintNodeUnreachable)
	}
}

// containers applies the container-level defaults of Pod.
func containers(cs []v1.Container, hostNetwork bool) {
	for i := range cs {
		c := &cs[i]
		r := &c.Resources
		if r.Limits != nil {
			for k, q := range r.Limits {
				if _, ok := r.Requests[k]; ok {
					continue
				}
				if r.Requests == nil {
					r.Requests = make(v1.ResourceList, len(r.Limits))
				}
				r.Requests[k] = q.DeepCopy()
			}
		}
		ResourceList(r.Limits)
		ResourceList(r.Requests)
		ports(c.Ports, hostNetwork)
	}
}

func ports(ps []v1.ContainerPort, hostNetwork bool) {
	for j := range ps {
		pt := &ps[j]
		if pt.Protocol == "" {
			pt.Protocol = v1.ProtocolTCP
		}
		if hostNetwork && pt.HostPort == 0 {
			pt.HostPort = pt.ContainerPort
		}
	}
}

// podLevelResources is DefaultPodLevelResources' defaulting of pod-level
// hugepage limits and requests (pkg/api/pod/util.go); pod-level limits of
// cpu and memory, which no decision reads, are left as written.
func podLevelResources(p *v1.Pod) {
	r := p.Spec.Resources
	if len(r.Requests) == 0 && len(r.Limits) == 0 || !podLevelMissing(p) {
		return
	}
	ctrs := &v1.Pod{Spec: v1.PodSpec{Containers: p.Spec.Containers, InitContainers: p.Spec.InitContainers}}
	lims := r.Limits
	for k, q := range resourcehelper.AggregateContainerLimits(ctrs, resourcehelper.PodResourcesOptions{}) {
		if !resourcehelper.IsSupportedPodLevelResource(k) || !isHugePages(k) {
			continue
		}
		if _, ok := r.Requests[k]; ok {
			continue
		}
		if _, ok := lims[k]; !ok {
			if lims == nil {
				lims = v1.ResourceList{}
			}
			lims[k] = q
		}
	}
	if len(lims) > 0 {
		r.Limits = lims
	}
	reqs := r.Requests
	set := func(k v1.ResourceName, q v1.ResourceList) {
		if reqs == nil {
			reqs = v1.ResourceList{}
		}
		reqs[k] = q[k].DeepCopy()
	}
	aggr := resourcehelper.AggregateContainerRequests(ctrs, resourcehelper.PodResourcesOptions{})
	for k := range aggr {
		if _, ok := reqs[k]; !ok && resourcehelper.IsSupportedPodLevelResource(k) && overcommitAllowed(k) {
			set(k, aggr)
		}
	}
	for k := range r.Limits {
		if _, ok := reqs[k]; !ok && resourcehelper.IsSupportedPodLevelResource(k) {
			set(k, r.Limits)
		}
	}
	if len(reqs) > 0 {
		r.Requests = reqs
	}
}

// podLevelMissing reports whether podLevelResources would add anything
// (without aggregating, which allocates): a pod-level limit or a
// container's cpu, memory or hugepages the pod-level requests lack, or a
// container's hugepages limit the pod-level limits lack.
func podLevelMissing(p *v1.Pod) bool {
	r := p.Spec.Resources
	missing := func(k v1.ResourceName) bool {
		_, ok := r.Requests[k]
		return !ok && resourcehelper.IsSupportedPodLevelResource(k)
	}
	for k := range r.Limits {
		if missing(k) {
			return true
		}
	}
	for _, cs := range [][]v1.Container{p.Spec.Containers, p.Spec.InitContainers} {
		for i := range cs {
			for k := range cs[i].Resources.Requests {
				if missing(k) && overcommitAllowed(k) {
					return true
				}
			}
			for k := range cs[i].Resources.Limits {
				if _, ok := r.Limits[k]; !ok && missing(k) && isHugePages(k) {
					return true
				}
			}
		}
	}
	return false
}

// isHugePages is kube's helper.IsHugePageResourceName.
func isHugePages(k v1.ResourceName) bool {
	return strings.HasPrefix(string(k), v1.ResourceHugePagesPrefix)
}

// overcommitAllowed is kube's helper.IsOvercommitAllowed: a native
// resource (no domain, or a kubernetes.io one) other than hugepages.
func overcommitAllowed(k v1.ResourceName) bool {
	native := !strings.Contains(string(k), "/") || strings.Contains(string(k), v1.ResourceDefaultNamespacePrefix)
	return native && !isHugePages(k)
}

// podAffinityLabelKeys is the create strategy's mutatePodAffinity: each
// matchLabelKeys key the pod has a label for becomes "key In (value)" in
// the term's labelSelector, each mismatchLabelKeys key "key NotIn
// (value)". A requirement the selector has already is not added again,
// so a pod from a cluster, merged at its creation, is left unchanged (the
// selector matches the same pods either way).
func podAffinityLabelKeys(p *v1.Pod) {
	a := p.Spec.Affinity
	if a == nil {
		return
	}
	terms := func(req []v1.PodAffinityTerm, pref []v1.WeightedPodAffinityTerm) {
		for i := range pref {
			mergeLabelKeys(&pref[i].PodAffinityTerm, p.Labels)
		}
		for i := range req {
			mergeLabelKeys(&req[i], p.Labels)
		}
	}
	if pa := a.PodAffinity; pa != nil {
		terms(pa.RequiredDuringSchedulingIgnoredDuringExecution, pa.PreferredDuringSchedulingIgnoredDuringExecution)
	}
	if pa := a.PodAntiAffinity; pa != nil {
		terms(pa.RequiredDuringSchedulingIgnoredDuringExecution, pa.PreferredDuringSchedulingIgnoredDuringExecution)
	}
}

func mergeLabelKeys(t *v1.PodAffinityTerm, labels map[string]string) {
	if len(t.MatchLabelKeys) == 0 && len(t.MismatchLabelKeys) == 0 || t.LabelSelector == nil {
		// A nil selector matches nothing, and stays so.
		return
	}
	add := func(keys []string, op metav1.LabelSelectorOperator) {
		for _, k := range keys {
			v, ok := labels[k]
			if !ok || hasRequirement(t.LabelSelector.MatchExpressions, k, op, v) {
				continue
			}
			t.LabelSelector.MatchExpressions = append(t.LabelSelector.MatchExpressions,
				metav1.LabelSelectorRequirement{Key: k, Operator: op, Values: []string{v}})
		}
	}
	add(t.MatchLabelKeys, metav1.LabelSelectorOpIn)
	add(t.MismatchLabelKeys, metav1.LabelSelectorOpNotIn)
}

func hasRequirement(rs []metav1.LabelSelectorRequirement, k string, op metav1.LabelSelectorOperator, v string) bool {
	for _, r := range rs {
		if r.Key == k && r.Operator == op && len(r.Values) == 1 && r.Values[0] == v {
			return true
		}
	}
	return false
}
