package defaults

import (
	"errors"
	"fmt"
	"sort"
	"strings"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/kubectl-sched/kubectl-sched/schedcore"
)

// ErrInvalid marks an object the API server would refuse.
var ErrInvalid = errors.New("refused by the API server's validation")

// InvalidError is an object the API server would refuse, worded as
// kubectl prints the API server's answer: `The Pod "web" is invalid:
// spec.containers[0].resources.requests: Invalid value: "2": must be less
// than or equal to cpu limit of 1`.
type InvalidError struct {
	Kind, Name string
	Errs       field.ErrorList
}

func (e *InvalidError) Error() string {
	head := fmt.Sprintf("The %s %q is invalid: ", e.Kind, e.Name)
	if len(e.Errs) == 1 {
		return head + e.Errs[0].Error()
	}
	var b strings.Builder
	b.WriteString(head)
	for _, fe := range e.Errs {
		b.WriteString("\n* ")
		b.WriteString(fe.Error())
	}
	return b.String()
}

// Unwrap makes errors.Is(err, ErrInvalid) true.
func (e *InvalidError) Unwrap() error { return ErrInvalid }

// ValidatePod returns, as an *InvalidError, the API server's refusal of a
// pod on the rules of ValidatePodSpec; nil when it passes them.
func ValidatePod(p *v1.Pod) error {
	if specOK(&p.Spec) {
		// Without building field paths, which allocate.
		return nil
	}
	if errs := ValidatePodSpec(&p.Spec, field.NewPath("spec")); len(errs) > 0 {
		return &InvalidError{Kind: "Pod", Name: p.Name, Errs: errs}
	}
	return nil
}

// ValidatePodSpec checks the rules of kube's pod validation
// (pkg/apis/core/validation validateResourceRequirements) that a
// scheduling decision depends on, for the containers, init containers and
// pod-level resources, with kube's wording:
//   - a request above its limit: `Invalid value: "2": must be less than
//     or equal to cpu limit of 1`;
//   - an extended resource (or pods) that is not a whole number:
//     `Invalid value: "500m": must be an integer`;
//   - a resource that cannot be overcommitted (an extended resource,
//     hugepages) whose request is not its limit: `must be equal to
//     example.com/gpu limit of 1`, or that has a request and no limit:
//     `Required value: Limit must be set for non overcommitable resources`.
//
// Run it on a pod after Pod (requests defaulted from limits first, as the
// API server defaults before it validates), or on a workload's template
// as written (a template's requests are not defaulted). Other rules
// (names, images, ...) are not checked: no decision reads them.
func ValidatePodSpec(spec *v1.PodSpec, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	for i := range spec.InitContainers {
		errs = append(errs, requirements(&spec.InitContainers[i].Resources, path.Child("initContainers").Index(i).Child("resources"))...)
	}
	for i := range spec.Containers {
		errs = append(errs, requirements(&spec.Containers[i].Resources, path.Child("containers").Index(i).Child("resources"))...)
	}
	if r := spec.Resources; r != nil {
		errs = append(errs, requirements(r, path.Child("resources"))...)
	}
	return errs
}

// requirements is validateResourceRequirements' comparison of requests
// with limits and ValidateResourceQuantityValue's integer rule, limits
// then requests, resource names in order (kube ranges over the maps).
func requirements(r *v1.ResourceRequirements, path *field.Path) field.ErrorList {
	if requirementsOK(r) {
		return nil
	}
	var errs field.ErrorList
	reqPath, limPath := path.Child("requests"), path.Child("limits")
	for _, k := range sortedNames(r.Limits) {
		if q := r.Limits[k]; !integerOK(k, q) {
			errs = append(errs, field.Invalid(limPath.Key(string(k)), q, notInteger))
		}
	}
	for _, k := range sortedNames(r.Requests) {
		q := r.Requests[k]
		if !integerOK(k, q) {
			errs = append(errs, field.Invalid(reqPath.Key(string(k)), q, notInteger))
		}
		lim, ok := r.Limits[k]
		switch {
		case ok && q.Cmp(lim) != 0 && !overcommitAllowed(k):
			errs = append(errs, field.Invalid(reqPath, q.String(), fmt.Sprintf("must be equal to %s limit of %s", k, lim.String())))
		case ok && q.Cmp(lim) > 0:
			errs = append(errs, field.Invalid(reqPath, q.String(), fmt.Sprintf("must be less than or equal to %s limit of %s", k, lim.String())))
		case !ok && !overcommitAllowed(k):
			errs = append(errs, field.Required(limPath, "Limit must be set for non overcommitable resources"))
		}
	}
	return errs
}

// notInteger is kube's isNotIntegerErrorMsg.
const notInteger = "must be an integer"

// integerOK is ValidateResourceQuantityValue's rule for resources counted
// in whole units (IsIntegerResourceName: extended resources, pods, ...).
func integerOK(k v1.ResourceName, q resource.Quantity) bool {
	// The value first: naming an extended resource allocates.
	return q.MilliValue()%1000 == 0 || !schedcore.IsExtendedResourceName(k) && !integerResources.Has(k)
}

// integerResources are kube's helper.integerResources that a pod may
// name.
var integerResources = sets.New(v1.ResourcePods, v1.ResourceServices, v1.ResourceSecrets, v1.ResourceConfigMaps,
	v1.ResourcePersistentVolumeClaims, v1.ResourceQuotas, v1.ResourceReplicationControllers,
	v1.ResourceServicesNodePorts, v1.ResourceServicesLoadBalancers)

func sortedNames(l v1.ResourceList) []v1.ResourceName {
	names := make([]v1.ResourceName, 0, len(l))
	for k := range l {
		names = append(names, k)
	}
	sort.Slice(names, func(i, j int) bool { return names[i] < names[j] })
	return names
}

// requirementsOK is requirements' check without building errors, for the
// common case.
func requirementsOK(r *v1.ResourceRequirements) bool {
	for k, q := range r.Limits {
		if !integerOK(k, q) {
			return false
		}
	}
	for k, q := range r.Requests {
		lim, ok := r.Limits[k]
		if !integerOK(k, q) || ok && (q.Cmp(lim) > 0 || q.Cmp(lim) != 0 && !overcommitAllowed(k)) || !ok && !overcommitAllowed(k) {
			return false
		}
	}
	return true
}

// specOK is ValidatePodSpec's check without building errors.
func specOK(spec *v1.PodSpec) bool {
	for _, cs := range [][]v1.Container{spec.InitContainers, spec.Containers} {
		for i := range cs {
			if !requirementsOK(&cs[i].Resources) {
				return false
			}
		}
	}
	return spec.Resources == nil || requirementsOK(spec.Resources)
}
