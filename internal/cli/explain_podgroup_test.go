package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const (
	exGangCluster   = "../../examples/gang-cluster.yaml"
	exWorkload      = "../../examples/workload.yaml"
	exWorkloadLarge = "../../examples/workload-large.yaml"
	exGPUNode       = "../../examples/gpu-node.yaml"
)

const (
	gangKube   = "../../testdata/kubebench/gang-kube-"
	gangNative = "../../testdata/gang/native.yaml"
	gwGate     = "GenericWorkload=true"
	tasGates   = "GenericWorkload=true,TopologyAwareWorkloadScheduling=true"
)

func TestExplainPodGroupGoldenOutputs(t *testing.T) {
	tests := []struct {
		name string
		args []string
	}{
		{"explain-podgroup-mincount-table", []string{"explain", "podgroup", "pg1", "--snapshot", gangKube + "mincount.yaml", "--feature-gates", gwGate}},
		{"explain-podgroup-blocked-table", []string{"explain", "podgroup", "pg1", "--snapshot", gangKube + "blocked.yaml", "--feature-gates", gwGate}},
		{"explain-podgroup-blocked-json", []string{"explain", "podgroup", "pg1", "--snapshot", gangKube + "blocked.yaml", "--feature-gates", gwGate, "-o", "json"}},
		{"explain-podgroup-quorum-table", []string{"explain", "podgroups/pg1", "--snapshot", gangKube + "quorum.yaml", "--feature-gates", gwGate}},
		{"explain-podgroup-topology-table", []string{"explain", "podgroup", "pg1", "--snapshot", gangKube + "topology.yaml", "--feature-gates", tasGates}},
		{"explain-podgroup-topology-yaml", []string{"explain", "podgroup", "pg1", "--snapshot", gangKube + "topology.yaml", "--feature-gates", tasGates, "-o", "yaml"}},
		// Three feasible placements, scored; the state as listed (the
		// other racks' gangs pending), so rack-02 has the most room.
		{"explain-podgroup-topology-scored-table", []string{"explain", "podgroup", "rack-2", "-n", "train", "--snapshot", "../../testdata/kubebench/gang-topology-24n-seed1.yaml", "--feature-gates", tasGates}},
		{"explain-podgroup-topology-scored-json", []string{"explain", "podgroup", "rack-2", "-n", "train", "--snapshot", "../../testdata/kubebench/gang-topology-24n-seed1.yaml", "--feature-gates", tasGates, "-o", "json"}},
		{"explain-podgroup-native-workers-table", []string{"explain", "podgroup", "workers", "-n", "hpc", "--snapshot", gangNative, "--feature-gates", gwGate}},
		{"explain-podgroup-native-short-table", []string{"explain", "podgroup", "short", "-n", "hpc", "--snapshot", gangNative, "--feature-gates", gwGate}},
		// Workloads not yet created (-f): one that fits in one rack, one
		// that fits in none, with the template nodes that would make it
		// fit, and the same without the topology gate (the constraint
		// ignored, as kube-scheduler ignores it).
		{"explain-podgroup-file-table", []string{"explain", "podgroup", "-f", exWorkload, "--snapshot", exGangCluster, "--feature-gates", tasGates}},
		{"explain-podgroup-file-large-table", []string{"explain", "podgroup", "-f", exWorkloadLarge, "--snapshot", exGangCluster, "--feature-gates", tasGates, "--node-template", exGPUNode}},
		{"explain-podgroup-file-large-json", []string{"explain", "podgroup", "-f", exWorkloadLarge, "--snapshot", exGangCluster, "--feature-gates", tasGates, "--node-template", exGPUNode, "-o", "json"}},
		{"explain-podgroup-file-large-notopology-table", []string{"explain", "podgroup", "-f", exWorkloadLarge, "--snapshot", exGangCluster, "--feature-gates", gwGate}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out, stderr := run(t, "", tt.args...)
			if code != 0 {
				t.Fatalf("exit code %d: %s", code, stderr)
			}
			golden(t, tt.name, out)
		})
	}
}

