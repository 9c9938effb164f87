package interpodaffinity

import (
	"fmt"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	configv1 "k8s.io/kube-scheduler/config/v1"
)

// Bounds of hardPodAffinityWeight, as kube's validation has them.
const (
	minHardPodAffinityWeight = 0
	maxHardPodAffinityWeight = 100
	// DefaultHardPodAffinityWeight is kube's v1 default.
	DefaultHardPodAffinityWeight int32 = 1
)

// NewArgs returns an empty args object for the config loader to decode into.
func NewArgs() runtime.Object { return &configv1.InterPodAffinityArgs{} }

// args is the defaulted, validated form of configv1.InterPodAffinityArgs.
type args struct {
	hardPodAffinityWeight              int32
	ignorePreferredTermsOfExistingPods bool
}

// parseArgs applies kube's v1 defaults to obj (nil means all defaults) and
// validates the result; obj itself is not modified.
func parseArgs(obj runtime.Object) (args, error) {
	a := args{hardPodAffinityWeight: DefaultHardPodAffinityWeight}
	if obj == nil {
		return a, nil
	}
	in, ok := obj.(*configv1.InterPodAffinityArgs)
	if !ok {
		return args{}, fmt.Errorf("want args to be of type InterPodAffinityArgs, got %T", obj)
	}
	if in == nil {
		return a, nil
	}
	if in.HardPodAffinityWeight != nil {
		a.hardPodAffinityWeight = *in.HardPodAffinityWeight
	}
	a.ignorePreferredTermsOfExistingPods = in.IgnorePreferredTermsOfExistingPods
	if err := validateArgs(a); err != nil {
		return args{}, err
	}
	return a, nil
}

// validateArgs is kube's ValidateInterPodAffinityArgs with a nil root path.
func validateArgs(a args) error {
	if w := a.hardPodAffinityWeight; w < minHardPodAffinityWeight || w > maxHardPodAffinityWeight {
		msg := fmt.Sprintf("not in valid range [%d, %d]", minHardPodAffinityWeight, maxHardPodAffinityWeight)
		return field.Invalid(field.NewPath("hardPodAffinityWeight"), w, msg)
	}
	return nil
}
