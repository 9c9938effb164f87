package dynamicresources

import (
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"slices"

	v1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/uuid"
	"k8s.io/dynamic-resource-allocation/resourceclaim"
)

// claimStore holds a pod's ResourceClaims (spec.resourceClaims order),
// optionally followed by the special claim of DRA-backed extended
// resources, as kube's claimStore does. The zero value is empty.
type claimStore struct {
	claims       []*resourceapi.ResourceClaim
	numUserOwned int
	// initialExtendedUID is the special claim's UID from PreFilter (a
	// temporary one until PreBind creates the claim).
	initialExtendedUID types.UID
}

func newClaimStore(claims []*resourceapi.ResourceClaim, extended *resourceapi.ResourceClaim) claimStore {
	cs := claimStore{claims: claims, numUserOwned: len(claims)}
	if extended != nil {
		cs.claims = append(cs.claims, extended)
		cs.initialExtendedUID = extended.UID
	}
	return cs
}

func (cs *claimStore) empty() bool { return len(cs.claims) == 0 }

func (cs *claimStore) len() int { return len(cs.claims) }

// all iterates over every claim, the special one last.
func (cs *claimStore) all() iter.Seq2[int, *resourceapi.ResourceClaim] {
	return func(yield func(int, *resourceapi.ResourceClaim) bool) {
		for i, c := range cs.claims {
			if !yield(i, c) {
				return
			}
		}
	}
}

// allUserClaims iterates over the claims of spec.resourceClaims.
func (cs *claimStore) allUserClaims() iter.Seq2[int, *resourceapi.ResourceClaim] {
	return func(yield func(int, *resourceapi.ResourceClaim) bool) {
		for i, c := range cs.claims[:cs.numUserOwned] {
			if !yield(i, c) {
				return
			}
		}
	}
}

// toAllocate iterates over the claims without an allocation, with their
// index in the store.
func (cs *claimStore) toAllocate() iter.Seq2[int, *resourceapi.ResourceClaim] {
	return func(yield func(int, *resourceapi.ResourceClaim) bool) {
		for i, c := range cs.claims {
			if c.Status.Allocation != nil {
				continue
			}
			if !yield(i, c) {
				return
			}
		}
	}
}

// extendedResourceClaim returns the special claim, nil if there is none.
func (cs *claimStore) extendedResourceClaim() *resourceapi.ResourceClaim {
	if cs.numUserOwned == len(cs.claims) {
		return nil
	}
	return cs.claims[cs.numUserOwned]
}

func (cs *claimStore) noUserClaim() bool { return cs.numUserOwned == 0 }

func (cs *claimStore) get(i int) *resourceapi.ResourceClaim { return cs.claims[i] }

func (cs *claimStore) set(i int, c *resourceapi.ResourceClaim) { cs.claims[i] = c }

// binding is the consumer a claim gets reserved for: the pod.
func binding(pod *v1.Pod) resourceapi.ResourceClaimConsumerReference {
	return resourceapi.ResourceClaimConsumerReference{APIGroup: v1.GroupName, Resource: "pods", Name: pod.Name, UID: pod.UID}
}

func (cs *claimStore) updateExtendedResourceClaim(c *resourceapi.ResourceClaim) error {
	if cs.numUserOwned == len(cs.claims) {
		return errors.New("no extended resource claim")
	}
	cs.claims[cs.numUserOwned] = c
	return nil
}

// foreachPodResourceClaim checks that each claim of the pod exists, is not
// being deleted and, for a template claim, is owned by the pod; cb sees
// each one found.
func (pl *DynamicResources) foreachPodResourceClaim(pod *v1.Pod, cb func(podClaimName string, claim *resourceapi.ResourceClaim)) error {
	for i := range pod.Spec.ResourceClaims {
		pc := &pod.Spec.ResourceClaims[i]
		name, mustCheckOwner, err := resourceclaim.Name(pod, pc)
		if err != nil {
			return err
		}
		if name == nil {
			continue
		}
		claim, ok := pl.dra.Claim(pod.Namespace, *name)
		if !ok {
			return fmt.Errorf("could not find ResourceClaim %q", pod.Namespace+"/"+*name)
		}
		if claim.DeletionTimestamp != nil {
			return fmt.Errorf("resourceclaim %q is being deleted", claim.Name)
		}
		if mustCheckOwner {
			if err := resourceclaim.IsForPod(pod, claim, false); err != nil {
				return err
			}
		}
		if cb != nil {
			cb(pc.Name, claim)
		}
	}
	return nil
}

func (pl *DynamicResources) podResourceClaims(pod *v1.Pod) ([]*resourceapi.ResourceClaim, error) {
	claims := make([]*resourceapi.ResourceClaim, 0, len(pod.Spec.ResourceClaims))
	err := pl.foreachPodResourceClaim(pod, func(_ string, c *resourceapi.ResourceClaim) { claims = append(claims, c) })
	return claims, err
}

// claimSpecs writes the claims' specs out, in order.
func claimSpecs(claims []*resourceapi.ResourceClaim) (string, error) {
	specs := make([]resourceapi.ResourceClaimSpec, len(claims))
	for i, c := range claims {
		specs[i] = c.Spec
	}
	b, err := json.Marshal(specs)
	return "claims:" + string(b), err
}

// copyResults deep-copies allocation results; share IDs (of consumable
// capacity) are drawn anew, as the allocator draws one per allocation.
func copyResults(in []resourceapi.AllocationResult) []resourceapi.AllocationResult {
	if in == nil {
		return nil
	}
	out := make([]resourceapi.AllocationResult, len(in))
	for i := range in {
		in[i].DeepCopyInto(&out[i])
		for j := range out[i].Devices.Results {
			if out[i].Devices.Results[j].ShareID != nil {
				id := types.UID(uuid.NewUUID())
				out[i].Devices.Results[j].ShareID = &id
			}
		}
	}
	return slices.Clip(out)
}

// userSpecs are the specs of the claims to allocate when they are the
// pod's own (no node-specific special claim), written out once.
func (d *stateData) userSpecs(claims []*resourceapi.ResourceClaim) (string, error) {
	d.specsOnce.Do(func() { d.specs, d.specsErr = claimSpecs(claims) })
	return d.specs, d.specsErr
}
