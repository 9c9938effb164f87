package featuregates

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kubectl-sched/kubectl-sched/schedcore"
)

func TestKnownGatesAreKube137s(t *testing.T) {
	// Read off pkg/features/kube_features.go of k8s.io/kubernetes v1.37.2
	// (and component-base's logging gates), spec by spec.
	tests := []Gate{
		{Name: "GenericWorkload", Default: false, Stage: "BETA"},
		{Name: "TopologyAwareWorkloadScheduling", Default: false, Stage: "ALPHA"},
		{Name: "WorkloadWithJob", Default: false, Stage: "ALPHA"},
		{Name: "PodGroupPreemptionPolicy", Default: false, Stage: "ALPHA"},
		{Name: "CompositePodGroup", Default: false, Stage: "ALPHA"},
		{Name: "DRAWorkloadResourceClaims", Default: false, Stage: "BETA"},
		{Name: "DynamicResourceAllocation", Default: true, LockToDefault: true, Stage: ""},
		{Name: "NodeDeclaredFeatures", Default: true, LockToDefault: true, Stage: ""},
		{Name: "InPlacePodVerticalScaling", Default: true, LockToDefault: true, Stage: ""},
		{Name: "PodLevelResources", Default: true, Stage: "BETA"},
		{Name: "TaintTolerationComparisonOperators", Default: false, Stage: "ALPHA"},
		{Name: "DRAFractionalCapacityRange", Default: false, Stage: "BETA"},
		{Name: "ContextualLogging", Default: true, Stage: "BETA"},
	}
	for _, want := range tests {
		t.Run(want.Name, func(t *testing.T) {
			got, ok := Lookup(want.Name)
			if !ok {
				t.Fatalf("%s is not a known gate", want.Name)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
	if got := Depends("TopologyAwareWorkloadScheduling"); !cmp.Equal(got, []string{"GenericWorkload"}) {
		t.Errorf("TopologyAwareWorkloadScheduling depends on %v, want [GenericWorkload]", got)
	}
	if n := len(Known()); n < 250 {
		t.Errorf("%d known gates: kube-scheduler v1.37.2 accepts more than 250", n)
	}
}

func TestEveryEngineGateIsKubesAndDefaultsAsKube(t *testing.T) {
	for _, name := range EngineGates() {
		if _, ok := Lookup(name); !ok {
			t.Errorf("schedcore.Features.%s names no gate of kube-scheduler v1.37.2", name)
		}
	}
	if diff := cmp.Diff(schedcore.DefaultFeatures, Default()); diff != "" {
		t.Errorf("schedcore.DefaultFeatures differ from kube-scheduler v1.37.2's defaults (-DefaultFeatures +kube):\n%s", diff)
	}
}

func TestSet(t *testing.T) {
	tests := []struct {
		name    string
		value   string
		on, off []string
		warn    []string
		err     string
	}{
		{name: "the empty value keeps the defaults", value: "", on: []string{"DynamicResourceAllocation", "PodLevelResources"}, off: []string{"GenericWorkload"}},
		{name: "one gate", value: "GenericWorkload=true", on: []string{"GenericWorkload"}},
		{name: "several gates", value: "GenericWorkload=true,TopologyAwareWorkloadScheduling=true,StorageCapacityScoring=false",
			on: []string{"GenericWorkload", "TopologyAwareWorkloadScheduling"}, off: []string{"StorageCapacityScoring"}},
		{name: "spaces around names and values", value: " GenericWorkload = true , StorageCapacityScoring= false ,",
			on: []string{"GenericWorkload"}, off: []string{"StorageCapacityScoring"}},
		{name: "the kube: prefix", value: "kube:GenericWorkload=true", on: []string{"GenericWorkload"}},
		{name: "the last value of a gate wins", value: "GenericWorkload=true,GenericWorkload=false", off: []string{"GenericWorkload"}},
		{name: "a bool as strconv reads it", value: "GenericWorkload=1,StorageCapacityScoring=F", on: []string{"GenericWorkload"}, off: []string{"StorageCapacityScoring"}},
		{name: "a gate others need, turned off with them", value: "PodLevelResources=false,InPlacePodLevelResourcesVerticalScaling=false,PodLevelResourcesFixDefaulting=false,PodLevelResourcesFixKubeletQOSClass=false",
			off: []string{"PodLevelResources", "InPlacePodLevelResourcesVerticalScaling"}},
		{name: "a locked gate at its value, with kube's warning", value: "DynamicResourceAllocation=true", on: []string{"DynamicResourceAllocation"},
			warn: []string{"setting GA feature gate DynamicResourceAllocation=true. It will be removed in a future release."}},
		{name: "an unknown gate", value: "GenericWorkload=true,NoSuchGate=true", err: "unrecognized feature gate: NoSuchGate"},
		{name: "of two unknown gates, the first by name", value: "Zed=true,Abc=false", err: "unrecognized feature gate: Abc"},
		{name: "a locked gate set otherwise", value: "DynamicResourceAllocation=false",
			err: "cannot set feature gate DynamicResourceAllocation to false, feature is locked to true"},
		{name: "two locked gates, sorted", value: "NodeDeclaredFeatures=false,DynamicResourceAllocation=false",
			err: "[cannot set feature gate DynamicResourceAllocation to false, feature is locked to true, cannot set feature gate NodeDeclaredFeatures to false, feature is locked to true]"},
		{name: "a bad value", value: "GenericWorkload=yes", err: `invalid value of GenericWorkload=yes, err: strconv.ParseBool: parsing "yes": invalid syntax`},
		{name: "no value", value: "GenericWorkload", err: "missing bool value for GenericWorkload"},
		{name: "a gate without the gate it needs", value: "TopologyAwareWorkloadScheduling=true",
			err: "TopologyAwareWorkloadScheduling is enabled, but depends on features that are disabled: [GenericWorkload]"},
		{name: "a gate others need, turned off alone", value: "PodLevelResources=false",
			err: "[InPlacePodLevelResourcesVerticalScaling is enabled, but depends on features that are disabled: [PodLevelResources], PodLevelResourcesFixDefaulting is enabled, but depends on features that are disabled: [PodLevelResources], PodLevelResourcesFixKubeletQOSClass is enabled, but depends on features that are disabled: [PodLevelResources]]"},
		{name: "another component", value: "wardle:featureA=true", err: "component not registered: wardle"},
		{name: "kube: and no prefix mixed", value: "kube:GenericWorkload=true,PodLevelResources=false",
			err: "set kube feature gates with default empty prefix or kube: prefix consistently, do not mix use"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g, err := Parse(tt.value)
			if tt.err != "" {
				if err == nil || err.Error() != tt.err {
					t.Fatalf("Parse(%q) = %v, want error %q", tt.value, err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatalf("Parse(%q): %v", tt.value, err)
			}
			for _, n := range tt.on {
				if !g.Enabled(n) {
					t.Errorf("%s is off, want on", n)
				}
			}
			for _, n := range tt.off {
				if g.Enabled(n) {
					t.Errorf("%s is on, want off", n)
				}
			}
			if diff := cmp.Diff(tt.warn, g.Warnings()); diff != "" {
				t.Errorf("warnings (-want +got):\n%s", diff)
			}
		})
	}
}

func TestFeaturesCarryTheGates(t *testing.T) {
	g, err := Parse("GenericWorkload=true,TopologyAwareWorkloadScheduling=true,TaintTolerationComparisonOperators=true,StorageCapacityScoring=false")
	if err != nil {
		t.Fatal(err)
	}
	want := schedcore.DefaultFeatures
	want.GenericWorkload = true
	want.TopologyAwareWorkloadScheduling = true
	want.TaintTolerationComparisonOperators = true
	want.StorageCapacityScoring = false
	if diff := cmp.Diff(want, g.Features()); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	// A gate the engine does not read is accepted and changes nothing it
	// reads.
	g, err = Parse("WorkloadWithJob=true,GenericWorkload=true")
	if err != nil {
		t.Fatal(err)
	}
	want = schedcore.DefaultFeatures
	want.GenericWorkload = true
	if diff := cmp.Diff(want, g.Features()); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestSetFromMap(t *testing.T) {
	g := New()
	if err := g.SetFromMap(map[string]bool{"TaintTolerationComparisonOperators": true}); err != nil {
		t.Fatal(err)
	}
	if !g.Features().TaintTolerationComparisonOperators {
		t.Error("TaintTolerationComparisonOperators is off")
	}
	if err := New().SetFromMap(map[string]bool{"NoSuchGate": true}); err == nil || err.Error() != "unrecognized feature gate: NoSuchGate" {
		t.Errorf("got %v", err)
	}
}
