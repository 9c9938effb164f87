package noderesources

import (
	"fmt"
	"strings"

	v1 "k8s.io/api/core/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation/field"
	configv1 "k8s.io/kube-scheduler/config/v1"
)

// MaxCustomPriorityScore is the highest score a RequestedToCapacityRatio
// shape point may have (kube's config.MaxCustomPriorityScore); shape scores
// are multiplied by MaxNodeScore/MaxCustomPriorityScore.
const MaxCustomPriorityScore int64 = 10

// supportedScoringStrategyTypes lists the strategies in the order kube's
// validation prints them (sorted).
var supportedScoringStrategyTypes = sets.New(
	string(configv1.LeastAllocated),
	string(configv1.MostAllocated),
	string(configv1.RequestedToCapacityRatio),
)

// defaultResourceSpec is kube's v1 default for both plugins: cpu and memory
// with weight 1.
func defaultResourceSpec() []configv1.ResourceSpec {
	return []configv1.ResourceSpec{
		{Name: string(v1.ResourceCPU), Weight: 1},
		{Name: string(v1.ResourceMemory), Weight: 1},
	}
}

// NewFitArgs returns an empty NodeResourcesFitArgs for the config loader to
// decode into; NewFit applies the defaults.
func NewFitArgs() runtime.Object { return &configv1.NodeResourcesFitArgs{} }

// NewBalancedAllocationArgs returns an empty
// NodeResourcesBalancedAllocationArgs for the config loader to decode into.
func NewBalancedAllocationArgs() runtime.Object {
	return &configv1.NodeResourcesBalancedAllocationArgs{}
}

// fitArgs turns the versioned args (nil = all defaults) into a defaulted,
// validated copy; the caller's object is not modified.
func fitArgs(obj runtime.Object) (*configv1.NodeResourcesFitArgs, error) {
	args := &configv1.NodeResourcesFitArgs{}
	if obj != nil {
		in, ok := obj.(*configv1.NodeResourcesFitArgs)
		if !ok {
			return nil, fmt.Errorf("want args to be of type NodeResourcesFitArgs, got %T", obj)
		}
		if in != nil {
			args = in.DeepCopy()
		}
	}
	setDefaultsFitArgs(args)
	if err := validateFitArgs(nil, args); err != nil {
		return nil, err
	}
	return args, nil
}

// balancedAllocationArgs is fitArgs for NodeResourcesBalancedAllocation.
func balancedAllocationArgs(obj runtime.Object) (*configv1.NodeResourcesBalancedAllocationArgs, error) {
	args := &configv1.NodeResourcesBalancedAllocationArgs{}
	if obj != nil {
		in, ok := obj.(*configv1.NodeResourcesBalancedAllocationArgs)
		if !ok {
			return nil, fmt.Errorf("want args to be of type NodeResourcesBalancedAllocationArgs, got %T", obj)
		}
		if in != nil {
			args = in.DeepCopy()
		}
	}
	setDefaultsBalancedAllocationArgs(args)
	if err := validateBalancedAllocationArgs(nil, args); err != nil {
		return nil, err
	}
	return args, nil
}

// setDefaultsFitArgs applies kube's v1 defaults
// (SetDefaults_NodeResourcesFitArgs): no scoring strategy means
// LeastAllocated over cpu and memory; a strategy without resources gets cpu
// and memory; a resource weight of 0 becomes 1. A strategy given without a
// type keeps the empty type, which validation then rejects, as kube does.
func setDefaultsFitArgs(obj *configv1.NodeResourcesFitArgs) {
	if obj.ScoringStrategy == nil {
		obj.ScoringStrategy = &configv1.ScoringStrategy{
			Type:      configv1.LeastAllocated,
			Resources: defaultResourceSpec(),
		}
	}
	if len(obj.ScoringStrategy.Resources) == 0 {
		obj.ScoringStrategy.Resources = append(obj.ScoringStrategy.Resources, defaultResourceSpec()...)
	}
	for i := range obj.ScoringStrategy.Resources {
		if obj.ScoringStrategy.Resources[i].Weight == 0 {
			obj.ScoringStrategy.Resources[i].Weight = 1
		}
	}
}

// setDefaultsBalancedAllocationArgs applies kube's v1 defaults
// (SetDefaults_NodeResourcesBalancedAllocationArgs): cpu and memory when no
// resources are given; a weight of 0 becomes 1.
func setDefaultsBalancedAllocationArgs(obj *configv1.NodeResourcesBalancedAllocationArgs) {
	if len(obj.Resources) == 0 {
		obj.Resources = defaultResourceSpec()
		return
	}
	for i := range obj.Resources {
		if obj.Resources[i].Weight == 0 {
			obj.Resources[i].Weight = 1
		}
	}
}

