package defaultpreemption

import (
	"fmt"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	configv1 "k8s.io/kube-scheduler/config/v1"
)

// kube's v1 defaults (SetDefaults_DefaultPreemptionArgs).
const (
	DefaultMinCandidateNodesPercentage int32 = 10
	DefaultMinCandidateNodesAbsolute   int32 = 100
)

// NewArgs returns an empty args object for the config loader to decode into.
func NewArgs() runtime.Object { return &configv1.DefaultPreemptionArgs{} }

// args is the defaulted, validated form of configv1.DefaultPreemptionArgs.
type args struct {
	minCandidateNodesPercentage int32
	minCandidateNodesAbsolute   int32
}

// parseArgs applies kube's v1 defaults to obj (nil means all defaults) and
// validates the result; obj itself is not modified.
func parseArgs(obj runtime.Object) (args, error) {
	a := args{minCandidateNodesPercentage: DefaultMinCandidateNodesPercentage, minCandidateNodesAbsolute: DefaultMinCandidateNodesAbsolute}
	if obj == nil {
		return a, nil
	}
	in, ok := obj.(*configv1.DefaultPreemptionArgs)
	if !ok {
		return args{}, fmt.Errorf("got args of type %T, want *DefaultPreemptionArgs", obj)
	}
	if in == nil {
		return a, nil
	}
	if in.MinCandidateNodesPercentage != nil {
		a.minCandidateNodesPercentage = *in.MinCandidateNodesPercentage
	}
	if in.MinCandidateNodesAbsolute != nil {
		a.minCandidateNodesAbsolute = *in.MinCandidateNodesAbsolute
	}
	if err := validateArgs(a); err != nil {
		return args{}, err
	}
	return a, nil
}

// validateArgs is kube's ValidateDefaultPreemptionArgs with a nil root path.
func validateArgs(a args) error {
	var errs field.ErrorList
	pct, abs := field.NewPath("minCandidateNodesPercentage"), field.NewPath("minCandidateNodesAbsolute")
	if p := a.minCandidateNodesPercentage; p < 0 || p > 100 {
		errs = append(errs, field.Invalid(pct, p, "not in valid range [0, 100]"))
	}
	if n := a.minCandidateNodesAbsolute; n < 0 {
		errs = append(errs, field.Invalid(abs, n, "not in valid range [0, inf)"))
	}
	if a.minCandidateNodesPercentage == 0 && a.minCandidateNodesAbsolute == 0 {
		errs = append(errs,
			field.Invalid(pct, a.minCandidateNodesPercentage, "cannot be zero at the same time as minCandidateNodesAbsolute"),
			field.Invalid(abs, a.minCandidateNodesAbsolute, "cannot be zero at the same time as minCandidateNodesPercentage"))
	}
	return errs.ToAggregate()
}
