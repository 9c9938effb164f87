package podtopologyspread

import (
	"fmt"

	v1 "k8s.io/api/core/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	configv1 "k8s.io/kube-scheduler/config/v1"
)

// systemDefaultConstraints are the constraints kube-scheduler applies, with
// defaultingType System, to pods that have no constraints of their own;
// their selector is the pod's DefaultSelector.
var systemDefaultConstraints = []v1.TopologySpreadConstraint{
	{TopologyKey: v1.LabelHostname, WhenUnsatisfiable: v1.ScheduleAnyway, MaxSkew: 3},
	{TopologyKey: v1.LabelTopologyZone, WhenUnsatisfiable: v1.ScheduleAnyway, MaxSkew: 5},
}

// NewArgs returns an empty args object for the config loader to decode into.
func NewArgs() runtime.Object { return &configv1.PodTopologySpreadArgs{} }

// args is the defaulted, validated form of configv1.PodTopologySpreadArgs.
type args struct {
	// defaultConstraints apply to pods without constraints of their own.
	defaultConstraints []v1.TopologySpreadConstraint
	// systemDefaulted is set for defaultingType System.
	systemDefaulted bool
}

// parseArgs applies kube's v1 defaults to obj (nil means all defaults:
// defaultingType System) and validates the result with kube's
// ValidatePodTopologySpreadArgs; obj itself is not modified.
func parseArgs(obj runtime.Object) (args, error) {
	in := configv1.PodTopologySpreadArgs{}
	if obj != nil {
		p, ok := obj.(*configv1.PodTopologySpreadArgs)
		if !ok {
			return args{}, fmt.Errorf("want args to be of type PodTopologySpreadArgs, got %T", obj)
		}
		if p != nil {
			in = *p
		}
	}
	if in.DefaultingType == "" {
		in.DefaultingType = configv1.SystemDefaulting
	}
	if err := validateArgs(nil, &in); err != nil {
		return args{}, err
	}
	if in.DefaultingType == configv1.SystemDefaulting {
		return args{defaultConstraints: systemDefaultConstraints, systemDefaulted: true}, nil
	}
	return args{defaultConstraints: append([]v1.TopologySpreadConstraint(nil), in.DefaultConstraints...)}, nil
}

// validateArgs is kube's ValidatePodTopologySpreadArgs: every error, with
// its field path under path, aggregated.
func validateArgs(path *field.Path, a *configv1.PodTopologySpreadArgs) error {
	var errs field.ErrorList
	if err := validateDefaultingType(path.Child("defaultingType"), a.DefaultingType, a.DefaultConstraints); err != nil {
		errs = append(errs, err)
	}
	cpath := path.Child("defaultConstraints")
	for i, c := range a.DefaultConstraints {
		p := cpath.Index(i)
		if c.MaxSkew <= 0 {
			errs = append(errs, field.Invalid(p.Child("maxSkew"), c.MaxSkew, "not in valid range (0, inf)"))
		}
		errs = append(errs, validateTopologyKey(p.Child("topologyKey"), c.TopologyKey)...)
		if err := validateWhenUnsatisfiable(p.Child("whenUnsatisfiable"), c.WhenUnsatisfiable); err != nil {
			errs = append(errs, err)
		}
		if c.LabelSelector != nil {
			errs = append(errs, field.Forbidden(p.Child("labelSelector"), "constraint must not define a selector, as they deduced for each pod"))
		}
		if err := validateConstraintNotRepeat(cpath, a.DefaultConstraints, i); err != nil {
			errs = append(errs, err)
		}
	}
	if len(errs) == 0 {
		return nil
	}
	return errs.ToAggregate()
}

func validateDefaultingType(p *field.Path, v configv1.PodTopologySpreadConstraintsDefaulting, constraints []v1.TopologySpreadConstraint) *field.Error {
	if v != configv1.SystemDefaulting && v != configv1.ListDefaulting {
		return field.NotSupported(p, v, []string{string(configv1.SystemDefaulting), string(configv1.ListDefaulting)})
	}
	if v == configv1.SystemDefaulting && len(constraints) > 0 {
		return field.Invalid(p, v, "when .defaultConstraints are not empty")
	}
	return nil
}

func validateTopologyKey(p *field.Path, v string) field.ErrorList {
	if len(v) == 0 {
		return field.ErrorList{field.Required(p, "can not be empty")}
	}
	return metav1validation.ValidateLabelName(v, p)
}

func validateWhenUnsatisfiable(p *field.Path, v v1.UnsatisfiableConstraintAction) *field.Error {
	switch v {
	case "":
		return field.Required(p, "can not be empty")
	case v1.DoNotSchedule, v1.ScheduleAnyway:
		return nil
	}
	return field.NotSupported(p, v, []string{string(v1.DoNotSchedule), string(v1.ScheduleAnyway)})
}

func validateConstraintNotRepeat(path *field.Path, constraints []v1.TopologySpreadConstraint, idx int) *field.Error {
	c := &constraints[idx]
	for i := range constraints[:idx] {
		other := &constraints[i]
		if c.TopologyKey == other.TopologyKey && c.WhenUnsatisfiable == other.WhenUnsatisfiable {
			return field.Duplicate(path.Index(idx), fmt.Sprintf("{%v, %v}", c.TopologyKey, c.WhenUnsatisfiable))
		}
	}
	return nil
}