// validateFitArgs is kube's ValidateNodeResourcesFitArgs: ignored resources
// must be label names, ignored resource groups label names without '/', the
// scoring strategy a supported type with weights in (0, 100] and, for
// RequestedToCapacityRatio only, a valid shape. Errors name fields under
// path (nil = relative to the args), in kube's wording.
func validateFitArgs(path *field.Path, args *configv1.NodeResourcesFitArgs) error {
	var allErrs field.ErrorList
	resPath := path.Child("ignoredResources")
	for i, res := range args.IgnoredResources {
		allErrs = append(allErrs, metav1validation.ValidateLabelName(res, resPath.Index(i))...)
	}
	groupPath := path.Child("ignoredResourceGroups")
	for i, group := range args.IgnoredResourceGroups {
		p := groupPath.Index(i)
		if strings.Contains(group, "/") {
			allErrs = append(allErrs, field.Invalid(p, group, "resource group name can't contain '/'"))
		}
		allErrs = append(allErrs, metav1validation.ValidateLabelName(group, p)...)
	}

	strategyPath := path.Child("scoringStrategy")
	if s := args.ScoringStrategy; s != nil {
		if !supportedScoringStrategyTypes.Has(string(s.Type)) {
			allErrs = append(allErrs, field.NotSupported(strategyPath.Child("type"), s.Type, sets.List(supportedScoringStrategyTypes)))
		}
		allErrs = append(allErrs, validateResources(s.Resources, strategyPath.Child("resources"))...)
		if s.Type == configv1.RequestedToCapacityRatio {
			if s.RequestedToCapacityRatio == nil {
				allErrs = append(allErrs, field.Required(strategyPath.Child("requestedToCapacityRatio"), "must be specified when type is RequestedToCapacityRatio"))
			} else {
				allErrs = append(allErrs, validateFunctionShape(s.RequestedToCapacityRatio.Shape, strategyPath.Child("requestedToCapacityRatio").Child("shape"))...)
			}
		} else if s.RequestedToCapacityRatio != nil {
			allErrs = append(allErrs, field.Forbidden(strategyPath.Child("requestedToCapacityRatio"), "must be nil when type is not RequestedToCapacityRatio"))
		}
	} else {
		allErrs = append(allErrs, field.Required(strategyPath, "ScoringStrategy field is required"))
	}
	if len(allErrs) == 0 {
		return nil
	}
	return allErrs.ToAggregate()
}

// validateBalancedAllocationArgs is kube's
// ValidateNodeResourcesBalancedAllocationArgs: resource names are unique and
// every weight is exactly 1.
func validateBalancedAllocationArgs(path *field.Path, args *configv1.NodeResourcesBalancedAllocationArgs) error {
	var allErrs field.ErrorList
	seen := sets.New[string]()
	for i, res := range args.Resources {
		if seen.Has(res.Name) {
			allErrs = append(allErrs, field.Duplicate(path.Child("resources").Index(i).Child("name"), res.Name))
		} else {
			seen.Insert(res.Name)
		}
		if res.Weight != 1 {
			allErrs = append(allErrs, field.Invalid(path.Child("resources").Index(i).Child("weight"), res.Weight, "must be 1"))
		}
	}
	return allErrs.ToAggregate()
}

func validateResources(resources []configv1.ResourceSpec, p *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	for i, res := range resources {
		if res.Weight <= 0 || res.Weight > 100 {
			msg := fmt.Sprintf("resource weight of %v not in valid range (0, 100]", res.Name)
			allErrs = append(allErrs, field.Invalid(p.Index(i).Child("weight"), res.Weight, msg))
		}
	}
	return allErrs
}

func validateFunctionShape(shape []configv1.UtilizationShapePoint, path *field.Path) field.ErrorList {
	const (
		minUtilization = 0
		maxUtilization = 100
		minScore       = 0
		maxScore       = int32(MaxCustomPriorityScore)
	)
	var allErrs field.ErrorList
	if len(shape) == 0 {
		return append(allErrs, field.Required(path, "at least one point must be specified"))
	}
	for i := 1; i < len(shape); i++ {
		if shape[i-1].Utilization >= shape[i].Utilization {
			allErrs = append(allErrs, field.Invalid(path.Index(i).Child("utilization"), shape[i].Utilization, "values must be sorted in increasing order"))
			break
		}
	}
	for i, point := range shape {
		if point.Utilization < minUtilization || point.Utilization > maxUtilization {
			msg := fmt.Sprintf("not in valid range [%d, %d]", minUtilization, maxUtilization)
			allErrs = append(allErrs, field.Invalid(path.Index(i).Child("utilization"), point.Utilization, msg))
		}
		if point.Score < minScore || point.Score > maxScore {
			msg := fmt.Sprintf("not in valid range [%d, %d]", minScore, maxScore)
			allErrs = append(allErrs, field.Invalid(path.Index(i).Child("score"), point.Score, msg))
		}
	}
	return allErrs
}
