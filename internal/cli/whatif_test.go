package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kubectl-sched/kubectl-sched/internal/report"
)

const (
	whatifDir = "../../testdata/kubebench/whatif/"
	rules     = "../../examples/maintenance.yaml"
	example   = "../../examples/cluster.yaml"
	webSpec   = whatifDir + "web.yaml"
	template  = whatifDir + "m6i.yaml"
	smallSpec = whatifDir + "small.yaml"
)

func writeFile(t *testing.T, dir, name, content string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestGoldenWhatIfOutputs(t *testing.T) {
	tests := []struct {
		name string
		args []string
		code int
	}{
		{"capacity-web-table", []string{"capacity", "-f", webSpec, "--snapshot", example}, 0},
		{"capacity-web-wide", []string{"capacity", "-f", webSpec, "--snapshot", rules, "-o", "wide"}, 0},
		{"capacity-replicas-short", []string{"capacity", "-f", webSpec, "--snapshot", rules, "--replicas", "40"}, 3},
		{"capacity-min-nodes", []string{"capacity", "-f", webSpec, "--snapshot", rules, "--replicas", "40", "--min-nodes", "--node-template", template}, 0},
		// Whole gangs through kube's pod-group cycle (GenericWorkload),
		// in one rack with TopologyAwareWorkloadScheduling, and the
		// template nodes that make a third fit.
		{"capacity-workload-table", []string{"capacity", "-f", exWorkload, "--snapshot", exGangCluster, "--feature-gates", gwGate}, 0},
		{"capacity-workload-topology-table", []string{"capacity", "-f", exWorkload, "--snapshot", exGangCluster, "--feature-gates", tasGates}, 0},
		{"capacity-workload-topology-json", []string{"capacity", "-f", exWorkload, "--snapshot", exGangCluster, "--feature-gates", tasGates, "-o", "json"}, 0},
		{"capacity-workload-min-nodes", []string{"capacity", "-f", exWorkload, "--snapshot", exGangCluster, "--feature-gates", tasGates, "--replicas", "3", "--min-nodes", "--node-template", exGPUNode}, 0},
		{"drain-rules-table", []string{"drain", "n1", "n2", "--snapshot", rules}, 3},
		{"drain-rules-force-json", []string{"drain", "n1", "n2", "--snapshot", rules, "--force", "-o", "json"}, 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out, stderr := run(t, "", tt.args...)
			if code != tt.code {
				t.Fatalf("exit code %d, want %d (stderr %q)", code, tt.code, stderr)
			}
			golden(t, tt.name, out)
		})
	}
}

// The JSON documents are versioned and carry what the issue asks for.
func TestWhatIfJSONIsVersioned(t *testing.T) {
	_, out, _ := run(t, "", "capacity", "-f", webSpec, "--snapshot", example, "-o", "json")
	var c report.Capacity
	if err := json.Unmarshal([]byte(out), &c); err != nil {
		t.Fatal(err)
	}
	if c.APIVersion != report.CapacityAPIVersion || c.Kind != "Capacity" || len(c.Specs) != 1 || c.Specs[0].Name != "web/checkout" ||
		c.Specs[0].Count == 0 || len(c.Specs[0].Nodes) == 0 || !strings.HasPrefix(c.Specs[0].StoppedBy, "0/33 nodes are available: ") {
		t.Errorf("capacity JSON = %+v", c)
	}
	_, out, _ = run(t, "", "drain", "n1", "--snapshot", rules, "-o", "json")
	var d report.Drain
	if err := json.Unmarshal([]byte(out), &d); err != nil {
		t.Fatal(err)
	}
	if d.APIVersion != report.CapacityAPIVersion || d.Kind != "Drain" || len(d.Moves) == 0 || d.Moves[0].From != "n1" {
		t.Errorf("drain JSON = %+v", d)
	}
}

func TestWhatIfExitCodes(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want int
	}{
		{"capacity without --replicas says how many", []string{"capacity", "-f", webSpec, "--snapshot", rules}, 0},
		{"capacity with --replicas that fit", []string{"capacity", "-f", webSpec, "--snapshot", rules, "--replicas", "2"}, 0},
		{"capacity with --replicas that do not fit", []string{"capacity", "-f", webSpec, "--snapshot", rules, "--replicas", "500"}, 3},
		{"a drain whose pods all find a node", []string{"drain", "n4", "--snapshot", rules}, 0},
		{"a drain leaving pods pending", []string{"drain", "n1", "--snapshot", rules}, 3},
		{"a drain kubectl refuses", []string{"drain", "n2", "--snapshot", rules}, 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out, stderr := run(t, "", tt.args...)
			if code != tt.want {
				t.Errorf("exit code %d, want %d (stderr %q)", code, tt.want, stderr)
			}
			if out == "" {
				t.Error("no report on stdout")
			}
			if strings.Contains(stderr, "error") {
				t.Errorf("stderr = %q, want no error", stderr)
			}
		})
	}
}