// TestExplainPodGroupAgreesWithDryRun: each member's node, or its
// message, is what a dry-run of the same dump gives it (the dumps' gates
// are their kube references').
func TestExplainPodGroupAgreesWithDryRun(t *testing.T) {
	tests := []struct {
		dump, ns, group, gates string
		fits                   bool
	}{
		{gangKube + "blocked.yaml", "default", "pg1", gwGate, false},
		{gangKube + "mincount.yaml", "default", "pg1", gwGate, true},
		// kube preempts the lower-priority pods (PodGroupPostFilter),
		// then places the gang on the node they leave.
		{gangKube + "preempt.yaml", "default", "pg1", gwGate, true},
		{gangKube + "quorum.yaml", "default", "pg1", gwGate, false},
		{gangKube + "topology.yaml", "default", "pg1", tasGates, true},
		{gangNative, "hpc", "workers", gwGate, true},
		{gangNative, "hpc", "short", gwGate, false},
		{gangNative, "hpc", "basic", gwGate, true},
	}
	for _, tt := range tests {
		t.Run(tt.dump[strings.LastIndex(tt.dump, "/")+1:]+"/"+tt.group, func(t *testing.T) {
			code, out, stderr := run(t, "", "explain", "podgroup", tt.group, "-n", tt.ns, "--snapshot", tt.dump, "--feature-gates", tt.gates, "-o", "json")
			if code != 0 {
				t.Fatalf("explain: exit code %d: %s", code, stderr)
			}
			var ex struct {
				Fits    bool   `json:"fits"`
				Message string `json:"message"`
				Members []struct {
					Pod, Node, Message string
				} `json:"members"`
			}
			if err := json.Unmarshal([]byte(out), &ex); err != nil {
				t.Fatal(err)
			}
			if ex.Fits != tt.fits || ex.Message == "" || len(ex.Members) == 0 {
				t.Fatalf("fits %v (want %v), message %q, %d members", ex.Fits, tt.fits, ex.Message, len(ex.Members))
			}
			code, out, stderr = run(t, "", "dryrun", "--snapshot", tt.dump, "--feature-gates", tt.gates, "-o", "json")
			if code != 0 {
				t.Fatalf("dryrun: exit code %d: %s", code, stderr)
			}
			var dr struct {
				Placements    []struct{ Pod, Node string }
				Unschedulable []struct{ Pod, Message string }
			}
			if err := json.Unmarshal([]byte(out), &dr); err != nil {
				t.Fatal(err)
			}
			nodes, msgs := map[string]string{}, map[string]string{}
			for _, p := range dr.Placements {
				nodes[p.Pod] = p.Node
			}
			for _, u := range dr.Unschedulable {
				msgs[u.Pod] = u.Message
			}
			for _, m := range ex.Members {
				if m.Node != nodes[m.Pod] || m.Message != msgs[m.Pod] {
					t.Errorf("%s: explain gives node %q message %q, the dry-run node %q message %q", m.Pod, m.Node, m.Message, nodes[m.Pod], msgs[m.Pod])
				}
			}
		})
	}
}

