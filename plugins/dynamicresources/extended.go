package dynamicresources

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"

	v1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	resourcehelper "k8s.io/component-helpers/resource"
	"k8s.io/utils/ptr"

	"github.com/kubectl-sched/kubectl-sched/schedcore"
)

// DRA-backed extended resources (DRAExtendedResource, GA in v1.37): a pod
// requesting an extended resource that no device plugin provides on a node
// but a DeviceClass backs (its extendedResourceName, or the implicit
// "deviceclass.resource.kubernetes.io/<class>") gets a special claim with
// one request per container, created in PreBind, as kube does.

// specialClaimInMemName is the in-memory name of the special claim until
// PreBind creates it (not a valid name on purpose).
const specialClaimInMemName = "<extended-resources>"

func isSpecialClaimName(name string) bool { return name == specialClaimInMemName }

// isDRAExtendedResourceName is kube's IsDRAExtendedResourceName.
func isDRAExtendedResourceName(name v1.ResourceName) bool {
	return schedcore.IsExtendedResourceName(name) || strings.HasPrefix(string(name), resourceapi.ResourceDeviceClassPrefix)
}

// findExtendedResourceClaim returns the special claim an earlier cycle
// created for the pod, nil if none: the first of the claims (by
// namespace/name, as Claims lists them) annotated as one and
// controlled by the pod. PreFilter hands it the claims the pod owns.
func findExtendedResourceClaim(pod *v1.Pod, claims []*resourceapi.ResourceClaim) *resourceapi.ResourceClaim {
	for _, c := range claims {
		if c.Annotations[resourceapi.ExtendedResourceClaimAnnotation] != "true" {
			continue
		}
		for _, or := range c.OwnerReferences {
			if or.Name == pod.Name && ptr.Deref(or.Controller, false) && or.UID == pod.UID {
				return c
			}
		}
	}
	return nil
}

// preFilterExtendedResources returns the special claim for the pod's
// DRA-backed extended resources (an earlier cycle's, or a new in-memory
// one without requests), nil when it has none.
func (pl *DynamicResources) preFilterExtendedResources(pod *v1.Pod, s *stateData) (*resourceapi.ResourceClaim, *schedcore.Status) {
	if !pl.features.DRAExtendedResource {
		return nil, nil
	}
	reqs := resourcehelper.PodRequests(pod, resourcehelper.PodResourcesOptions{})
	found := false
	for name, q := range reqs {
		if !q.IsZero() && isDRAExtendedResourceName(name) && pl.dra.ExtendedResourceClass(name) != nil {
			found = true
			break
		}
	}
	if !found {
		return nil, nil
	}
	r := &schedcore.Resource{}
	r.Add(reqs)
	s.podScalarResources = r.ScalarResources
	if c := findExtendedResourceClaim(pod, pl.dra.ClaimsOwnedBy(pod.UID)); c != nil {
		return c, nil
	}
	return &resourceapi.ResourceClaim{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: pod.Namespace,
			Name:      specialClaimInMemName,
			// A temporary UID for the in-flight bookkeeping, stable for the
			// pod so that runs are reproducible.
			UID:          types.UID("extended-resources-" + string(pod.UID)),
			GenerateName: pod.Name + "-extended-resources-",
			OwnerReferences: []metav1.OwnerReference{{
				APIVersion: "v1", Kind: "Pod", Name: pod.Name, UID: pod.UID, Controller: ptr.To(true),
			}},
			Annotations: map[string]string{resourceapi.ExtendedResourceClaimAnnotation: "true"},
		},
	}, nil
}