func TestWhatIfBadInput(t *testing.T) {
	dir := t.TempDir()
	cm := writeFile(t, dir, "cm.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndata: {a: b}\n")
	noContainers := writeFile(t, dir, "nc.yaml", "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d}\nspec: {template: {spec: {}}}\n")
	orphan := writeFile(t, dir, "orphan.yaml", "apiVersion: v1\nkind: Pod\nmetadata: {name: p, labels: {scheduling.x-k8s.io/pod-group: g}}\nspec: {containers: [{name: c}]}\n")
	lonely := writeFile(t, dir, "lonely.yaml", "apiVersion: scheduling.x-k8s.io/v1alpha1\nkind: PodGroup\nmetadata: {name: g}\nspec: {minMember: 2}\n")
	malformed := writeFile(t, dir, "bad.yaml", "apiVersion: v1\nkind: Pod\nmetadata: [\n")
	badQty := writeFile(t, dir, "qty.yaml", "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d}\nspec: {template: {spec: {containers: [{name: c, resources: {requests: {cpu: 4x}}}]}}}\n")
	noAlloc := writeFile(t, dir, "noalloc.yaml", "apiVersion: v1\nkind: Node\nmetadata: {name: t}\nstatus: {}\n")
	noPods := writeFile(t, dir, "nopods.yaml", "apiVersion: v1\nkind: Node\nmetadata: {name: t}\nstatus: {allocatable: {cpu: '4', memory: 8Gi}}\n")
	twoNodes := writeFile(t, dir, "two.yaml", "apiVersion: v1\nkind: List\nitems:\n- {apiVersion: v1, kind: Node, metadata: {name: a}}\n- {apiVersion: v1, kind: Node, metadata: {name: b}}\n")
	unknownPlugin := writeFile(t, dir, "cfg.yaml", "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\nprofiles:\n- schedulerName: default-scheduler\n  plugins:\n    filter:\n      enabled: [{name: NoSuchPlugin}]\n")
	badArgs := writeFile(t, dir, "args.yaml", "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\nprofiles:\n- pluginConfig:\n  - name: NodeResourcesFit\n    args: {scoringStrategy: {type: Foo}}\n")
	otherScheduler := writeFile(t, dir, "other.yaml", "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: {schedulerName: other, containers: [{name: c}]}\n")
	gang := writeFile(t, dir, "gang.yaml", "apiVersion: scheduling.x-k8s.io/v1alpha1\nkind: PodGroup\nmetadata: {name: g}\nspec: {minMember: 1}\n---\napiVersion: v1\nkind: Pod\nmetadata: {name: p, labels: {scheduling.x-k8s.io/pod-group: g}}\nspec: {containers: [{name: c}]}\n")
	nativeAbove := writeFile(t, dir, "above.yaml", "apiVersion: scheduling.k8s.io/v1beta1\nkind: PodGroup\nmetadata: {name: g}\nspec: {schedulingPolicy: {gang: {minCount: 2}}}\n---\napiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: {schedulingGroup: {podGroupName: g}, containers: [{name: c}]}\n")
	nativeAlpha := writeFile(t, dir, "alpha.yaml", "apiVersion: scheduling.k8s.io/v1alpha1\nkind: PodGroup\nmetadata: {name: g}\nspec: {schedulingPolicy: {gang: {minCount: 1}}}\n")
	tests := []struct {
		name    string
		args    []string
		wantErr string
	}{
		{"a spec that is not a pod, a pod template or a gang", []string{"capacity", "-f", cm, "--snapshot", example}, "kind v1/ConfigMap"},
		{"pod-group cycle: minCount above the members", []string{"capacity", "-f", nativeAbove, "--snapshot", example, "--feature-gates", gwGate}, "minCount 2 is above its 1 pods among the specs: kube-scheduler never schedules it"},
		{"pod-group cycle: a v1alpha1 PodGroup", []string{"capacity", "-f", nativeAlpha, "--snapshot", example, "--feature-gates", gwGate}, "apiVersion scheduling.k8s.io/v1alpha1 is not read"},
		{"a Workload with GenericWorkload off", []string{"capacity", "-f", exWorkload, "--snapshot", exGangCluster}, "the Workload API needs the GenericWorkload feature gate"},
		{"a template without containers", []string{"capacity", "-f", noContainers, "--snapshot", example}, "spec.template.spec.containers: required"},
		{"a pod naming a PodGroup that is not given", []string{"capacity", "-f", orphan, "--snapshot", example}, "names PodGroup default/g, which is not among the specs"},
		{"a PodGroup without pods", []string{"capacity", "-f", lonely, "--snapshot", example}, "no pods of the group among the specs"},
		{"a gang whose profile has no Coscheduling", []string{"capacity", "-f", gang, "--snapshot", example}, "a gang needs the Coscheduling plugin"},
		{"malformed YAML names the file and line", []string{"capacity", "-f", malformed, "--snapshot", example}, malformed + ":3: malformed YAML"},
		{"a bad quantity in a template names the field", []string{"capacity", "-f", badQty, "--snapshot", example}, `spec.template.spec.containers[0].resources.requests.cpu: invalid quantity "4x"`},
		{"a node template without allocatable", []string{"capacity", "-f", webSpec, "--snapshot", example, "--add-nodes", "2", "--node-template", noAlloc}, "status.allocatable: required"},
		{"a node template without pods", []string{"capacity", "-f", webSpec, "--snapshot", example, "--add-nodes", "2", "--node-template", noPods}, "status.allocatable.pods: required"},
		{"a node template of two nodes", []string{"capacity", "-f", webSpec, "--snapshot", example, "--add-nodes", "2", "--node-template", twoNodes}, "exactly one v1 Node, found 2 objects"},
		{"--add-nodes without a template", []string{"capacity", "-f", webSpec, "--snapshot", example, "--add-nodes", "2"}, "need --node-template"},
		{"--min-nodes without --replicas", []string{"capacity", "-f", webSpec, "--snapshot", example, "--min-nodes", "--node-template", template}, "--min-nodes needs --replicas"},
		{"--replicas that do not match the specs", []string{"capacity", "-f", webSpec, "-f", smallSpec, "--snapshot", example, "--replicas", "1,2,3"}, "3 values for 2 specs"},
		{"negative --max", []string{"capacity", "-f", webSpec, "--snapshot", example, "--max", "-1"}, "--max: must not be negative"},
		{"a --group-by that is not a label key", []string{"capacity", "-f", webSpec, "--snapshot", example, "--group-by", "a b"}, `--group-by: "a b" is not a label key`},
		{"no spec", []string{"capacity", "--snapshot", example}, "-f/--filename is required"},
		{"a node that does not exist", []string{"drain", "n1", "nope", "--snapshot", rules}, `node "nope" not found`},
		{"a selector matching no node", []string{"drain", "-l", "pool=none", "--snapshot", rules}, `no node matches the selector "pool=none"`},
		{"a malformed selector", []string{"drain", "-l", "a b", "--snapshot", rules}, "-l/--selector"},
		{"names and a selector", []string{"drain", "n1", "-l", "a=b", "--snapshot", rules}, "not both"},
		{"nothing to drain", []string{"drain", "--snapshot", rules}, "name the nodes to drain"},
		{"a malformed snapshot", []string{"drain", "n1", "--snapshot", malformed}, malformed + ":3: malformed YAML"},
		{"capacity: an unknown plugin names the config file", []string{"capacity", "-f", webSpec, "--snapshot", example, "--config", unknownPlugin}, unknownPlugin + ": "},
		{"drain: invalid plugin args name the field", []string{"drain", "n1", "--snapshot", rules, "--config", badArgs}, "scoringStrategy.type"},
		{"a spec of a scheduler that is not a profile", []string{"capacity", "-f", otherScheduler, "--snapshot", example}, `schedulerName "other" is not a profile`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out, stderr := run(t, "", tt.args...)
			if code != 2 {
				t.Errorf("exit code = %d, want 2 (stderr %q)", code, stderr)
			}
			if out != "" {
				t.Errorf("stdout not empty: %q", out)
			}
			if strings.Count(stderr, "\n") != 1 || !strings.HasPrefix(stderr, "error: ") || !strings.Contains(stderr, tt.wantErr) {
				t.Errorf("stderr = %q, want one line containing %q", stderr, tt.wantErr)
			}
		})
	}
}
