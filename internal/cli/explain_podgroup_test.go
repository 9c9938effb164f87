package cli

import (
	"encoding/json"
	"strings"
	"testing"
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
		{"no name", []string{"explain", "podgroup", "--snapshot", gangKube + "blocked.yaml"}, "one PodGroup name is required"},
		{"two names", []string{"explain", "podgroup", "a", "b", "--snapshot", gangKube + "blocked.yaml"}, "one PodGroup name is required"},
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