func TestExplainPodGroupBadInput(t *testing.T) {
	allBound := writeFile(t, t.TempDir(), "bound.yaml", `apiVersion: v1
kind: List
items:
- {apiVersion: v1, kind: Node, metadata: {name: node-a}, status: {allocatable: {cpu: "4", memory: 16Gi, pods: "110"}}}
- {apiVersion: scheduling.k8s.io/v1beta1, kind: PodGroup, metadata: {name: g, namespace: default}, spec: {schedulingPolicy: {gang: {minCount: 1}}}}
- {apiVersion: v1, kind: Pod, metadata: {name: p, namespace: default}, spec: {nodeName: node-a, containers: [{name: c}], schedulingGroup: {podGroupName: g}}, status: {phase: Running}}
`)
	tests := []struct {
		name    string
		args    []string
		wantErr string
	}{
		{"a PodGroup that is not in the dump", []string{"explain", "podgroup", "nope", "--snapshot", gangKube + "blocked.yaml", "--feature-gates", gwGate},
			`podgroups.scheduling.k8s.io "nope" not found in namespace "default"`},
		{"a PodGroup in another namespace", []string{"explain", "podgroup", "pg1", "--snapshot", gangKube + "blocked.yaml", "--feature-gates", gwGate, "-n", "other"},
			`podgroups.scheduling.k8s.io "pg1" not found in namespace "other"`},
		{"a PodGroup without pending members", []string{"explain", "podgroup", "g", "--snapshot", allBound, "--feature-gates", gwGate},
			"podgroup default/g: no pending members (1 members known, all bound)"},
		{"a Coscheduling PodGroup", []string{"explain", "podgroup", "ok", "-n", "jobs", "--snapshot", "../../testdata/gang/all-or-nothing.yaml", "--feature-gates", gwGate},
			"podgroup jobs/ok is a scheduler-plugins PodGroup (scheduling.x-k8s.io/v1alpha1, the Coscheduling plugin's), not a scheduling.k8s.io/v1beta1 one"},
		{"the gate off", []string{"explain", "podgroup", "pg1", "--snapshot", gangKube + "blocked.yaml"},
			"the GenericWorkload feature gate is off: kube-scheduler schedules the members of a PodGroup one by one"},
		{"no name", []string{"explain", "podgroup", "--snapshot", gangKube + "blocked.yaml"}, "one PodGroup name, or -f WORKLOAD.yaml, is required"},
		{"two names", []string{"explain", "podgroup", "a", "b", "--snapshot", gangKube + "blocked.yaml"}, "one PodGroup name, or -f WORKLOAD.yaml, is required"},
		{"a pod's flag", []string{"explain", "podgroup", "pg1", "--at-turn", "--snapshot", gangKube + "blocked.yaml"}, "explain podgroup takes none of"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out, stderr := run(t, "", tt.args...)
			if code != 2 {
				t.Fatalf("exit code %d, want 2 (stderr %q)", code, stderr)
			}
			if out != "" {
				t.Errorf("stdout not empty: %q", out)
			}
			if !strings.Contains(stderr, tt.wantErr) || strings.Count(strings.TrimSpace(stderr), "\n") > 0 {
				t.Errorf("stderr %q, want one line with %q", stderr, tt.wantErr)
			}
		})
	}
}