// filterExtendedResources returns the node's variant of the special claim
// (the requests the node's devices must satisfy) and the container
// mappings, nil when the node's device plugins provide everything.
func (pl *DynamicResources) filterExtendedResources(state *stateData, pod *v1.Pod, nodeInfo *schedcore.NodeInfo) (*resourceapi.ResourceClaim, []v1.ContainerExtendedResourceRequest, *schedcore.Status) {
	extended := state.claims.extendedResourceClaim()
	if extended == nil {
		return nil, nil, nil
	}
	if extended.Spec.Devices.Requests != nil {
		return nil, nil, statusUnschedulable(ErrReasonExtendedStale)
	}
	names, dra := state.extendedNames()
	// backed marks the names (in order) the node's device plugins do not
	// provide and a DeviceClass does: the node's variant of the claim
	// depends on these alone (and the classes).
	var buf [16]byte
	backed := buf[:0]
	for i, name := range names {
		q := state.podScalarResources[name]
		mark := byte('0')
		if dra[i] && q != 0 {
			allocatable, ok := nodeInfo.Allocatable.ScalarResources[name]
			isBacked := pl.dra.ExtendedResourceClass(name) != nil
			if isBacked && allocatable == 0 {
				mark = '1'
			} else if !ok {
				return nil, nil, statusCannotFit
			}
		}
		backed = append(backed, mark)
	}
	if state.claims.noUserClaim() && !slices.Contains(backed, '1') {
		return nil, nil, nil
	}
	if extended.Status.Allocation != nil {
		return nil, nil, nil
	}
	v := state.extendedVariant(backed, pl.dra.ObjectsRevision(), func() *extendedVariant {
		resources := map[v1.ResourceName]int64{}
		for i, name := range names {
			if backed[i] == '1' {
				resources[name] = state.podScalarResources[name]
			}
		}
		nodeClaim := extended.DeepCopy()
		reqs, mappings := createRequestsAndMappings(pod, resources, pl.dra)
		nodeClaim.Spec.Devices.Requests = reqs
		return &extendedVariant{claim: nodeClaim, mappings: mappings}
	})
	return v.claim, v.mappings, nil
}

// extendedVariant is a node's variant of the special claim, shared in the
// cycle by the nodes with the same backed resources and objects revision (read only:
// Reserve and PreBind copy it), with the claims' specs the memo keys it
// by, written out once.
type extendedVariant struct {
	rev      int64
	claim    *resourceapi.ResourceClaim
	mappings []v1.ContainerExtendedResourceRequest
	specOnce sync.Once
	spec     string
	specErr  error
	// claims are the claims to allocate with this variant
	// (claimsToAllocate).
	claimsOnce sync.Once
	claims     []*resourceapi.ResourceClaim
}

// extendedNames are the pod's scalar resources, sorted (kube walks a map;
// an unfit resource ends the loop either way), and whether each is a
// DRA extended resource name (a name check, once per cycle).
func (d *stateData) extendedNames() ([]v1.ResourceName, []bool) {
	d.extOnce.Do(func() {
		for name := range d.podScalarResources {
			d.extNames = append(d.extNames, name)
		}
		sort.Slice(d.extNames, func(i, j int) bool { return d.extNames[i] < d.extNames[j] })
		for _, name := range d.extNames {
			d.extDRA = append(d.extDRA, isDRAExtendedResourceName(name))
		}
	})
	return d.extNames, d.extDRA
}

// extendedVariant returns the cycle's variant for the backed marks at the
// objects revision rev, made by build the first time.
func (d *stateData) extendedVariant(backed []byte, rev int64, build func() *extendedVariant) *extendedVariant {
	d.extMu.Lock()
	defer d.extMu.Unlock()
	if v := d.extVariants[string(backed)]; v != nil && v.rev == rev {
		return v
	}
	v := build()
	v.rev = rev
	if d.extVariants == nil {
		d.extVariants = map[string]*extendedVariant{}
	}
	d.extVariants[string(backed)] = v
	return v
}

// variantOf returns the cycle's variant whose claim c is, nil if none.
func (d *stateData) variantOf(c *resourceapi.ResourceClaim) *extendedVariant {
	d.extMu.Lock()
	defer d.extMu.Unlock()
	for _, v := range d.extVariants {
		if v.claim == c {
			return v
		}
	}
	return nil
}

func partitionContainerIndices(containers []v1.Container, numInit int) (long, short []int) {
	for i, c := range containers {
		isInit := i < numInit
		sidecar := c.RestartPolicy != nil && *c.RestartPolicy == v1.ContainerRestartPolicyAlways
		if isInit && !sidecar {
			short = append(short, i)
			continue
		}
		long = append(long, i)
	}
	return long, short
}

