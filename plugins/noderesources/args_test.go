package noderesources

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/runtime"
	configv1 "k8s.io/kube-scheduler/config/v1"

	"github.com/kubectl-sched/kubectl-sched/schedcore"
)

func TestNewArgsAreEmpty(t *testing.T) {
	if diff := cmp.Diff(&configv1.NodeResourcesFitArgs{}, NewFitArgs()); diff != "" {
		t.Errorf("NewFitArgs (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(&configv1.NodeResourcesBalancedAllocationArgs{}, NewBalancedAllocationArgs()); diff != "" {
		t.Errorf("NewBalancedAllocationArgs (-want +got):\n%s", diff)
	}
}

func TestFitArgsDefaults(t *testing.T) {
	tests := []struct {
		name string
		in   *configv1.NodeResourcesFitArgs
		want *configv1.NodeResourcesFitArgs
	}{
		{
			name: "NodeResourcesFitArgs not set",
			in:   &configv1.NodeResourcesFitArgs{},
			want: &configv1.NodeResourcesFitArgs{ScoringStrategy: &configv1.ScoringStrategy{Type: configv1.LeastAllocated, Resources: defaultResources}},
		},
		{
			name: "NodeResourcesFitArgs Resources empty",
			in:   &configv1.NodeResourcesFitArgs{ScoringStrategy: &configv1.ScoringStrategy{Type: configv1.MostAllocated}},
			want: &configv1.NodeResourcesFitArgs{ScoringStrategy: &configv1.ScoringStrategy{Type: configv1.MostAllocated, Resources: defaultResources}},
		},
		{
			name: "zero weights become one",
			in: &configv1.NodeResourcesFitArgs{ScoringStrategy: &configv1.ScoringStrategy{Type: configv1.LeastAllocated,
				Resources: []configv1.ResourceSpec{{Name: "cpu"}, {Name: "example.com/foo", Weight: 3}}}},
			want: &configv1.NodeResourcesFitArgs{ScoringStrategy: &configv1.ScoringStrategy{Type: configv1.LeastAllocated,
				Resources: []configv1.ResourceSpec{{Name: "cpu", Weight: 1}, {Name: "example.com/foo", Weight: 3}}}},
		},
		{
			name: "a strategy without a type keeps it empty",
			in:   &configv1.NodeResourcesFitArgs{ScoringStrategy: &configv1.ScoringStrategy{}},
			want: &configv1.NodeResourcesFitArgs{ScoringStrategy: &configv1.ScoringStrategy{Resources: defaultResources}},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			setDefaultsFitArgs(tc.in)
			if diff := cmp.Diff(tc.want, tc.in); diff != "" {
				t.Errorf("defaults (-want +got):\n%s", diff)
			}
		})
	}
}

func TestBalancedAllocationArgsDefaults(t *testing.T) {
	tests := []struct {
		name string
		in   *configv1.NodeResourcesBalancedAllocationArgs
		want *configv1.NodeResourcesBalancedAllocationArgs
	}{
		{name: "empty args get cpu and memory", in: &configv1.NodeResourcesBalancedAllocationArgs{}, want: &configv1.NodeResourcesBalancedAllocationArgs{Resources: defaultResources}},
		{
			name: "zero weights become one",
			in:   &configv1.NodeResourcesBalancedAllocationArgs{Resources: []configv1.ResourceSpec{{Name: "cpu"}, {Name: "nvidia.com/gpu", Weight: 0}}},
			want: &configv1.NodeResourcesBalancedAllocationArgs{Resources: []configv1.ResourceSpec{{Name: "cpu", Weight: 1}, {Name: "nvidia.com/gpu", Weight: 1}}},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			setDefaultsBalancedAllocationArgs(tc.in)
			if diff := cmp.Diff(tc.want, tc.in); diff != "" {
				t.Errorf("defaults (-want +got):\n%s", diff)
			}
		})
	}
}

