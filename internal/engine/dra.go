package engine

import (
	"context"
	"fmt"
	"hash/fnv"
	"maps"
	"slices"
	"strconv"
	"sync"

	v1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/kubectl-sched/kubectl-sched/internal/snapshot"
	"github.com/kubectl-sched/kubectl-sched/schedcore"
)

// FillDRA loads a cluster's DRA objects into the manager, after doing the
// resourceclaim controller's work (CreateTemplateClaims: the pods then
// refer to their template claims, so cl.Pods may be replaced by copies).
// Pods without a UID get SnapshotUID first: template claims are owned by
// their pod. A cluster without DRA objects is left alone.
func FillDRA(m *schedcore.DRAManager, cl *snapshot.Cluster) {
	if cl.DRA.Empty() {
		return
	}
	for _, p := range cl.Pods {
		if p.UID == "" {
			p.UID = SnapshotUID(p.Namespace, p.Name)
		}
	}
	CreateTemplateClaims(cl)
	fillDRAObjects(m, cl)
}

// fillDRAObjects loads the cluster's DRA objects into the manager as they
// are.
func fillDRAObjects(m *schedcore.DRAManager, cl *snapshot.Cluster) {
	d := &cl.DRA
	for _, c := range d.DeviceClasses {
		m.AddClass(c)
	}
	for _, s := range d.ResourceSlices {
		m.AddSlice(s)
	}
	for _, r := range d.DeviceTaintRules {
		m.AddTaintRule(r)
	}
	for _, c := range d.ResourceClaims {
		m.AddClaim(c)
	}
}

// claimNameAlphabet is the API server's alphabet for generated name
// suffixes (utilrand.String: no vowels, no confusable characters).
const claimNameAlphabet = "bcdfghjklmnpqrstvwxz2456789"

// CreateTemplateClaims does what kube's resourceclaim controller does for
// the non-terminated pods of the cluster whose template claims do not
// exist yet (TemplateClaims). Changed pods are replaced by copies in
// cl.Pods; the created claims are appended to a fresh
// cl.DRA.ResourceClaims and returned.
func CreateTemplateClaims(cl *snapshot.Cluster) []*resourceapi.ResourceClaim {
	templates := templatesByKey(cl.DRA.ResourceClaimTemplates)
	existing := map[string]*resourceapi.ResourceClaim{}
	for _, c := range cl.DRA.ResourceClaims {
		existing[c.Namespace+"/"+c.Name] = c
	}
	exists := func(namespace, name string) bool { _, ok := existing[namespace+"/"+name]; return ok }
	var created []*resourceapi.ResourceClaim
	for i, pod := range cl.Pods {
		cp, claims := TemplateClaims(pod, templates, exists)
		for _, c := range claims {
			existing[c.Namespace+"/"+c.Name] = c
		}
		created = append(created, claims...)
		cl.Pods[i] = cp
	}
	if len(created) > 0 {
		cl.DRA.ResourceClaims = append(slices.Clip(cl.DRA.ResourceClaims), created...)
	}
	return created
}

func templatesByKey(ts []*resourceapi.ResourceClaimTemplate) map[string]*resourceapi.ResourceClaimTemplate {
	out := make(map[string]*resourceapi.ResourceClaimTemplate, len(ts))
	for _, t := range ts {
		out[t.Namespace+"/"+t.Name] = t
	}
	return out
}