// createResourceRequestAndMappings is kube's function of the same name: the
// container's request for the resource, reusing later long-lived
// containers' requests first (for init containers).
func createResourceRequestAndMappings(index int, c *v1.Container, name v1.ResourceName, class string, reusable []*resourceapi.DeviceRequest) (*resourceapi.DeviceRequest, []v1.ContainerExtendedResourceRequest) {
	var mappings []v1.ContainerExtendedResourceRequest
	q, ok := c.Resources.Requests[name]
	if !ok {
		return nil, nil
	}
	n, ok := q.AsInt64()
	if !ok || n == 0 {
		return nil, nil
	}
	sum := int64(0)
	for _, r := range reusable {
		if r == nil {
			continue
		}
		sum += r.Exactly.Count
		mappings = append(mappings, v1.ContainerExtendedResourceRequest{ContainerName: c.Name, ResourceName: name.String(), RequestName: r.Name})
		if sum >= n {
			return nil, mappings
		}
	}
	keys := make([]string, 0, len(c.Resources.Requests))
	for k := range c.Resources.Requests {
		keys = append(keys, k.String())
	}
	slices.Sort(keys)
	ridx := slices.Index(keys, name.String())
	reqName := fmt.Sprintf("container-%d-request-%d", index, ridx)
	req := resourceapi.DeviceRequest{Name: reqName, Exactly: &resourceapi.ExactDeviceRequest{
		DeviceClassName: class, AllocationMode: resourceapi.DeviceAllocationModeExactCount, Count: n - sum,
	}}
	mappings = append(mappings, v1.ContainerExtendedResourceRequest{ContainerName: c.Name, ResourceName: name.String(), RequestName: reqName})
	return &req, mappings
}

// createRequestsAndMappings is kube's function of the same name: one
// request per container and resource, init containers sharing the largest.
func createRequestsAndMappings(pod *v1.Pod, resources map[v1.ResourceName]int64, dra *schedcore.DRAManager) ([]resourceapi.DeviceRequest, []v1.ContainerExtendedResourceRequest) {
	containers := slices.Clone(pod.Spec.InitContainers)
	containers = append(containers, pod.Spec.Containers...)
	long, short := partitionContainerIndices(containers, len(pod.Spec.InitContainers))
	var requests []resourceapi.DeviceRequest
	var mappings []v1.ContainerExtendedResourceRequest
	names := make([]v1.ResourceName, 0, len(resources))
	for n := range resources {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, name := range names {
		class := dra.ExtendedResourceClass(name)
		if class == nil {
			continue
		}
		var shortMappings, longMappings []v1.ContainerExtendedResourceRequest
		longRequests := make([]*resourceapi.DeviceRequest, len(containers))
		for _, i := range long {
			r, m := createResourceRequestAndMappings(i, &containers[i], name, class.Name, nil)
			longRequests[i] = r
			longMappings = append(longMappings, m...)
		}
		var maxShort *resourceapi.DeviceRequest
		shortNames := sets.New[string]()
		for _, i := range short {
			r, m := createResourceRequestAndMappings(i, &containers[i], name, class.Name, longRequests[i:])
			if r != nil {
				shortNames.Insert(r.Name)
				if maxShort == nil || maxShort.Exactly.Count < r.Exactly.Count {
					maxShort = r
				}
			}
			shortMappings = append(shortMappings, m...)
		}
		if maxShort != nil && len(shortNames) > 1 {
			shortNames.Delete(maxShort.Name)
			for i := range shortMappings {
				if shortNames.Has(shortMappings[i].RequestName) {
					shortMappings[i].RequestName = maxShort.Name
				}
			}
		}
		if maxShort != nil {
			requests = append(requests, *maxShort)
		}
		for _, r := range longRequests {
			if r != nil {
				requests = append(requests, *r)
			}
		}
		mappings = append(mappings, longMappings...)
		mappings = append(mappings, shortMappings...)
	}
	sort.Slice(requests, func(i, j int) bool { return requests[i].Name < requests[j].Name })
	return requests, mappings
}

// deleteClaim removes the builtin finalizer (retrying on conflicts), then
// deletes the claim, as kube's deleteClaim does.
func (pl *DynamicResources) deleteClaim(ctx context.Context, claim *resourceapi.ResourceClaim) error {
	w := pl.handle.ClaimWriter()
	refresh := false
	err := retryOnConflict(ctx, func() error {
		if refresh {
			c, err := w.GetClaim(ctx, claim.Namespace, claim.Name)
			if err != nil {
				return fmt.Errorf("get resourceclaim %s/%s: %w", claim.Namespace, claim.Name, err)
			}
			claim = c.DeepCopy()
		}
		refresh = true
		if i := slices.Index(claim.Finalizers, resourceapi.Finalizer); i >= 0 {
			claim.Finalizers = slices.Delete(claim.Finalizers, i, i+1)
		}
		if _, err := w.UpdateClaim(ctx, claim); err != nil {
			return fmt.Errorf("update resourceclaim %s/%s: %w", claim.Namespace, claim.Name, err)
		}
		return nil
	})
	if err != nil {
		return err
	}
	if err := w.DeleteClaim(ctx, claim); err != nil && !isNotFound(err) {
		return err
	}
	return nil
}
