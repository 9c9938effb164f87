package dynamicresources

import (
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	configv1 "k8s.io/kube-scheduler/config/v1"

	"github.com/kubectl-sched/kubectl-sched/schedcore"
)

// NewArgs returns empty DynamicResourcesArgs for the config loader.
func NewArgs() runtime.Object { return &configv1.DynamicResourcesArgs{} }

// args returns a defaulted, validated copy of the plugin's args (nil:
// defaults), as kube's SetDefaults_DynamicResourcesArgs and
// ValidateDynamicResourcesArgs: filterTimeout 10s with
// DRASchedulerFilterTimeout, bindingTimeout 10m with binding conditions.
func args(obj runtime.Object, f schedcore.Features) (*configv1.DynamicResourcesArgs, error) {
	a := &configv1.DynamicResourcesArgs{}
	if obj != nil {
		in, ok := obj.(*configv1.DynamicResourcesArgs)
		if !ok {
			return nil, fmt.Errorf("want args to be of type DynamicResourcesArgs, got %T", obj)
		}
		a = in.DeepCopy()
	}
	bindingConditions := f.DRADeviceBindingConditions && f.DRAResourceClaimDeviceStatus
	if a.FilterTimeout == nil && f.DRASchedulerFilterTimeout {
		a.FilterTimeout = &metav1.Duration{Duration: configv1.DynamicResourcesFilterTimeoutDefault}
	}
	if a.BindingTimeout == nil && bindingConditions {
		a.BindingTimeout = &metav1.Duration{Duration: configv1.DynamicResourcesBindingTimeoutDefault}
	}
	var errs field.ErrorList
	if f.DRASchedulerFilterTimeout {
		if a.FilterTimeout != nil && a.FilterTimeout.Duration < 0 {
			errs = append(errs, field.Invalid(field.NewPath("filterTimeout"), a.FilterTimeout, "must be zero or positive"))
		}
	} else if a.FilterTimeout != nil {
		errs = append(errs, field.Forbidden(field.NewPath("filterTimeout"), "DRASchedulingFilterTimeout feature gate is disabled"))
	}
	if bindingConditions {
		if a.BindingTimeout != nil && a.BindingTimeout.Duration < time.Second {
			errs = append(errs, field.Invalid(field.NewPath("bindingTimeout"), a.BindingTimeout, "must be at least 1 second"))
		}
	} else if a.BindingTimeout != nil {
		errs = append(errs, field.Forbidden(field.NewPath("bindingTimeout"), "DRADeviceBindingConditions or DRAResourceClaimDeviceStatus feature gate is disabled"))
	}
	return a, errs.ToAggregate()
}
