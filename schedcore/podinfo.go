package schedcore

import (
	"fmt"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/apimachinery/pkg/util/sets"
)

// PodInfo wraps a pod with what is computed once per pod: parsed inter-pod
// affinity terms and, for pods on nodes, the resources they occupy.
type PodInfo struct {
	Pod                        *v1.Pod
	RequiredAffinityTerms      []AffinityTerm
	RequiredAntiAffinityTerms  []AffinityTerm
	PreferredAffinityTerms     []WeightedAffinityTerm
	PreferredAntiAffinityTerms []WeightedAffinityTerm

	// ParseError is kube's: per term list that failed to parse (required
	// affinity, required anti-affinity, preferred affinity, preferred
	// anti-affinity), its first failing selector, aggregated.
	// kube-scheduler ignores such errors for assigned pods and fails the
	// scheduling cycle of a pod being scheduled.
	ParseError error

	res      PodResource
	resValid bool
}

// NewPodInfo parses the pod's affinity terms. Selector errors are kept in
// ParseError rather than returned, since the API server does not fully
// validate them.
func NewPodInfo(pod *v1.Pod) *PodInfo {
	pi := &PodInfo{Pod: pod}
	a := pod.Spec.Affinity
	if a == nil {
		return pi
	}
	var errs []error
	var err error
	var pref, prefAnti []v1.WeightedPodAffinityTerm
	if pa := a.PodAffinity; pa != nil {
		if pi.RequiredAffinityTerms, err = AffinityTerms(pod, pa.RequiredDuringSchedulingIgnoredDuringExecution); err != nil {
			errs = append(errs, fmt.Errorf("requiredAffinityTerms: %w", err))
		}
		pref = pa.PreferredDuringSchedulingIgnoredDuringExecution
	}
	if paa := a.PodAntiAffinity; paa != nil {
		if pi.RequiredAntiAffinityTerms, err = AffinityTerms(pod, paa.RequiredDuringSchedulingIgnoredDuringExecution); err != nil {
			errs = append(errs, fmt.Errorf("requiredAntiAffinityTerms: %w", err))
		}
		prefAnti = paa.PreferredDuringSchedulingIgnoredDuringExecution
	}
	if pi.PreferredAffinityTerms, err = weightedAffinityTerms(pod, pref); err != nil {
		errs = append(errs, fmt.Errorf("preferredAffinityTerms: %w", err))
	}
	if pi.PreferredAntiAffinityTerms, err = weightedAffinityTerms(pod, prefAnti); err != nil {
		errs = append(errs, fmt.Errorf("preferredAntiAffinityTerms: %w", err))
	}
	pi.ParseError = utilerrors.NewAggregate(errs)
	return pi
}

// forPod returns a PodInfo for pod, a version of pi's pod (the same object
// at another node, or with another status) that the caller hands to the
// cache. When pod has pi's namespace and the very same affinity object,
// the terms parsed from them are shared rather than parsed again: parsed
// terms are never changed (a plugin that resolves namespace selectors
// parses its own), and a pod object is never changed in place, so the same
// affinity pointer means the same terms. Anything else is parsed anew. The
// resource is computed anew either way (status resources may differ).
func (pi *PodInfo) forPod(pod *v1.Pod) *PodInfo {
	if pi == nil || pi.Pod == nil || pod.Namespace != pi.Pod.Namespace || pod.Spec.Affinity != pi.Pod.Spec.Affinity {
		return NewPodInfo(pod)
	}
	return &PodInfo{
		Pod:                        pod,
		RequiredAffinityTerms:      pi.RequiredAffinityTerms,
		RequiredAntiAffinityTerms:  pi.RequiredAntiAffinityTerms,
		PreferredAffinityTerms:     pi.PreferredAffinityTerms,
		PreferredAntiAffinityTerms: pi.PreferredAntiAffinityTerms,
		ParseError:                 pi.ParseError,
	}
}

// Resource returns what the pod occupies on a node (status resources
// included), computed once and cached.
func (pi *PodInfo) Resource(f Features) PodResource {
	if !pi.resValid {
		pi.res = ComputePodResource(pi.Pod, f)
		pi.resValid = true
	}
	return pi.res
}

// SetResource overrides the cached resource (used when cloning).
func (pi *PodInfo) SetResource(r PodResource) { pi.res, pi.resValid = r, true }

// Key is the pod's cache key: its UID, or namespace/name when the UID is empty
// (snapshots written by hand often have none).
func (pi *PodInfo) Key() string { return PodKey(pi.Pod) }

