package volumebinding

import (
	"fmt"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	configv1 "k8s.io/kube-scheduler/config/v1"
)

const (
	// DefaultBindTimeoutSeconds is kube's default bindTimeoutSeconds.
	DefaultBindTimeoutSeconds int64 = 600
	// MaxCustomPriorityScore bounds the scores of a shape (kube's config
	// constant); they are scaled by MaxNodeScore/MaxCustomPriorityScore.
	MaxCustomPriorityScore int64 = 10
)

// NewArgs returns empty VolumeBindingArgs for the config loader.
func NewArgs() runtime.Object { return &configv1.VolumeBindingArgs{} }

// args returns a defaulted copy of the plugin's args (nil: defaults).
func args(obj runtime.Object, capacityScoring bool) (*configv1.VolumeBindingArgs, error) {
	a := &configv1.VolumeBindingArgs{}
	if obj != nil {
		in, ok := obj.(*configv1.VolumeBindingArgs)
		if !ok {
			return nil, fmt.Errorf("want args to be of type VolumeBindingArgs, got %T", obj)
		}
		a = in.DeepCopy()
	}
	setDefaults(a, capacityScoring)
	return a, nil
}

// setDefaults is kube's SetDefaults_VolumeBindingArgs: bindTimeoutSeconds
// 600; with StorageCapacityScoring, the shape {0: 10, 100: 0} (emptier
// nodes score higher).
func setDefaults(a *configv1.VolumeBindingArgs, capacityScoring bool) {
	if a.BindTimeoutSeconds == nil {
		t := DefaultBindTimeoutSeconds
		a.BindTimeoutSeconds = &t
	}
	if len(a.Shape) == 0 && capacityScoring {
		a.Shape = []configv1.UtilizationShapePoint{{Utilization: 0, Score: int32(MaxCustomPriorityScore)}, {Utilization: 100, Score: 0}}
	}
}

// validate is kube's ValidateVolumeBindingArgsWithOptions.
func validate(a *configv1.VolumeBindingArgs, capacityScoring bool) error {
	var errs field.ErrorList
	if *a.BindTimeoutSeconds < 0 {
		errs = append(errs, field.Invalid(field.NewPath("bindTimeoutSeconds"), *a.BindTimeoutSeconds, "invalid BindTimeoutSeconds, should not be a negative value"))
	}
	if capacityScoring {
		errs = append(errs, validateFunctionShape(a.Shape, field.NewPath("shape"))...)
	} else if a.Shape != nil {
		errs = append(errs, field.Invalid(field.NewPath("shape"), a.Shape, "unexpected field `shape`, remove it or turn on the feature gate StorageCapacityScoring"))
	}
	return errs.ToAggregate()
}

func validateFunctionShape(shape []configv1.UtilizationShapePoint, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	if len(shape) == 0 {
		return append(errs, field.Required(path, "at least one point must be specified"))
	}
	for i := 1; i < len(shape); i++ {
		if shape[i-1].Utilization >= shape[i].Utilization {
			errs = append(errs, field.Invalid(path.Index(i).Child("utilization"), shape[i].Utilization, "values must be sorted in increasing order"))
			break
		}
	}
	for i, p := range shape {
		if p.Utilization < 0 || p.Utilization > 100 {
			errs = append(errs, field.Invalid(path.Index(i).Child("utilization"), p.Utilization, "not in valid range [0, 100]"))
		}
		if p.Score < 0 || int64(p.Score) > MaxCustomPriorityScore {
			errs = append(errs, field.Invalid(path.Index(i).Child("score"), p.Score, fmt.Sprintf("not in valid range [0, %d]", MaxCustomPriorityScore)))
		}
	}
	return errs
}

// shapePoint is a shape point with its score scaled to [0, MaxNodeScore].
type shapePoint struct{ utilization, score int64 }

// brokenLinear is kube's helper.BuildBrokenLinearFunction evaluated at p.
func brokenLinear(shape []shapePoint, p int64) int64 {
	for i := range shape {
		if p <= shape[i].utilization {
			if i == 0 {
				return shape[0].score
			}
			return shape[i-1].score + (shape[i].score-shape[i-1].score)*(p-shape[i-1].utilization)/(shape[i].utilization-shape[i-1].utilization)
		}
	}
	return shape[len(shape)-1].score
}
