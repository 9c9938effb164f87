package defaults

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestValidatePod transcribes kube v1.37.2's cases of
// pkg/apis/core/validation validation_test.go on container resources
// ("Request limit simple invalid", "Memory request limit multiple
// invalid", "invalid extended resource requirement: request must be ==
// limit", "... without limit", "invalid fractional extended resource in
// container request"), worded as kubectl prints the API server's refusal.
func TestValidatePod(t *testing.T) {
	tests := []struct {
		name, spec, want string
	}{{
		name: "requests within limits pass",
		spec: `containers: [{name: c, resources: {requests: {cpu: "1", memory: 1Gi}, limits: {cpu: "2", memory: 1Gi}}}]`,
	}, {
		name: "a cpu request above its limit",
		spec: `containers: [{name: c, resources: {requests: {cpu: "2"}, limits: {cpu: "1"}}}]`,
		want: `The Pod "p" is invalid: spec.containers[0].resources.requests: Invalid value: "2": must be less than or equal to cpu limit of 1`,
	}, {
		name: "request limit simple invalid (cpu 6 over 5)",
		spec: `containers: [{name: abc-123, resources: {requests: {cpu: "6", memory: "3"}, limits: {cpu: "5", memory: "3"}}}]`,
		want: `The Pod "p" is invalid: spec.containers[0].resources.requests: Invalid value: "6": must be less than or equal to cpu limit of 5`,
	}, {
		name: "memory request limit multiple invalid",
		spec: `containers: [{name: abc-123, resources: {requests: {cpu: "5", memory: "4"}, limits: {cpu: "5", memory: "3"}}}]`,
		want: `The Pod "p" is invalid: spec.containers[0].resources.requests: Invalid value: "4": must be less than or equal to memory limit of 3`,
	}, {
		name: "an init container's request above its limit",
		spec: `
containers: [{name: c}]
initContainers: [{name: i, resources: {requests: {memory: 2Gi}, limits: {memory: 1Gi}}}]`,
		want: `The Pod "p" is invalid: spec.initContainers[0].resources.requests: Invalid value: "2Gi": must be less than or equal to memory limit of 1Gi`,
	}, {
		name: "an extended resource's request must equal its limit",
		spec: `containers: [{name: invalid, resources: {requests: {example.com/a: "2"}, limits: {example.com/a: "1"}}}]`,
		want: `The Pod "p" is invalid: spec.containers[0].resources.requests: Invalid value: "2": must be equal to example.com/a limit of 1`,
	}, {
		name: "an extended resource needs a limit",
		spec: `containers: [{name: invalid, resources: {requests: {example.com/a: "2"}}}]`,
		want: `The Pod "p" is invalid: spec.containers[0].resources.limits: Required value: Limit must be set for non overcommitable resources`,
	}, {
		name: "an extended resource is a whole number",
		spec: `containers: [{name: invalid, resources: {requests: {example.com/a: 500m}, limits: {example.com/a: 500m}}}]`,
		want: `The Pod "p" is invalid: 
* spec.containers[0].resources.limits[example.com/a]: Invalid value: "500m": must be an integer
* spec.containers[0].resources.requests[example.com/a]: Invalid value: "500m": must be an integer`,
	}, {
		name: "pod-level requests above pod-level limits",
		spec: `
resources: {requests: {cpu: "2"}, limits: {cpu: "1"}}
containers: [{name: c}]`,
		want: `The Pod "p" is invalid: spec.resources.requests: Invalid value: "2": must be less than or equal to cpu limit of 1`,
	}, {
		name: "an extended resource given as a limit only is defaulted to a request and passes",
		spec: `containers: [{name: c, resources: {limits: {example.com/a: "1"}}}]`,
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p"}, Spec: podSpec(t, tc.spec)}
			Pod(p)
			err := ValidatePod(p)
			got := ""
			if err != nil {
				got = err.Error()
				if !errors.Is(err, ErrInvalid) {
					t.Errorf("error %v is not ErrInvalid", err)
				}
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}