// PodKey returns the cache key of a pod.
func PodKey(p *v1.Pod) string {
	if p.UID != "" {
		return string(p.UID)
	}
	return p.Namespace + "/" + p.Name
}

// PodName returns "namespace/name".
func PodName(p *v1.Pod) string { return p.Namespace + "/" + p.Name }

// HasAffinity reports whether the pod has inter-pod affinity or anti-affinity.
func HasAffinity(p *v1.Pod) bool {
	a := p.Spec.Affinity
	return a != nil && (a.PodAffinity != nil || a.PodAntiAffinity != nil)
}

// HasRequiredAntiAffinity reports whether the pod has required anti-affinity.
func HasRequiredAntiAffinity(p *v1.Pod) bool {
	a := p.Spec.Affinity
	return a != nil && a.PodAntiAffinity != nil && len(a.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution) != 0
}

// AffinityTerm is a parsed v1.PodAffinityTerm.
type AffinityTerm struct {
	Namespaces        sets.Set[string]
	Selector          labels.Selector
	TopologyKey       string
	NamespaceSelector labels.Selector
}

// Matches reports whether pod (with its namespace's labels) matches the term.
func (at *AffinityTerm) Matches(pod *v1.Pod, nsLabels labels.Set) bool {
	if at.Namespaces.Has(pod.Namespace) || at.NamespaceSelector.Matches(nsLabels) {
		return at.Selector.Matches(labels.Set(pod.Labels))
	}
	return false
}

// WeightedAffinityTerm is a parsed v1.WeightedPodAffinityTerm.
type WeightedAffinityTerm struct {
	AffinityTerm
	Weight int32
}

// AffinityTerms parses a pod's affinity terms (kube's GetAffinityTerms):
// nil for nil, else the terms or the first selector error.
func AffinityTerms(pod *v1.Pod, in []v1.PodAffinityTerm) ([]AffinityTerm, error) {
	if in == nil {
		return nil, nil
	}
	out := make([]AffinityTerm, 0, len(in))
	for i := range in {
		t, err := newAffinityTerm(pod, &in[i])
		if err != nil {
			return nil, err
		}
		out = append(out, t)
	}
	return out, nil
}

func weightedAffinityTerms(pod *v1.Pod, in []v1.WeightedPodAffinityTerm) ([]WeightedAffinityTerm, error) {
	if in == nil {
		return nil, nil
	}
	out := make([]WeightedAffinityTerm, 0, len(in))
	for i := range in {
		t, err := newAffinityTerm(pod, &in[i].PodAffinityTerm)
		if err != nil {
			return nil, err
		}
		out = append(out, WeightedAffinityTerm{AffinityTerm: t, Weight: in[i].Weight})
	}
	return out, nil
}

func newAffinityTerm(pod *v1.Pod, term *v1.PodAffinityTerm) (AffinityTerm, error) {
	sel, err := LabelSelectorAsSelector(term.LabelSelector)
	if err != nil {
		return AffinityTerm{}, err
	}
	nsSel, err := LabelSelectorAsSelector(term.NamespaceSelector)
	if err != nil {
		return AffinityTerm{}, err
	}
	ns := sets.New[string]()
	if len(term.Namespaces) == 0 && term.NamespaceSelector == nil {
		ns.Insert(pod.Namespace)
	} else {
		ns.Insert(term.Namespaces...)
	}
	return AffinityTerm{Namespaces: ns, Selector: sel, TopologyKey: term.TopologyKey, NamespaceSelector: nsSel}, nil
}

// HostPorts returns the host ports a pod uses: those of its containers and
// of its restartable (sidecar) init containers.
func HostPorts(pod *v1.Pod) []v1.ContainerPort {
	var ports []v1.ContainerPort
	for i := range pod.Spec.InitContainers {
		c := &pod.Spec.InitContainers[i]
		if c.RestartPolicy == nil || *c.RestartPolicy != v1.ContainerRestartPolicyAlways {
			continue
		}
		for _, p := range c.Ports {
			if p.HostPort > 0 {
				ports = append(ports, p)
			}
		}
	}
	for i := range pod.Spec.Containers {
		for _, p := range pod.Spec.Containers[i].Ports {
			if p.HostPort > 0 {
				ports = append(ports, p)
			}
		}
	}
	return ports
}

// ForPod returns a PodInfo for pod, a version of pi's pod, sharing the
// parsed terms when it can (forPod).
func (pi *PodInfo) ForPod(pod *v1.Pod) *PodInfo { return pi.forPod(pod) }