// TemplateClaims does what kube's resourceclaim controller does for a
// non-terminated pod whose template claims do not exist yet: it makes
// each claim from its ResourceClaimTemplate (templates by
// "namespace/name"), named "<pod>-<claim>-xxxxx" (the base proportionally
// cut to 57 characters), owned by the pod, annotated with the pod claim's
// name, and returns the pod with them recorded in
// status.resourceClaimStatuses (a copy; the pod itself when nothing was
// made) and the claims to create. The suffix is derived from the pod's
// namespace and name, so runs are reproducible; exists says which claim
// names are taken. A claim whose template is missing is not made: the pod
// then waits, as in kube.
func TemplateClaims(pod *v1.Pod, templates map[string]*resourceapi.ResourceClaimTemplate, exists func(namespace, name string) bool) (*v1.Pod, []*resourceapi.ResourceClaim) {
	if len(pod.Spec.ResourceClaims) == 0 || pod.Status.Phase == v1.PodSucceeded || pod.Status.Phase == v1.PodFailed {
		return pod, nil
	}
	var statuses []v1.PodResourceClaimStatus
	var created []*resourceapi.ResourceClaim
	taken := func(namespace, name string) bool {
		return exists(namespace, name) || slices.ContainsFunc(created, func(c *resourceapi.ResourceClaim) bool { return c.Name == name })
	}
	for _, pc := range pod.Spec.ResourceClaims {
		if pc.ResourceClaimTemplateName == nil || pc.ResourceClaimName != nil {
			continue
		}
		if recorded(pod, pc.Name, exists) {
			continue
		}
		t := templates[pod.Namespace+"/"+*pc.ResourceClaimTemplateName]
		if t == nil {
			continue
		}
		claim := claimFromTemplate(pod, pc.Name, t, taken)
		created = append(created, claim)
		statuses = append(statuses, v1.PodResourceClaimStatus{Name: pc.Name, ResourceClaimName: ptr.To(claim.Name)})
	}
	if len(statuses) == 0 {
		return pod, nil
	}
	cp := pod.DeepCopy()
	for _, st := range statuses {
		replaced := false
		for j := range cp.Status.ResourceClaimStatuses {
			if cp.Status.ResourceClaimStatuses[j].Name == st.Name {
				cp.Status.ResourceClaimStatuses[j] = st
				replaced = true
			}
		}
		if !replaced {
			cp.Status.ResourceClaimStatuses = append(cp.Status.ResourceClaimStatuses, st)
		}
	}
	return cp, created
}

// TemplateClaimsFor does TemplateClaims for one pod against the claims of
// a DRA manager, with the cluster's templates: the pod as it then is and
// the claims to create (none when it has them all, or lacks a template).
func TemplateClaimsFor(pod *v1.Pod, templates []*resourceapi.ResourceClaimTemplate, m *schedcore.DRAManager) (*v1.Pod, []*resourceapi.ResourceClaim) {
	exists := func(namespace, name string) bool { _, ok := m.Claim(namespace, name); return ok }
	return TemplateClaims(pod, templatesByKey(templates), exists)
}

// TemplateClaimsIn does TemplateClaims for one pod against a cluster's
// claims and templates: the pod as it then is, and the cluster's claims
// with the ones made added (a new slice: the cluster's is not modified).
func TemplateClaimsIn(pod *v1.Pod, dra snapshot.DRA) (*v1.Pod, []*resourceapi.ResourceClaim) {
	exists := func(namespace, name string) bool {
		return slices.ContainsFunc(dra.ResourceClaims, func(c *resourceapi.ResourceClaim) bool {
			return c.Namespace == namespace && c.Name == name
		})
	}
	pod, made := TemplateClaims(pod, templatesByKey(dra.ResourceClaimTemplates), exists)
	if len(made) == 0 {
		return pod, dra.ResourceClaims
	}
	return pod, append(slices.Clip(dra.ResourceClaims), made...)
}

// recorded reports whether the pod's status names an existing claim for
// the pod claim.
func recorded(pod *v1.Pod, podClaim string, exists func(namespace, name string) bool) bool {
	for _, st := range pod.Status.ResourceClaimStatuses {
		if st.Name == podClaim && st.ResourceClaimName != nil {
			return exists(pod.Namespace, *st.ResourceClaimName)
		}
	}
	return false
}