// TestExplainPodGroupFileIsTheDumpWithIt: explain podgroup -f gives each
// member the node (or message) that explain podgroup NAME and a dry run
// give it on a dump of the cluster with the file's objects added, and
// the JSON carries the fields the issue asks for.
func TestExplainPodGroupFileIsTheDumpWithIt(t *testing.T) {
	tests := []struct {
		name, file, group, gates string
		fits                     bool
	}{
		{"a gang in one rack", exWorkload, "train-workers", tasGates, true},
		{"a gang no rack holds", exWorkloadLarge, "train-large-workers", tasGates, false},
		{"the same gang over both racks without the topology gate", exWorkloadLarge, "train-large-workers", gwGate, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out, stderr := run(t, "", "explain", "podgroup", "-f", tt.file, "--snapshot", exGangCluster, "--feature-gates", tt.gates, "-o", "json")
			if code != 0 {
				t.Fatalf("explain -f: exit code %d: %s", code, stderr)
			}
			var ex struct {
				Fits    *bool   `json:"fits"`
				Message *string `json:"message"`
				Members []struct {
					Pod     string  `json:"pod"`
					Node    *string `json:"node"`
					Message string  `json:"message"`
				} `json:"members"`
				Placements []struct {
					Name      string
					Feasible  bool
					Shortfall []struct{ Resource string }
				} `json:"placements"`
				Reasons []struct{ Message string } `json:"reasons"`
			}
			if err := json.Unmarshal([]byte(out), &ex); err != nil {
				t.Fatal(err)
			}
			if ex.Fits == nil || ex.Message == nil || *ex.Fits != tt.fits || len(ex.Members) == 0 {
				t.Fatalf("fits %v (want %v), message %v, %d members", ex.Fits, tt.fits, ex.Message, len(ex.Members))
			}
			for _, m := range ex.Members {
				if m.Node == nil {
					t.Errorf("member %s: no \"node\" key (want a node or \"\")", m.Pod)
				}
			}
			if !tt.fits {
				if len(ex.Reasons) == 0 {
					t.Errorf("a group that does not fit has no reasons")
				}
				for _, p := range ex.Placements {
					if !p.Feasible && len(p.Shortfall) == 0 {
						t.Errorf("placement %s: infeasible with no shortfall", p.Name)
					}
				}
			}

			// The same objects in the dump: explain by name and the dry run.
			dump := filepath.Join(t.TempDir(), "with.yaml")
			cluster, err := os.ReadFile(exGangCluster)
			if err != nil {
				t.Fatal(err)
			}
			file, err := os.ReadFile(tt.file)
			if err != nil {
				t.Fatal(err)
			}
			var pods strings.Builder
			for i := range ex.Members {
				fmt.Fprintf(&pods, "---\napiVersion: v1\nkind: Pod\nmetadata: {name: %s, namespace: ml}\nspec:\n  schedulingGroup: {podGroupName: %s}\n  containers:\n  - name: worker\n    image: trainer\n    resources:\n      requests: {cpu: \"8\", memory: 64Gi, nvidia.com/gpu: \"4\"}\n      limits: {nvidia.com/gpu: \"4\"}\n",
					strings.TrimPrefix(ex.Members[i].Pod, "ml/"), tt.group)
			}
			// The Job is left out: its pods are given as the file made them.
			objs := strings.Split(string(file), "---\n")
			kept := []string{string(cluster)}
			for _, o := range objs {
				if !strings.Contains(o, "kind: Job") {
					kept = append(kept, o)
				}
			}
			if err := os.WriteFile(dump, []byte(strings.Join(kept, "---\n")+pods.String()), 0o600); err != nil {
				t.Fatal(err)
			}
			code, byName, stderr := run(t, "", "explain", "podgroup", tt.group, "-n", "ml", "--snapshot", dump, "--feature-gates", tt.gates, "-o", "json")
			if code != 0 {
				t.Fatalf("explain NAME: exit code %d: %s", code, stderr)
			}
			if byName != out {
				t.Errorf("explain -f and explain NAME on the dump with the objects differ:\n-f:\n%s\nNAME:\n%s", out, byName)
			}
			code, dry, stderr := run(t, "", "dryrun", "--snapshot", dump, "--feature-gates", tt.gates, "-o", "json")
			if code != 0 {
				t.Fatalf("dryrun: exit code %d: %s", code, stderr)
			}
			var dr struct {
				Placements []struct{ Pod, Node string }
			}
			if err := json.Unmarshal([]byte(dry), &dr); err != nil {
				t.Fatal(err)
			}
			nodes := map[string]string{}
			for _, p := range dr.Placements {
				nodes[p.Pod] = p.Node
			}
			for _, m := range ex.Members {
				if *m.Node != nodes[m.Pod] {
					t.Errorf("%s: explain -f gives node %q, the dry run %q", m.Pod, *m.Node, nodes[m.Pod])
				}
			}
		})
	}
}

