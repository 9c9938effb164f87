package snapshot

import (
	"errors"
	"flag"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	schedulingv1beta1 "k8s.io/api/scheduling/v1beta1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

var update = flag.Bool("update", false, "rewrite golden files")

// testWorkloads is a Workload and two PodGroups, valid and defaulted.
func testWorkloads() Workloads {
	single := &schedulingv1beta1.DisruptionMode{Single: &schedulingv1beta1.SingleDisruptionMode{}}
	return Workloads{
		Workloads: []*schedulingv1beta1.Workload{{
			ObjectMeta: metav1.ObjectMeta{Name: "w", Namespace: "ns"},
			Spec: schedulingv1beta1.WorkloadSpec{PodGroupTemplates: []schedulingv1beta1.PodGroupTemplate{{
				Name: "t", SchedulingPolicy: schedulingv1beta1.PodGroupSchedulingPolicy{Gang: &schedulingv1beta1.GangSchedulingPolicy{MinCount: 2}},
			}}},
		}},
		PodGroups: []*schedulingv1beta1.PodGroup{
			{ObjectMeta: metav1.ObjectMeta{Name: "g", Namespace: "ns"}, Spec: schedulingv1beta1.PodGroupSpec{
				WorkloadRef:      &schedulingv1beta1.WorkloadReference{WorkloadName: "w", TemplateName: "t"},
				SchedulingPolicy: schedulingv1beta1.PodGroupSchedulingPolicy{Gang: &schedulingv1beta1.GangSchedulingPolicy{MinCount: 2}},
				DisruptionMode:   single,
			}},
			{ObjectMeta: metav1.ObjectMeta{Name: "b", Namespace: "ns"}, Spec: schedulingv1beta1.PodGroupSpec{
				SchedulingPolicy: schedulingv1beta1.PodGroupSchedulingPolicy{Basic: &schedulingv1beta1.BasicSchedulingPolicy{}},
				DisruptionMode:   single,
			}},
		},
	}
}

// TestWorkloadAPIGolden loads testdata/workloads.yaml and writes it back:
// the Workload API objects are typed and defaulted (the basic group gains
// disruptionMode single), scheduler-plugins' PodGroup stays as it was, and
// the dump matches testdata/workloads.golden.yaml (-update rewrites it).
func TestWorkloadAPIGolden(t *testing.T) {
	for _, typed := range []bool{true, false} {
		c, err := loadFile("testdata/workloads.yaml", typed)
		if err != nil {
			t.Fatal(err)
		}
		if len(c.Warnings) > 0 {
			t.Errorf("warnings: %v", c.Warnings)
		}
		got := map[string]string{}
		for _, pg := range c.Workloads.PodGroups {
			got[pg.Name] = disruption(pg.Spec.DisruptionMode)
		}
		want := map[string]string{"train-workers": "all", "train-driver": "single"}
		if d := cmp.Diff(want, got); d != "" {
			t.Errorf("typed path %v: disruption modes (-want +got):\n%s", typed, d)
		}
		if n := len(c.Workloads.Workloads); n != 1 || len(c.Others) != 1 || c.Others[0].GetAPIVersion() != "scheduling.x-k8s.io/v1alpha1" {
			t.Errorf("typed path %v: %d Workloads, others %v", typed, n, c.Others)
		}
		b, err := c.Marshal("yaml")
		if err != nil {
			t.Fatal(err)
		}
		const golden = "testdata/workloads.golden.yaml"
		if *update && typed {
			if err := os.WriteFile(golden, b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		want2, err := os.ReadFile(golden)
		if err != nil {
			t.Fatal(err)
		}
		if d := cmp.Diff(string(want2), string(b)); d != "" {
			t.Errorf("typed path %v: dump (-golden +got):\n%s", typed, d)
		}
	}
}

func disruption(m *schedulingv1beta1.DisruptionMode) string {
	switch {
	case m == nil:
		return "unset"
	case m.All != nil:
		return "all"
	case m.Single != nil:
		return "single"
	}
	return "empty"
}

// TestWorkloadAPIBadInput: an object the API server refuses gets its
// message, one line with the file and item, and ErrInvalid (exit 2).
func TestWorkloadAPIBadInput(t *testing.T) {
	pg := func(spec string) string {
		return "apiVersion: scheduling.k8s.io/v1beta1\nkind: PodGroup\nmetadata: {name: g, namespace: ns}\nspec: " + spec + "\n"
	}
	wl := func(spec string) string {
		return "apiVersion: scheduling.k8s.io/v1beta1\nkind: Workload\nmetadata: {name: w, namespace: ns}\nspec: " + spec + "\n"
	}
	tests := []struct {
		name, doc, want string
	}{
		{"a v1alpha2 PodGroup (Kubernetes 1.36) is not read",
			"apiVersion: scheduling.k8s.io/v1alpha2\nkind: PodGroup\nmetadata: {name: g, namespace: ns}\nspec: {}\n",
			`f.yaml:1: PodGroup ns/g: apiVersion scheduling.k8s.io/v1alpha2 is not read: kube-scheduler v1.37 schedules PodGroups of scheduling.k8s.io/v1beta1 (kubectl get podgroups.v1beta1.scheduling.k8s.io -o yaml)`},
		{"a v1alpha1 Workload (Kubernetes 1.35) is not read",
			"apiVersion: scheduling.k8s.io/v1alpha1\nkind: Workload\nmetadata: {name: w}\nspec: {}\n",
			`f.yaml:1: Workload w: apiVersion scheduling.k8s.io/v1alpha1 is not read: kube-scheduler v1.37 schedules Workloads of scheduling.k8s.io/v1beta1 (kubectl get workloads.v1beta1.scheduling.k8s.io -o yaml)`},
		{"a PodGroup without a policy", pg("{}"),
			"f.yaml:1: The PodGroup \"g\" is invalid: spec.schedulingPolicy: Invalid value: \"\": must specify one of: `basic`, `gang`"},
		{"a PodGroup with both policies", pg("{schedulingPolicy: {basic: {}, gang: {minCount: 2}}}"),
			"f.yaml:1: The PodGroup \"g\" is invalid: spec.schedulingPolicy: Invalid value: \"{basic, gang}\": must specify exactly one of: `basic`, `gang`"},
		{"a gang of minCount 0", pg("{schedulingPolicy: {gang: {minCount: 0}}}"),
			`f.yaml:1: The PodGroup "g" is invalid: spec.schedulingPolicy.gang.minCount: Required value`},
		{"a gang of negative minCount", pg("{schedulingPolicy: {gang: {minCount: -1}}}"),
			`f.yaml:1: The PodGroup "g" is invalid: spec.schedulingPolicy.gang.minCount: Invalid value: -1: must be greater than or equal to 1`},
		{"a topology key that is no label key", pg("{schedulingPolicy: {gang: {minCount: 2}}, schedulingConstraints: {topology: [{key: 'rack name'}]}}"),
			`f.yaml:1: The PodGroup "g" is invalid: spec.schedulingConstraints.topology[0].key: Invalid value: "rack name": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')`},
		{"two topology constraints", pg("{schedulingPolicy: {gang: {minCount: 2}}, schedulingConstraints: {topology: [{key: a}, {key: b}]}}"),
			`f.yaml:1: The PodGroup "g" is invalid: spec.schedulingConstraints.topology: Too many: 2: must have at most 1 item`},
		{"both disruption modes", pg("{schedulingPolicy: {basic: {}}, disruptionMode: {single: {}, all: {}}}"),
			"f.yaml:1: The PodGroup \"g\" is invalid: spec.disruptionMode: Invalid value: \"{single, all}\": must specify exactly one of: `single`, `all`"},
		{"a parent composite group without workloadRef", pg("{schedulingPolicy: {basic: {}}, parentCompositePodGroupName: p}"),
			`f.yaml:1: The PodGroup "g" is invalid: spec.workloadRef: Required value: must be set when parentCompositePodGroupName is set`},
		{"a Workload without templates", wl("{}"),
			"f.yaml:1: The Workload \"w\" is invalid: spec: Invalid value: \"\": must specify one of: `podGroupTemplates`, `compositePodGroupTemplates`"},
		{"a Workload with a template named twice", wl("{podGroupTemplates: [{name: t, schedulingPolicy: {basic: {}}}, {name: t, schedulingPolicy: {basic: {}}}]}"),
			`f.yaml:1: The Workload "w" is invalid: spec.podGroupTemplates[1]: Duplicate value: "t"`},
		{"a Workload whose templates have two priorities", wl("{podGroupTemplates: [{name: a, schedulingPolicy: {basic: {}}, priority: 1}, {name: b, schedulingPolicy: {basic: {}}, priority: 2}]}"),
			`f.yaml:1: The Workload "w" is invalid: spec: Invalid value: null: detected multiple priority configurations`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, typed := range []bool{true, false} {
				c := &Cluster{}
				err := addData(c, typed, "f.yaml", []byte(tt.doc))
				if err == nil {
					t.Fatalf("typed path %v: loaded: %+v", typed, c.Workloads)
				}
				if !errors.Is(err, ErrInvalid) || strings.Contains(err.Error(), "\n") {
					t.Errorf("typed path %v: not one line of ErrInvalid: %v", typed, err)
				}
				if d := cmp.Diff(tt.want, err.Error()); d != "" {
					t.Errorf("typed path %v: (-want +got):\n%s", typed, d)
				}
			}
		})
	}
}

// TestWorkloadAPIDefaultsKeepWhatIsSet: a PodGroup's disruptionMode is
// defaulted only when unset; priority and constraints pass through.
func TestWorkloadAPIDefaultsKeepWhatIsSet(t *testing.T) {
	c := &Cluster{}
	doc := "apiVersion: scheduling.k8s.io/v1beta1\nkind: PodGroup\nmetadata: {name: g}\n" +
		"spec: {schedulingPolicy: {gang: {minCount: 3}}, disruptionMode: {all: {}}, priority: 7, schedulingConstraints: {topology: [{key: zone}]}}\n"
	if err := c.AddData("f.yaml", []byte(doc)); err != nil {
		t.Fatal(err)
	}
	want := &schedulingv1beta1.PodGroup{
		TypeMeta:   metav1.TypeMeta{APIVersion: "scheduling.k8s.io/v1beta1", Kind: "PodGroup"},
		ObjectMeta: metav1.ObjectMeta{Name: "g", Namespace: "default"},
		Spec: schedulingv1beta1.PodGroupSpec{
			SchedulingPolicy:      schedulingv1beta1.PodGroupSchedulingPolicy{Gang: &schedulingv1beta1.GangSchedulingPolicy{MinCount: 3}},
			SchedulingConstraints: &schedulingv1beta1.PodGroupSchedulingConstraints{Topology: []schedulingv1beta1.TopologyConstraint{{Key: "zone"}}},
			DisruptionMode:        &schedulingv1beta1.DisruptionMode{All: &schedulingv1beta1.AllDisruptionMode{}},
			Priority:              ptr.To[int32](7),
		},
	}
	if d := cmp.Diff([]*schedulingv1beta1.PodGroup{want}, c.Workloads.PodGroups); d != "" {
		t.Errorf("(-want +got):\n%s", d)
	}
}