func claimFromTemplate(pod *v1.Pod, podClaim string, t *resourceapi.ResourceClaimTemplate, taken func(namespace, name string) bool) *resourceapi.ResourceClaim {
	base := pod.Name + "-" + podClaim + "-"
	const maxBaseLen = 57
	if len(base) > maxBaseLen {
		base = pod.Name[0:len(pod.Name)*maxBaseLen/len(base)] + "-" + podClaim[0:len(podClaim)*maxBaseLen/len(base)]
	}
	name := ""
	for n := 0; ; n++ {
		h := fnv.New64a()
		fmt.Fprintf(h, "%s/%s/%s/%d", pod.Namespace, pod.Name, podClaim, n)
		sum := h.Sum64()
		suffix := make([]byte, 5)
		for i := range suffix {
			suffix[i] = claimNameAlphabet[sum%uint64(len(claimNameAlphabet))]
			sum /= uint64(len(claimNameAlphabet))
		}
		name = base + string(suffix)
		if !taken(pod.Namespace, name) {
			break
		}
	}
	ann := maps.Clone(t.Spec.ObjectMeta.Annotations)
	if ann == nil {
		ann = map[string]string{}
	}
	ann[resourceapi.PodResourceClaimAnnotation] = podClaim
	return &resourceapi.ResourceClaim{
		TypeMeta: metav1.TypeMeta{APIVersion: "resource.k8s.io/v1", Kind: "ResourceClaim"},
		ObjectMeta: metav1.ObjectMeta{
			Name:              name,
			GenerateName:      base,
			Namespace:         pod.Namespace,
			UID:               types.UID("claim-" + pod.Namespace + "-" + name),
			ResourceVersion:   "1",
			CreationTimestamp: pod.CreationTimestamp,
			OwnerReferences:   []metav1.OwnerReference{{APIVersion: "v1", Kind: "Pod", Name: pod.Name, UID: pod.UID, Controller: ptr.To(true)}},
			Annotations:       ann,
			Labels:            maps.Clone(t.Spec.ObjectMeta.Labels),
		},
		Spec: *t.Spec.Spec.DeepCopy(),
	}
}

// MemoryClaimWriter is the dry-run's API server for DynamicResources'
// writes: it stores each written claim in the manager with the next
// resourceVersion, as the API server and the claim informer would, and
// reports the change (for the queue's claim events). A device whose
// allocation carries binding conditions gets them set true at once, as a
// driver that attaches it would; explanations say so.
type MemoryClaimWriter struct {
	DRA *schedcore.DRAManager
	// OnClaim, when set, is told of every stored change (old nil for a
	// creation, new nil for a deletion).
	OnClaim func(old, new *resourceapi.ResourceClaim)
	// OnPodStatus, when set, applies status.extendedResourceClaimStatus.
	OnPodStatus func(pod *v1.Pod, st *v1.PodExtendedResourceClaimStatus)

	mu      sync.Mutex
	version int64
	created int
}

var _ schedcore.ResourceClaimWriter = (*MemoryClaimWriter)(nil)

func (w *MemoryClaimWriter) nextVersion(c *resourceapi.ResourceClaim) string {
	w.mu.Lock()
	defer w.mu.Unlock()
	cur, _ := strconv.ParseInt(c.ResourceVersion, 10, 64)
	w.version = max(w.version, cur) + 1
	return strconv.FormatInt(w.version, 10)
}

func notFound(namespace, name string) error {
	return apierrors.NewNotFound(resourceapi.Resource("resourceclaims"), namespace+"/"+name)
}

// GetClaim returns the stored claim.
func (w *MemoryClaimWriter) GetClaim(_ context.Context, namespace, name string) (*resourceapi.ResourceClaim, error) {
	c, ok := w.DRA.Claim(namespace, name)
	if !ok {
		return nil, notFound(namespace, name)
	}
	return c, nil
}

func (w *MemoryClaimWriter) store(c *resourceapi.ResourceClaim, status bool) (*resourceapi.ResourceClaim, error) {
	cur, ok := w.DRA.Claim(c.Namespace, c.Name)
	if !ok {
		return nil, notFound(c.Namespace, c.Name)
	}
	if c.ResourceVersion != "" && c.ResourceVersion != cur.ResourceVersion {
		return nil, apierrors.NewConflict(resourceapi.Resource("resourceclaims"), c.Name, fmt.Errorf("the object has been modified; please apply your changes to the latest version and try again"))
	}
	out := cur.DeepCopy()
	if status {
		out.Status = *c.Status.DeepCopy()
		if out.Status.Allocation != nil {
			markBindingConditions(out)
		}
	} else {
		out.ObjectMeta = *c.ObjectMeta.DeepCopy()
		out.Spec = *c.Spec.DeepCopy()
	}
	out.ResourceVersion = w.nextVersion(cur)
	w.DRA.AddClaim(out)
	if w.OnClaim != nil {
		w.OnClaim(cur, out)
	}
	return out, nil
}

