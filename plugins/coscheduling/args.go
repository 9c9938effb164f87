package coscheduling

import (
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// DefaultPermitWaitingTimeSeconds is scheduler-plugins' default for how
// long a gang member waits at Permit for its siblings.
const DefaultPermitWaitingTimeSeconds int64 = 60

// CoschedulingArgs are the plugin's args, as scheduler-plugins'
// CoschedulingArgs (sigs.k8s.io/scheduler-plugins/apis/config/v1): they are
// not part of k8s.io/kube-scheduler, so the type lives here. In a
// KubeSchedulerConfiguration:
//
//	pluginConfig:
//	- name: Coscheduling
//	  args:
//	    permitWaitingTimeSeconds: 30
//	    podGroupBackoffSeconds: 10
type CoschedulingArgs struct {
	metav1.TypeMeta `json:",inline"`

	// PermitWaitingTimeSeconds is how long a member waits at Permit for
	// the group to reach minMember when its PodGroup sets no
	// scheduleTimeoutSeconds. Default 60.
	PermitWaitingTimeSeconds *int64 `json:"permitWaitingTimeSeconds,omitempty"`
	// PodGroupBackoffSeconds, when positive, keeps a group that failed in
	// PostFilter out of scheduling (PreFilter rejects its pods) for that
	// long. Default 0: no group backoff.
	PodGroupBackoffSeconds *int64 `json:"podGroupBackoffSeconds,omitempty"`
}

// DeepCopyObject implements runtime.Object.
func (a *CoschedulingArgs) DeepCopyObject() runtime.Object {
	if a == nil {
		return nil
	}
	out := *a
	if a.PermitWaitingTimeSeconds != nil {
		v := *a.PermitWaitingTimeSeconds
		out.PermitWaitingTimeSeconds = &v
	}
	if a.PodGroupBackoffSeconds != nil {
		v := *a.PodGroupBackoffSeconds
		out.PodGroupBackoffSeconds = &v
	}
	return &out
}

// NewArgs returns empty args for the config loader to decode into.
func NewArgs() runtime.Object { return &CoschedulingArgs{} }

// SetDefaults applies scheduler-plugins' defaults.
func SetDefaults(a *CoschedulingArgs) {
	if a.PermitWaitingTimeSeconds == nil {
		v := DefaultPermitWaitingTimeSeconds
		a.PermitWaitingTimeSeconds = &v
	}
	if a.PodGroupBackoffSeconds == nil {
		var v int64
		a.PodGroupBackoffSeconds = &v
	}
}

// Validate checks defaulted args; errors name the field.
func Validate(a *CoschedulingArgs) error {
	if v := *a.PermitWaitingTimeSeconds; v < 0 {
		return fmt.Errorf("permitWaitingTimeSeconds: Invalid value: %d: must be greater than or equal to 0", v)
	}
	if v := *a.PodGroupBackoffSeconds; v < 0 {
		return fmt.Errorf("podGroupBackoffSeconds: Invalid value: %d: must be greater than or equal to 0", v)
	}
	return nil
}