func TestExplainPodGroupFileBadInput(t *testing.T) {
	dir := t.TempDir()
	coscheduling := writeFile(t, dir, "cosched.yaml", "apiVersion: scheduling.x-k8s.io/v1alpha1\nkind: PodGroup\nmetadata: {name: g, namespace: ml}\nspec: {minMember: 1}\n---\napiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: ml, labels: {scheduling.x-k8s.io/pod-group: g}}\nspec: {containers: [{name: c, image: x}]}\n")
	missing := writeFile(t, dir, "missing.yaml", "apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: ml}\nspec: {schedulingGroup: {podGroupName: nope}, containers: [{name: c, image: x}]}\n")
	v1alpha1 := writeFile(t, dir, "alpha.yaml", "apiVersion: scheduling.k8s.io/v1alpha1\nkind: PodGroup\nmetadata: {name: g, namespace: ml}\nspec: {schedulingPolicy: {gang: {minCount: 1}}}\n")
	above := writeFile(t, dir, "above.yaml", "apiVersion: scheduling.k8s.io/v1beta1\nkind: PodGroup\nmetadata: {name: g, namespace: ml}\nspec: {schedulingPolicy: {gang: {minCount: 2}}}\n---\napiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: ml}\nspec: {schedulingGroup: {podGroupName: g}, containers: [{name: c, image: x}]}\n")
	two := writeFile(t, dir, "two.yaml", "apiVersion: scheduling.k8s.io/v1beta1\nkind: PodGroup\nmetadata: {name: a, namespace: ml}\nspec: {schedulingPolicy: {basic: {}}}\n---\napiVersion: scheduling.k8s.io/v1beta1\nkind: PodGroup\nmetadata: {name: b, namespace: ml}\nspec: {schedulingPolicy: {basic: {}}}\n---\napiVersion: v1\nkind: Pod\nmetadata: {name: pa, namespace: ml}\nspec: {schedulingGroup: {podGroupName: a}, containers: [{name: c, image: x}]}\n---\napiVersion: v1\nkind: Pod\nmetadata: {name: pb, namespace: ml}\nspec: {schedulingGroup: {podGroupName: b}, containers: [{name: c, image: x}]}\n")
	tests := []struct {
		name    string
		args    []string
		wantErr string
	}{
		{"the gate off", []string{"explain", "podgroup", "-f", exWorkload, "--snapshot", exGangCluster}, "the GenericWorkload feature gate is off"},
		{"two groups and no name", []string{"explain", "podgroup", "-f", two, "--snapshot", exGangCluster, "--feature-gates", gwGate}, "2 PodGroups (a, b): name the one to explain"},
		{"a Coscheduling PodGroup", []string{"explain", "podgroup", "-f", coscheduling, "--snapshot", exGangCluster, "--feature-gates", gwGate}, "is a scheduler-plugins PodGroup"},
		{"a pod naming a missing group", []string{"explain", "podgroup", "-f", missing, "--snapshot", exGangCluster, "--feature-gates", gwGate}, "names PodGroup ml/nope, which is not among the specs"},
		{"a v1alpha1 PodGroup", []string{"explain", "podgroup", "-f", v1alpha1, "--snapshot", exGangCluster, "--feature-gates", gwGate}, "apiVersion scheduling.k8s.io/v1alpha1 is not read"},
		{"minCount above the members", []string{"explain", "podgroup", "-f", above, "--snapshot", exGangCluster, "--feature-gates", gwGate}, "minCount 2 is above its 1 pods among the specs"},
		{"a name the file lacks", []string{"explain", "podgroup", "other", "-f", exWorkload, "--snapshot", exGangCluster, "--feature-gates", gwGate}, `no PodGroup "other" (it has train-workers)`},
		{"a pod's flag", []string{"explain", "podgroup", "-f", exWorkload, "--node", "gpu-a-1", "--snapshot", exGangCluster, "--feature-gates", gwGate}, "explain podgroup takes none of"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out, stderr := run(t, "", tt.args...)
			if code != 2 {
				t.Fatalf("exit code %d, want 2 (stderr %q)", code, stderr)
			}
			if out != "" {
				t.Errorf("stdout not empty: %q", out)
			}
			if !strings.Contains(stderr, tt.wantErr) || strings.Count(strings.TrimSpace(stderr), "\n") > 0 {
				t.Errorf("stderr %q, want one line with %q", stderr, tt.wantErr)
			}
		})
	}
}