// markBindingConditions sets the binding conditions of the allocated
// devices true in status.devices.
func markBindingConditions(c *resourceapi.ResourceClaim) {
	for _, r := range c.Status.Allocation.Devices.Results {
		if len(r.BindingConditions) == 0 {
			continue
		}
		idx := slices.IndexFunc(c.Status.Devices, func(d resourceapi.AllocatedDeviceStatus) bool {
			return d.Driver == r.Driver && d.Pool == r.Pool && d.Device == r.Device
		})
		if idx < 0 {
			c.Status.Devices = append(c.Status.Devices, resourceapi.AllocatedDeviceStatus{Driver: r.Driver, Pool: r.Pool, Device: r.Device})
			idx = len(c.Status.Devices) - 1
		}
		for _, cond := range r.BindingConditions {
			d := &c.Status.Devices[idx]
			if !slices.ContainsFunc(d.Conditions, func(x metav1.Condition) bool { return x.Type == cond }) {
				d.Conditions = append(d.Conditions, metav1.Condition{Type: cond, Status: metav1.ConditionTrue, Reason: "DryRun", Message: "set by the dry-run's simulated driver"})
			}
		}
	}
}

// UpdateClaim stores the claim's metadata and spec.
func (w *MemoryClaimWriter) UpdateClaim(_ context.Context, c *resourceapi.ResourceClaim) (*resourceapi.ResourceClaim, error) {
	return w.store(c, false)
}

// UpdateClaimStatus stores the claim's status.
func (w *MemoryClaimWriter) UpdateClaimStatus(_ context.Context, c *resourceapi.ResourceClaim) (*resourceapi.ResourceClaim, error) {
	return w.store(c, true)
}

// RemoveClaimReservation drops the consumer from status.reservedFor.
func (w *MemoryClaimWriter) RemoveClaimReservation(_ context.Context, c *resourceapi.ResourceClaim, consumer types.UID) error {
	cur, ok := w.DRA.Claim(c.Namespace, c.Name)
	if !ok {
		return notFound(c.Namespace, c.Name)
	}
	upd := cur.DeepCopy()
	upd.Status.ReservedFor = slices.DeleteFunc(upd.Status.ReservedFor, func(r resourceapi.ResourceClaimConsumerReference) bool { return r.UID == consumer })
	_, err := w.store(upd, true)
	return err
}

// CreateClaim stores a new claim, named from its generateName.
func (w *MemoryClaimWriter) CreateClaim(_ context.Context, c *resourceapi.ResourceClaim) (*resourceapi.ResourceClaim, error) {
	out := c.DeepCopy()
	w.mu.Lock()
	w.created++
	n := w.created
	w.mu.Unlock()
	if out.Name == "" {
		for i := n; ; i++ {
			h := fnv.New64a()
			fmt.Fprintf(h, "%s/%s/%d", out.Namespace, out.GenerateName, i)
			sum := h.Sum64()
			suffix := make([]byte, 5)
			for j := range suffix {
				suffix[j] = claimNameAlphabet[sum%uint64(len(claimNameAlphabet))]
				sum /= uint64(len(claimNameAlphabet))
			}
			out.Name = out.GenerateName + string(suffix)
			if _, taken := w.DRA.Claim(out.Namespace, out.Name); !taken {
				break
			}
		}
	}
	if out.UID == "" {
		out.UID = types.UID("claim-" + out.Namespace + "-" + out.Name)
	}
	out.ResourceVersion = w.nextVersion(out)
	w.DRA.AddClaim(out)
	if w.OnClaim != nil {
		w.OnClaim(nil, out)
	}
	return out, nil
}

// DeleteClaim removes the claim.
func (w *MemoryClaimWriter) DeleteClaim(_ context.Context, c *resourceapi.ResourceClaim) error {
	cur, ok := w.DRA.Claim(c.Namespace, c.Name)
	if !ok {
		return notFound(c.Namespace, c.Name)
	}
	w.DRA.DeleteClaim(cur)
	if w.OnClaim != nil {
		w.OnClaim(cur, nil)
	}
	return nil
}

// SetPodExtendedResourceClaimStatus hands the status to OnPodStatus.
func (w *MemoryClaimWriter) SetPodExtendedResourceClaimStatus(_ context.Context, pod *v1.Pod, st *v1.PodExtendedResourceClaimStatus) error {
	if w.OnPodStatus != nil {
		w.OnPodStatus(pod, st)
	}
	return nil
}
