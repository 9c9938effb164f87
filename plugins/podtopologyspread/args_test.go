package podtopologyspread

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	configv1 "k8s.io/kube-scheduler/config/v1"

	"github.com/kubectl-sched/kubectl-sched/schedcore"
)

func TestNewArgs(t *testing.T) {
	if diff := cmp.Diff(&configv1.PodTopologySpreadArgs{}, NewArgs()); diff != "" {
		t.Errorf("NewArgs (-want +got):\n%s", diff)
	}
}

func TestParseArgs(t *testing.T) {
	hostZone := []v1.TopologySpreadConstraint{
		{TopologyKey: v1.LabelHostname, WhenUnsatisfiable: v1.ScheduleAnyway, MaxSkew: 3},
		{TopologyKey: v1.LabelTopologyZone, WhenUnsatisfiable: v1.ScheduleAnyway, MaxSkew: 5},
	}
	tests := []struct {
		name    string
		obj     runtime.Object
		want    args
		wantErr string
	}{
		{
			name: "nil args default to System with kube's constraints",
			want: args{defaultConstraints: hostZone, systemDefaulted: true},
		},
		{
			name: "a nil pointer defaults like nil",
			obj:  (*configv1.PodTopologySpreadArgs)(nil),
			want: args{defaultConstraints: hostZone, systemDefaulted: true},
		},
		{
			name: "an empty defaultingType defaults to System",
			obj:  &configv1.PodTopologySpreadArgs{},
			want: args{defaultConstraints: hostZone, systemDefaulted: true},
		},
		{
			name: "List without constraints has no default spreading",
			obj:  listArgs(),
			want: args{},
		},
		{
			name: "List keeps its constraints",
			obj:  listArgs(tsc(1, "zone", dns, nil), tsc(2, "node", sa, nil)),
			want: args{defaultConstraints: []v1.TopologySpreadConstraint{tsc(1, "zone", dns, nil), tsc(2, "node", sa, nil)}},
		},
		{
			name: "the same key with both actions is no repeat",
			obj:  listArgs(tsc(1, "zone", dns, nil), tsc(2, "zone", sa, nil)),
			want: args{defaultConstraints: []v1.TopologySpreadConstraint{tsc(1, "zone", dns, nil), tsc(2, "zone", sa, nil)}},
		},
		{
			name:    "an args object of another type is refused",
			obj:     &configv1.NodeAffinityArgs{},
			wantErr: "want args to be of type PodTopologySpreadArgs, got *v1.NodeAffinityArgs",
		},
		{
			name:    "System with constraints is invalid",
			obj:     &configv1.PodTopologySpreadArgs{DefaultConstraints: []v1.TopologySpreadConstraint{tsc(1, "zone", dns, nil)}},
			wantErr: `defaultingType: Invalid value: "System": when .defaultConstraints are not empty`,
		},
		{
			name:    "an unknown defaultingType is not supported",
			obj:     &configv1.PodTopologySpreadArgs{DefaultingType: "Foo"},
			wantErr: `defaultingType: Unsupported value: "Foo": supported values: "System", "List"`,
		},
		{
			name:    "maxSkew must be positive",
			obj:     listArgs(tsc(0, "zone", dns, nil)),
			wantErr: `defaultConstraints[0].maxSkew: Invalid value: 0: not in valid range (0, inf)`,
		},
		{
			name:    "a topology key is required",
			obj:     listArgs(tsc(1, "", dns, nil)),
			wantErr: `defaultConstraints[0].topologyKey: Required value: can not be empty`,
		},
		{
			name:    "a topology key must be a label name",
			obj:     listArgs(tsc(1, "bad key", dns, nil)),
			wantErr: `defaultConstraints[0].topologyKey: Invalid value: "bad key": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')`,
		},
		{
			name:    "whenUnsatisfiable is required",
			obj:     listArgs(tsc(1, "zone", "", nil)),
			wantErr: `defaultConstraints[0].whenUnsatisfiable: Required value: can not be empty`,
		},
		{
			name:    "an unknown whenUnsatisfiable is not supported",
			obj:     listArgs(tsc(1, "zone", "Maybe", nil)),
			wantErr: `defaultConstraints[0].whenUnsatisfiable: Unsupported value: "Maybe": supported values: "DoNotSchedule", "ScheduleAnyway"`,
		},
		{
			name:    "default constraints must not have a selector",
			obj:     listArgs(tsc(1, "zone", dns, fooSelector)),
			wantErr: `defaultConstraints[0].labelSelector: Forbidden: constraint must not define a selector, as they deduced for each pod`,
		},
		{
			name:    "a repeated key and action is a duplicate",
			obj:     listArgs(tsc(1, "zone", dns, nil), tsc(2, "zone", dns, nil)),
			wantErr: `defaultConstraints[1]: Duplicate value: "{zone, DoNotSchedule}"`,
		},
		{
			name:    "all errors are reported together",
			obj:     listArgs(tsc(0, "", dns, nil), tsc(1, "zone", "", fooSelector)),
			wantErr: `[defaultConstraints[0].maxSkew: Invalid value: 0: not in valid range (0, inf), defaultConstraints[0].topologyKey: Required value: can not be empty, defaultConstraints[1].whenUnsatisfiable: Required value: can not be empty, defaultConstraints[1].labelSelector: Forbidden: constraint must not define a selector, as they deduced for each pod]`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseArgs(tt.obj)
			if tt.wantErr != "" {
				if err == nil || err.Error() != tt.wantErr {
					t.Fatalf("parseArgs error = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got, cmp.AllowUnexported(args{})); diff != "" {
				t.Errorf("parseArgs (-want +got):\n%s", diff)
			}
		})
	}
}

func TestParseArgsDoesNotModifyInput(t *testing.T) {
	in := &configv1.PodTopologySpreadArgs{}
	if _, err := parseArgs(in); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(&configv1.PodTopologySpreadArgs{}, in); diff != "" {
		t.Errorf("parseArgs changed its input (-want +got):\n%s", diff)
	}
}

func TestNew(t *testing.T) {
	h := schedcore.NewHandle(nil, 1)
	pl, err := New(context.Background(), nil, h)
	if err != nil {
		t.Fatal(err)
	}
	p := pl.(*PodTopologySpread)
	if p.Name() != "PodTopologySpread" || !p.systemDefaulted || !p.enableMatchLabelKeys || p.enableTaintTolerationComparisonOperators {
		t.Errorf("New(nil) = %+v, want PodTopologySpread with System defaulting and v1.37.2's feature gates", p)
	}
	if _, err := New(context.Background(), listArgs(tsc(0, "zone", dns, nil)), h); err == nil {
		t.Error("New accepted invalid args")
	}
	if _, err := New(context.Background(), nil, nil); err == nil {
		t.Error("New accepted a nil handle")
	}
}