func TestNewFitValidatesArgs(t *testing.T) {
	strategy := func(t configv1.ScoringStrategyType, res ...configv1.ResourceSpec) *configv1.ScoringStrategy {
		return &configv1.ScoringStrategy{Type: t, Resources: res}
	}
	rtcr := func(shape ...configv1.UtilizationShapePoint) *configv1.ScoringStrategy {
		return &configv1.ScoringStrategy{Type: configv1.RequestedToCapacityRatio, RequestedToCapacityRatio: &configv1.RequestedToCapacityRatioParam{Shape: shape}}
	}
	tests := []struct {
		name string
		args runtime.Object
		want string // "" = valid
	}{
		{name: "nil args are the defaults"},
		{name: "IgnoredResources: valid args", args: &configv1.NodeResourcesFitArgs{IgnoredResources: []string{"example.com"}}},
		{name: "IgnoredResourceGroups: valid args", args: &configv1.NodeResourcesFitArgs{IgnoredResourceGroups: []string{"example.com"}}},
		{
			name: "IgnoredResources: too long value",
			args: &configv1.NodeResourcesFitArgs{IgnoredResources: []string{fmt.Sprintf("longvalue%s", strings.Repeat("a", 64))}},
			want: "ignoredResources[0]: Invalid value: \"longvalue" + strings.Repeat("a", 64) + "\": name part must be no more than 63 bytes",
		},
		{
			name: "IgnoredResources: name is empty",
			args: &configv1.NodeResourcesFitArgs{IgnoredResources: []string{"example.com/"}},
			want: `ignoredResources[0]: Invalid value: "example.com/": name part must be non-empty`,
		},
		{
			name: "IgnoredResources: name has too many slash",
			args: &configv1.NodeResourcesFitArgs{IgnoredResources: []string{"example.com/aaa/bbb"}},
			want: `ignoredResources[0]: Invalid value: "example.com/aaa/bbb": a valid label key must consist of`,
		},
		{
			name: "IgnoredResourceGroups: illegal args",
			args: &configv1.NodeResourcesFitArgs{IgnoredResourceGroups: []string{"example.com/"}},
			want: `ignoredResourceGroups[0]: Invalid value: "example.com/": resource group name can't contain '/'`,
		},
		{
			name: "IgnoredResourceGroups: name is too long",
			args: &configv1.NodeResourcesFitArgs{IgnoredResourceGroups: []string{strings.Repeat("a", 64)}},
			want: "name part must be no more than 63 bytes",
		},
		{
			name: "IgnoredResourceGroups: name cannot be contain slash",
			args: &configv1.NodeResourcesFitArgs{IgnoredResourceGroups: []string{"example.com/aa"}},
			want: `ignoredResourceGroups[0]: Invalid value: "example.com/aa": resource group name can't contain '/'`,
		},
		{
			name: "ScoringStrategy: type is unsupported",
			args: &configv1.NodeResourcesFitArgs{ScoringStrategy: strategy("Foo")},
			want: `scoringStrategy.type: Unsupported value: "Foo": supported values: "LeastAllocated", "MostAllocated", "RequestedToCapacityRatio"`,
		},
		{
			name: "ScoringStrategy: an empty type is unsupported",
			args: &configv1.NodeResourcesFitArgs{ScoringStrategy: strategy("")},
			want: `scoringStrategy.type: Unsupported value: ""`,
		},
		{
			name: "ScoringStrategy: requestedToCapacityRatio field is missing",
			args: &configv1.NodeResourcesFitArgs{ScoringStrategy: strategy(configv1.RequestedToCapacityRatio)},
			want: "scoringStrategy.requestedToCapacityRatio: Required value: must be specified when type is RequestedToCapacityRatio",
		},
		{
			name: "ScoringStrategy: requestedToCapacityRatio with another type",
			args: &configv1.NodeResourcesFitArgs{ScoringStrategy: &configv1.ScoringStrategy{Type: configv1.MostAllocated, RequestedToCapacityRatio: &configv1.RequestedToCapacityRatioParam{}}},
			want: "scoringStrategy.requestedToCapacityRatio: Forbidden: must be nil when type is not RequestedToCapacityRatio",
		},
		{
			name: "resource with negative weight",
			args: &configv1.NodeResourcesFitArgs{ScoringStrategy: strategy(configv1.LeastAllocated, configv1.ResourceSpec{Name: "memory", Weight: -1}, configv1.ResourceSpec{Name: "cpu", Weight: 1})},
			want: "scoringStrategy.resources[0].weight: Invalid value: -1: resource weight of memory not in valid range (0, 100]",
		},
		{
			name: "resource weight larger than MaxNodeScore",
			args: &configv1.NodeResourcesFitArgs{ScoringStrategy: strategy(configv1.MostAllocated, configv1.ResourceSpec{Name: "memory", Weight: 1}, configv1.ResourceSpec{Name: "cpu", Weight: 101})},
			want: "scoringStrategy.resources[1].weight: Invalid value: 101: resource weight of cpu not in valid range (0, 100]",
		},
		{
			name: "multi invalid resources",
			args: &configv1.NodeResourcesFitArgs{ScoringStrategy: strategy(configv1.LeastAllocated, configv1.ResourceSpec{Name: "cpu", Weight: -1}, configv1.ResourceSpec{Name: "memory", Weight: 101})},
			want: "[scoringStrategy.resources[0].weight: Invalid value: -1: resource weight of cpu not in valid range (0, 100], scoringStrategy.resources[1].weight: Invalid value: 101: resource weight of memory not in valid range (0, 100]]",
		},
		{
			name: "shape: at least one point",
			args: &configv1.NodeResourcesFitArgs{ScoringStrategy: rtcr()},
			want: "scoringStrategy.requestedToCapacityRatio.shape: Required value: at least one point must be specified",
		},
		{
			name: "shape: utilization must increase",
			args: &configv1.NodeResourcesFitArgs{ScoringStrategy: rtcr(configv1.UtilizationShapePoint{Utilization: 50, Score: 1}, configv1.UtilizationShapePoint{Utilization: 50, Score: 2})},
			want: "scoringStrategy.requestedToCapacityRatio.shape[1].utilization: Invalid value: 50: values must be sorted in increasing order",
		},
		{
			name: "shape: utilization and score ranges",
			args: &configv1.NodeResourcesFitArgs{ScoringStrategy: rtcr(configv1.UtilizationShapePoint{Utilization: -1, Score: 11}, configv1.UtilizationShapePoint{Utilization: 101, Score: -1})},
			want: "[scoringStrategy.requestedToCapacityRatio.shape[0].utilization: Invalid value: -1: not in valid range [0, 100], " +
				"scoringStrategy.requestedToCapacityRatio.shape[0].score: Invalid value: 11: not in valid range [0, 10], " +
				"scoringStrategy.requestedToCapacityRatio.shape[1].utilization: Invalid value: 101: not in valid range [0, 100], " +
				"scoringStrategy.requestedToCapacityRatio.shape[1].score: Invalid value: -1: not in valid range [0, 10]]",
		},
		{
			name: "shape: a valid shape",
			args: &configv1.NodeResourcesFitArgs{ScoringStrategy: rtcr(configv1.UtilizationShapePoint{Utilization: 0, Score: 0}, configv1.UtilizationShapePoint{Utilization: 100, Score: 10})},
		},
		{
			name: "wrong args type",
			args: &configv1.NodeResourcesBalancedAllocationArgs{},
			want: "want args to be of type NodeResourcesFitArgs, got *v1.NodeResourcesBalancedAllocationArgs",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := NewFit(context.Background(), tc.args, schedcore.NewHandle(nil, 1))
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("unexpected error: %v", err)
			case tc.want != "" && err == nil:
				t.Fatalf("expected an error containing %q", tc.want)
			case tc.want != "" && !strings.Contains(err.Error(), tc.want):
				t.Errorf("error %q does not contain %q", err, tc.want)
			}
		})
	}
}

