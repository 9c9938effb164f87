package defaults

import (
	"context"
	"fmt"
	"strings"

	schedulingv1beta1 "k8s.io/api/scheduling/v1beta1"
	"k8s.io/apimachinery/pkg/api/operation"
	"k8s.io/apimachinery/pkg/api/validate"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// PodGroup applies SetObjectDefaults_PodGroup of kube's
// pkg/apis/scheduling/v1beta1: spec.disruptionMode is {single: {}} when
// unset. (spec.preemptionPolicy is defaulted only with the alpha gate
// PodGroupPreemptionPolicy on, which the API server has off by default;
// Workloads have no defaults.)
func PodGroup(pg *schedulingv1beta1.PodGroup) {
	if pg.Spec.DisruptionMode == nil {
		pg.Spec.DisruptionMode = &schedulingv1beta1.DisruptionMode{Single: &schedulingv1beta1.SingleDisruptionMode{}}
	}
}

// create is the operation the API server validates a new object for.
var create = operation.Operation{Type: operation.Create}

// Union memberships of kube's declarative validation, in its field order
// (the messages list them so).
var (
	policyUnion     = validate.NewUnionMembership(validate.NewUnionMember("basic"), validate.NewUnionMember("gang"))
	disruptionUnion = validate.NewUnionMembership(validate.NewUnionMember("single"), validate.NewUnionMember("all"))
	claimUnion      = validate.NewUnionMembership(validate.NewUnionMember("resourceClaimName"), validate.NewUnionMember("resourceClaimTemplateName"))
	templatesUnion  = validate.NewUnionMembership(validate.NewUnionMember("podGroupTemplates"), validate.NewUnionMember("compositePodGroupTemplates"))
)

// maxPriority is the largest priority a PodGroup or template may give
// (the declarative +k8s:maximum on priority).
const maxPriority int32 = 1000000000

// ValidatePodGroup returns, as an *InvalidError, the API server's refusal
// of a scheduling.k8s.io/v1beta1 PodGroup (after PodGroup's defaults), on
// the rules of kube v1.37's declarative validation
// (pkg/apis/scheduling/v1beta1/zz_generated.validations.go) and
// ValidatePodGroup, with their wording: exactly one of basic and gang,
// gang.minCount at least 1, at most one topology constraint whose key is a
// label key, workloadRef's names, disruptionMode's union, at most 4
// resource claims each naming one source, priority at most 1e9, and
// workloadRef required with parentCompositePodGroupName. Rules that depend
// on the API server's feature gates (a field forbidden with its gate off)
// are not checked: a dump holds what its server accepted.
func ValidatePodGroup(pg *schedulingv1beta1.PodGroup) error {
	spec := field.NewPath("spec")
	s := &pg.Spec
	var errs field.ErrorList
	if s.ParentCompositePodGroupName != nil && s.WorkloadRef == nil {
		errs = append(errs, field.Required(spec.Child("workloadRef"), "must be set when parentCompositePodGroupName is set"))
	}
	if p := s.ParentCompositePodGroupName; p != nil {
		errs = append(errs, validate.LongName(context.TODO(), create, spec.Child("parentCompositePodGroupName"), p, nil)...)
	}
	if r := s.WorkloadRef; r != nil {
		errs = append(errs, required(spec.Child("workloadRef", "workloadName"), &r.WorkloadName, validate.LongName[string])...)
		errs = append(errs, required(spec.Child("workloadRef", "templateName"), &r.TemplateName, validate.ShortName[string])...)
	}
	errs = append(errs, groupFields(spec, &s.SchedulingPolicy, s.SchedulingConstraints, s.ResourceClaims, s.PriorityClassName, s.Priority)...)
	if s.DisruptionMode == nil {
		errs = append(errs, field.Required(spec.Child("disruptionMode"), ""))
	} else {
		errs = append(errs, disruptionMode(spec.Child("disruptionMode"), s.DisruptionMode)...)
	}
	if len(errs) > 0 {
		return &InvalidError{Kind: "PodGroup", Name: pg.Name, Errs: errs}
	}
	return nil
}

// ValidateWorkload returns, as an *InvalidError, the API server's refusal
// of a scheduling.k8s.io/v1beta1 Workload, on the rules of kube v1.37's
// declarative validation and ValidateWorkloadSpec: exactly one of
// podGroupTemplates and compositePodGroupTemplates, at most 8 templates
// with unique DNS-label names, each template's policy, constraints,
// claims, disruption mode and priority as a PodGroup's, and one priority
// for all templates. (CompositePodGroupTemplates, alpha, are checked for
// their union and count only.)
func ValidateWorkload(w *schedulingv1beta1.Workload) error {
	spec := field.NewPath("spec")
	s := &w.Spec
	errs := validate.Union(context.TODO(), create, spec, s, nil, templatesUnion,
		func(s *schedulingv1beta1.WorkloadSpec) bool { return len(s.PodGroupTemplates) > 0 },
		func(s *schedulingv1beta1.WorkloadSpec) bool { return len(s.CompositePodGroupTemplates) > 0 })
	tpath := spec.Child("podGroupTemplates")
	if e := validate.MaxItems(context.TODO(), create, tpath, s.PodGroupTemplates, nil, schedulingv1beta1.WorkloadMaxPodGroupTemplates); len(e) > 0 {
		errs = append(errs, e...)
	} else {
		seen := sets.New[string]()
		for i := range s.PodGroupTemplates {
			t := &s.PodGroupTemplates[i]
			p := tpath.Index(i)
			if seen.Has(t.Name) {
				errs = append(errs, field.Duplicate(p, t.Name))
			}
			seen.Insert(t.Name)
			errs = append(errs, required(p.Child("name"), &t.Name, validate.ShortName[string])...)
			errs = append(errs, groupFields(p, &t.SchedulingPolicy, t.SchedulingConstraints, t.ResourceClaims, t.PriorityClassName, t.Priority)...)
			if t.DisruptionMode != nil {
				errs = append(errs, disruptionMode(p.Child("disruptionMode"), t.DisruptionMode)...)
			}
		}
	}
	errs = append(errs, validate.MaxItems(context.TODO(), create, spec.Child("compositePodGroupTemplates"), s.CompositePodGroupTemplates, nil, schedulingv1beta1.WorkloadMaxPodGroupTemplates)...)
	for i := 1; i < len(s.PodGroupTemplates); i++ {
		a, b := &s.PodGroupTemplates[0], &s.PodGroupTemplates[i]
		if a.PriorityClassName != b.PriorityClassName || (a.Priority == nil) != (b.Priority == nil) || (a.Priority != nil && *a.Priority != *b.Priority) {
			errs = append(errs, field.Invalid(spec, nil, "detected multiple priority configurations"))
			break
		}
	}
	if len(errs) > 0 {
		return &InvalidError{Kind: "Workload", Name: w.Name, Errs: errs}
	}
	return nil
}

// groupFields validates what a PodGroup's spec and a Workload's
// PodGroupTemplate share, under path.
func groupFields(path *field.Path, policy *schedulingv1beta1.PodGroupSchedulingPolicy, constraints *schedulingv1beta1.PodGroupSchedulingConstraints,
	claims []schedulingv1beta1.PodGroupResourceClaim, priorityClassName string, priority *int32) field.ErrorList {
	ctx := context.TODO()
	pp := path.Child("schedulingPolicy")
	errs := validate.Union(ctx, create, pp, policy, nil, policyUnion,
		func(p *schedulingv1beta1.PodGroupSchedulingPolicy) bool { return p.Basic != nil },
		func(p *schedulingv1beta1.PodGroupSchedulingPolicy) bool { return p.Gang != nil })
	if g := policy.Gang; g != nil {
		mp := pp.Child("gang", "minCount")
		if e := validate.RequiredValue(ctx, create, mp, &g.MinCount, nil); len(e) > 0 {
			errs = append(errs, e...)
		} else {
			errs = append(errs, validate.Minimum(ctx, create, mp, &g.MinCount, nil, 1)...)
		}
	}
	if constraints != nil {
		tp := path.Child("schedulingConstraints", "topology")
		if e := validate.MaxItems(ctx, create, tp, constraints.Topology, nil, 1); len(e) > 0 {
			errs = append(errs, e...)
		} else {
			for i := range constraints.Topology {
				errs = append(errs, required(tp.Index(i).Child("key"), &constraints.Topology[i].Key, validate.LabelKey[string])...)
			}
		}
	}
	cp := path.Child("resourceClaims")
	if e := validate.MaxItems(ctx, create, cp, claims, nil, 4); len(e) > 0 {
		errs = append(errs, e...)
	} else {
		seen := sets.New[string]()
		for i := range claims {
			c := &claims[i]
			p := cp.Index(i)
			if seen.Has(c.Name) {
				errs = append(errs, field.Duplicate(p, c.Name))
			}
			seen.Insert(c.Name)
			errs = append(errs, validate.Union(ctx, create, p, c, nil, claimUnion,
				func(c *schedulingv1beta1.PodGroupResourceClaim) bool { return c.ResourceClaimName != nil },
				func(c *schedulingv1beta1.PodGroupResourceClaim) bool { return c.ResourceClaimTemplateName != nil })...)
		}
	}
	if priorityClassName != "" {
		errs = append(errs, validate.LongName(ctx, create, path.Child("priorityClassName"), &priorityClassName, nil)...)
	}
	errs = append(errs, validate.Maximum(ctx, create, path.Child("priority"), priority, nil, maxPriority)...)
	return errs
}

func disruptionMode(path *field.Path, m *schedulingv1beta1.DisruptionMode) field.ErrorList {
	return validate.Union(context.TODO(), create, path, m, nil, disruptionUnion,
		func(m *schedulingv1beta1.DisruptionMode) bool { return m.Single != nil },
		func(m *schedulingv1beta1.DisruptionMode) bool { return m.All != nil })
}

// required is kube's required-then-format pair for a string field: a
// "Required value" when empty, else the format's errors.
func required(path *field.Path, v *string, format func(context.Context, operation.Operation, *field.Path, *string, *string) field.ErrorList) field.ErrorList {
	if e := validate.RequiredValue(context.TODO(), create, path, v, nil); len(e) > 0 {
		return e
	}
	return format(context.TODO(), create, path, v, nil)
}

// WorkloadAPIVersion is the version of the Workload API kube-scheduler
// v1.37 reads (its informers watch scheduling.k8s.io/v1beta1 only).
const WorkloadAPIVersion = "scheduling.k8s.io/v1beta1"

// UnservedWorkloadAPI words the refusal of a scheduling.k8s.io Workload or
// PodGroup of another version than v1beta1 (a v1alpha1 Workload of 1.35,
// a v1alpha2 PodGroup of 1.36, or a v1alpha3 object).
func UnservedWorkloadAPI(apiVersion, kind string) string {
	return fmt.Sprintf("apiVersion %s is not read: kube-scheduler v1.37 schedules %ss of %s (kubectl get %ss.v1beta1.scheduling.k8s.io -o yaml)",
		apiVersion, kind, WorkloadAPIVersion, strings.ToLower(kind))
}
