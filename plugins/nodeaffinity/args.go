package nodeaffinity

import (
	"fmt"

	"k8s.io/apimachinery/pkg/runtime"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/component-helpers/scheduling/corev1/nodeaffinity"
	configv1 "k8s.io/kube-scheduler/config/v1"
)

// NewArgs returns an empty NodeAffinityArgs for the config loader to decode into.
func NewArgs() runtime.Object { return &configv1.NodeAffinityArgs{} }

// getArgs converts and validates the args; nil means the defaults (no added
// affinity). NodeAffinityArgs has no v1 defaults to apply.
func getArgs(obj runtime.Object) (*configv1.NodeAffinityArgs, error) {
	if obj == nil {
		return &configv1.NodeAffinityArgs{}, nil
	}
	args, ok := obj.(*configv1.NodeAffinityArgs)
	if !ok {
		return nil, fmt.Errorf("args are not of type NodeAffinityArgs, got %T", obj)
	}
	if args == nil {
		return &configv1.NodeAffinityArgs{}, nil
	}
	return args, validateArgs(nil, args)
}

// validateArgs applies kube's ValidateNodeAffinityArgs: both parts of
// addedAffinity must parse; errors carry their field paths.
func validateArgs(path *field.Path, args *configv1.NodeAffinityArgs) error {
	affinity := args.AddedAffinity
	if affinity == nil {
		return nil
	}
	var errs []error
	if ns := affinity.RequiredDuringSchedulingIgnoredDuringExecution; ns != nil {
		if _, err := nodeaffinity.NewNodeSelector(ns, field.WithPath(path.Child("addedAffinity", "requiredDuringSchedulingIgnoredDuringExecution"))); err != nil {
			errs = append(errs, err)
		}
	}
	if terms := affinity.PreferredDuringSchedulingIgnoredDuringExecution; len(terms) != 0 {
		if _, err := nodeaffinity.NewPreferredSchedulingTerms(terms, field.WithPath(path.Child("addedAffinity", "preferredDuringSchedulingIgnoredDuringExecution"))); err != nil {
			errs = append(errs, err)
		}
	}
	return utilerrors.Flatten(utilerrors.NewAggregate(errs))
}