func TestNewFitDoesNotModifyItsArgs(t *testing.T) {
	args := &configv1.NodeResourcesFitArgs{}
	if _, err := NewFit(context.Background(), args, nil); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(&configv1.NodeResourcesFitArgs{}, args); diff != "" {
		t.Errorf("args changed (-want +got):\n%s", diff)
	}
}

func TestNewBalancedAllocationValidatesArgs(t *testing.T) {
	tests := []struct {
		name string
		args runtime.Object
		want string
	}{
		{name: "nil args are the defaults"},
		{name: "valid config", args: &configv1.NodeResourcesBalancedAllocationArgs{Resources: defaultResources}},
		{
			name: "invalid config",
			args: &configv1.NodeResourcesBalancedAllocationArgs{Resources: []configv1.ResourceSpec{{Name: "cpu", Weight: 2}, {Name: "memory", Weight: 1}}},
			want: "resources[0].weight: Invalid value: 2: must be 1",
		},
		{
			name: "repeated resources",
			args: &configv1.NodeResourcesBalancedAllocationArgs{Resources: []configv1.ResourceSpec{{Name: "cpu", Weight: 1}, {Name: "cpu", Weight: 1}}},
			want: `resources[1].name: Duplicate value: "cpu"`,
		},
		{
			name: "wrong args type",
			args: &configv1.NodeResourcesFitArgs{},
			want: "want args to be of type NodeResourcesBalancedAllocationArgs, got *v1.NodeResourcesFitArgs",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := NewBalancedAllocation(context.Background(), tc.args, schedcore.NewHandle(nil, 1))
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("unexpected error: %v", err)
			case tc.want != "" && err == nil:
				t.Fatalf("expected an error containing %q", tc.want)
			case tc.want != "" && err.Error() != tc.want:
				t.Errorf("error = %q, want %q", err, tc.want)
			}
		})
	}
}
