package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const (
	mixedSmall = "../../testdata/conformance/mixed-small/snapshot.json"
	draCluster = "../../examples/gpu-cluster.yaml"
	draSmall   = "../../testdata/conformance/dra-small/snapshot.json"
)

func TestExplainGoldenOutputs(t *testing.T) {
	tests := []struct {
		name string
		args []string
	}{
		{"explain-small-unschedulable-table", []string{"explain", "pod", "batch", "-n", "shop", "--snapshot", small}},
		{"explain-small-unschedulable-all-nodes", []string{"explain", "pod", "batch", "-n", "shop", "--snapshot", small, "--all-nodes"}},
		{"explain-small-fits-table", []string{"explain", "pod", "web-1", "-n", "shop", "--snapshot", small}},
		{"explain-small-fits-wide", []string{"explain", "pod", "web-1", "-n", "shop", "--snapshot", small, "-o", "wide"}},
		{"explain-small-bound-table", []string{"explain", "pod/db-0", "-n", "shop", "--snapshot", small}},
		{"explain-small-node-rejected", []string{"explain", "pod", "train-big", "-n", "ml", "--snapshot", small, "--node", "gpu-a"}},
		{"explain-small-node-feasible", []string{"explain", "pod", "web-1", "-n", "shop", "--snapshot", small, "--node", "worker-a"}},
		{"explain-small-file-table", []string{"explain", "pod", "-f", "testdata/new-pod.yaml", "--snapshot", small}},
		{"explain-small-unschedulable-json", []string{"explain", "pod", "train-big", "-n", "ml", "--snapshot", small, "-o", "json"}},
		{"explain-small-at-turn-table", []string{"explain", "pod", "batch", "-n", "shop", "--snapshot", small, "--at-turn"}},
		{"explain-small-at-turn-json", []string{"explain", "pod", "web-2", "-n", "shop", "--snapshot", small, "--at-turn", "-o", "json"}},
		{"explain-example-disagrees-table", []string{"explain", "pod", "ingress-nginx-5", "-n", "ingress", "--snapshot", exampleCluster}},
		{"explain-example-disagrees-json", []string{"explain", "pod", "zookeeper-3", "-n", "data", "--snapshot", exampleCluster, "-o", "json"}},
		{"explain-example-agrees-table", []string{"explain", "pod", "notebook-0", "-n", "ml", "--snapshot", exampleCluster}},
		{"explain-example-not-checked-table", []string{"explain", "pod", "etl-huge", "-n", "batch", "--snapshot", exampleCluster, "--check-turn=false"}},
		{"explain-small-fits-yaml", []string{"explain", "pod", "web-1", "-n", "shop", "--snapshot", small, "-o", "yaml"}},
		{"explain-mixed-small-spread-table", []string{"explain", "pod", "app-000-53847391-fscp8", "-n", "web", "--snapshot", mixedSmall}},
		{"explain-mixed-small-ports-table", []string{"explain", "pod", "app-007-53844baf-ql8tz", "-n", "team-b", "--snapshot", mixedSmall}},
		{"explain-mixed-small-json", []string{"explain", "pod", "app-007-53844baf-ql8tz", "-n", "team-b", "--snapshot", mixedSmall, "-o", "json"}},
		{"explain-dra-devices-table", []string{"explain", "pod", "big-trainer", "-n", "ml", "--snapshot", draCluster}},
		{"explain-dra-small-declared-features-node", []string{"explain", "pod", "sandboxed-tool-a7089b23-db9gs", "-n", "team-a", "--snapshot", draSmall, "--node", "node-00027"}},
		{"explain-dra-constraint-node-json", []string{"explain", "pod", "paired", "-n", "ml", "--snapshot", draCluster, "--node", "gpu-c", "-o", "json"}},
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

func TestExplainBadInput(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	twoPods := write("two.yaml", "apiVersion: v1\nkind: Pod\nmetadata: {name: a}\nspec: {containers: [{name: c}]}\n---\napiVersion: v1\nkind: Pod\nmetadata: {name: b}\nspec: {containers: [{name: c}]}\n")
	otherNS := write("otherns.yaml", "apiVersion: v1\nkind: Pod\nmetadata: {name: a, namespace: other}\nspec: {containers: [{name: c}]}\n")
	otherSched := write("sched.yaml", "apiVersion: v1\nkind: Pod\nmetadata: {name: a}\nspec: {schedulerName: mine, containers: [{name: c}]}\n")
	malformed := write("malformed.yaml", "apiVersion: v1\nkind: Node\nmetadata: [\n")
	noNodes := write("nonodes.yaml", "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: {containers: [{name: c}]}\n")
	badArgs := write("args.yaml", "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\nprofiles:\n- pluginConfig:\n  - name: NodeResourcesFit\n    args: {scoringStrategy: {type: Foo}}\n")
	tests := []struct {
		name    string
		args    []string
		wantErr string
	}{
		{"a pod that is not in the snapshot", []string{"explain", "pod", "nope", "-n", "shop", "--snapshot", small}, `pods "nope" not found in namespace "shop"`},
		{"the default namespace when -n is not given", []string{"explain", "pod", "batch", "--snapshot", small}, `pods "batch" not found in namespace "default"`},
		{"no resource type", []string{"explain"}, "a resource type is required"},
		{"a resource type other than pods", []string{"explain", "node", "n1", "--snapshot", small}, `cannot explain "node": only pods and podgroups can be explained`},
		{"a Deployment where a pod name goes says how to explain its pods", []string{"explain", "pod", "deploy/web", "-n", "shop", "--snapshot", small},
			"explain takes a pod, not a deployment: explain one of the pods of deployment web (named web-<hash>-<id>; 'kubectl get pods -n shop' lists them): kubectl sched explain pod POD -n shop"},
		{"a StatefulSet as the type", []string{"explain", "sts", "db", "--snapshot", small}, "explain takes a pod, not a statefulset: explain one of the pods of statefulset db (named db-0, db-1, ...;"},
		{"another TYPE/NAME as the pod name", []string{"explain", "pod", "svc/web", "--snapshot", small}, `explain takes a pod: "svc/web" is not a pod name (kubectl sched explain pod NAME; if svc is the pod's namespace: kubectl sched explain pod web -n svc)`},
		{"NAMESPACE/NAME with -n says no more", []string{"explain", "pod", "shop/web", "-n", "shop", "--snapshot", small}, `explain takes a pod: "shop/web" is not a pod name (kubectl sched explain pod NAME -n shop)`},
		{"no pod name and no file", []string{"explain", "pod", "--snapshot", small}, "a pod name or -f POD.yaml is required"},
		{"a name and a file", []string{"explain", "pod", "x", "-f", otherNS, "--snapshot", small}, "give a pod name or -f, not both"},
		{"two pods", []string{"explain", "pod", "a", "b", "--snapshot", small}, "one pod at a time"},
		{"a file with two pods", []string{"explain", "pod", "-f", twoPods, "--snapshot", small}, "want exactly one Pod, found 2 pods"},
		{"a file whose namespace contradicts -n", []string{"explain", "pod", "-f", otherNS, "-n", "shop", "--snapshot", small}, `the namespace from the provided object "other" does not match the namespace "shop"`},
		{"a pod of another scheduler", []string{"explain", "pod", "-f", otherSched, "--snapshot", small}, `has schedulerName "mine", which is not a profile`},
		{"a pod of another scheduler at its turn", []string{"explain", "pod", "-f", otherSched, "--snapshot", small, "--at-turn"}, `has schedulerName "mine", which is not a profile`},
		{"a node that is not in the cluster at its turn", []string{"explain", "pod", "batch", "-n", "shop", "--snapshot", small, "--node", "nope", "--at-turn"}, `--node: node "nope" is not in the cluster`},
		{"a node that is not in the cluster", []string{"explain", "pod", "batch", "-n", "shop", "--snapshot", small, "--node", "nope"}, `--node: node "nope" is not in the cluster`},
		{"a malformed snapshot", []string{"explain", "pod", "batch", "-n", "shop", "--snapshot", malformed}, malformed + ":3: malformed YAML"},
		{"a missing snapshot", []string{"explain", "pod", "batch", "--snapshot", filepath.Join(dir, "nope.yaml")}, "nope.yaml: no such file or directory"},
		{"a snapshot without nodes", []string{"explain", "pod", "p", "--snapshot", noNodes}, "the cluster has no nodes"},
		{"invalid plugin args", []string{"explain", "pod", "batch", "-n", "shop", "--snapshot", small, "--config", badArgs}, "scoringStrategy.type"},
		{"an unknown output format", []string{"explain", "pod", "batch", "-n", "shop", "--snapshot", small, "-o", "xml"}, `--output: unknown format "xml"`},
		{"a negative --nearest", []string{"explain", "pod", "batch", "-n", "shop", "--snapshot", small, "--nearest", "-1"}, "--nearest: must not be negative"},
		{"stdin twice", []string{"explain", "pod", "-f", "-", "--snapshot", "-"}, "cannot both read standard input"},
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
			lines := strings.Split(strings.TrimRight(stderr, "\n"), "\n")
			last := lines[len(lines)-1]
			if !strings.HasPrefix(last, "error: ") || !strings.Contains(last, tt.wantErr) {
				t.Errorf("stderr = %q, want a last line containing %q", stderr, tt.wantErr)
			}
		})
	}
}

func TestExplainExitsZeroWhetherOrNotThePodFits(t *testing.T) {
	for _, pod := range []string{"batch", "web-1"} {
		code, out, _ := run(t, "", "explain", "pod", pod, "-n", "shop", "--snapshot", small)
		if code != 0 || out == "" {
			t.Errorf("explain %s: exit code %d, output %d bytes", pod, code, len(out))
		}
	}
}

// TestAPodByHandGetsItsClassPriority: a pod manifest written by hand names
// a priorityClassName, and the API server would give it that class's
// priority: explain and dryrun do too, so it preempts as it would; a class
// the dump lacks is a warning.
func TestAPodByHandGetsItsClassPriority(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	dump := write("dump.yaml", `apiVersion: v1
kind: Node
metadata: {name: n1}
status: {allocatable: {cpu: "2", memory: 8Gi, pods: "10"}}
---
apiVersion: v1
kind: Pod
metadata: {name: low, namespace: ns}
spec: {nodeName: n1, priority: 0, containers: [{name: c, resources: {requests: {cpu: "2"}}}]}
---
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: high}
value: 1000
`)
	pod := func(class string) string {
		return write(class+".yaml", "apiVersion: v1\nkind: Pod\nmetadata: {name: new, namespace: ns}\nspec: {priorityClassName: "+class+", containers: [{name: c, resources: {requests: {cpu: \"1\"}}}]}\n")
	}
	code, out, stderr := run(t, "", "explain", "pod", "-f", pod("high"), "--snapshot", dump)
	if code != 0 || !strings.Contains(out, "Preemption: would nominate n1, evicting 1 pod: ns/low") || stderr != "" {
		t.Errorf("explain: exit %d, stderr %q, want the preemption of ns/low:\n%s", code, stderr, out)
	}
	code, out, _ = run(t, "", "dryrun", "-f", dump, "-f", pod("high"))
	if code != 0 || !strings.Contains(out, "ns/new  n1    scheduled") {
		t.Errorf("dryrun: exit %d, want ns/new placed on n1:\n%s", code, out)
	}
	code, out, stderr = run(t, "", "explain", "pod", "-f", pod("nope"), "--snapshot", dump)
	if code != 0 || !strings.Contains(out, "Preemption: 0/1 nodes are available") ||
		stderr != "warning: pod ns/new: priorityClassName \"nope\" is not a PriorityClass of the dump: priority 0 (the API server would refuse the pod)\n" {
		t.Errorf("explain of an unknown class: exit %d, stderr %q:\n%s", code, stderr, out)
	}
}

// TestExplainSaysWhetherTheDryRunAgrees: explain of a pod of a dump says on
// its Dry-run line whether `dryrun -f` of the same dump agrees, for the
// six pods of examples/cluster.yaml that fit as listed and that the dry-run
// leaves unschedulable, and for pods where they agree.
func TestExplainSaysWhetherTheDryRunAgrees(t *testing.T) {
	const fitsNowhere = "0/33 nodes are available: 1 node(s) were unschedulable, 23 node(s) didn't match Pod's node affinity/selector, 4 Insufficient cpu, 5 node(s) had untolerated taint(s)."
	tests := []struct {
		pod, ns string
		want    string
	}{
		{"ingress-nginx-5", "ingress", "disagrees: at its turn in the dry-run (attempt 1, after 14 placements) it is unschedulable: 0/33 nodes are available: 1 node(s) were unschedulable, 19 node(s) didn't match Pod's node affinity/selector, 4 node(s) didn't have free ports for the requested pod ports, 9 node(s) had untolerated taint(s). (--at-turn explains that state)"},
		{"render-2", "batch", "disagrees: at its turn in the dry-run (attempt 1, after 16 placements) it is unschedulable: " + fitsNowhere + " (--at-turn explains that state)"},
		{"render-3", "batch", "disagrees: at its turn in the dry-run (attempt 1, after 16 placements) it is unschedulable: " + fitsNowhere + " (--at-turn explains that state)"},
		{"render-4", "batch", "disagrees: at its turn in the dry-run (attempt 1, after 16 placements) it is unschedulable: " + fitsNowhere + " (--at-turn explains that state)"},
		{"render-5", "batch", "disagrees: at its turn in the dry-run (attempt 1, after 16 placements) it is unschedulable: " + fitsNowhere + " (--at-turn explains that state)"},
		{"zookeeper-3", "data", "disagrees: at its turn in the dry-run (attempt 1, after 23 placements) it is unschedulable: 0/33 nodes are available: 1 node(s) were unschedulable, 23 node(s) didn't match pod anti-affinity rules, 9 node(s) had untolerated taint(s). (--at-turn explains that state)"},
		{"notebook-0", "ml", "agrees: at its turn in the dry-run (attempt 1, after 18 placements) it is unschedulable too"},
		{"etl-huge", "batch", "agrees: at its turn in the dry-run (attempt 1, after 25 placements) it is unschedulable too"},
		{"loki-0", "monitoring", "agrees: at its turn in the dry-run (attempt 1, nothing placed before it) it is placed on memory-b-2 too"},
		{"api-3", "web", "agrees it is schedulable: at its turn in the dry-run (attempt 1, after 7 placements) it is placed on general-c-5, not general-c-2 (the pods placed before it change the scores; --at-turn explains that state)"},
	}
	for _, tt := range tests {
		t.Run(tt.ns+"/"+tt.pod, func(t *testing.T) {
			code, out, stderr := run(t, "", "explain", "pod", tt.pod, "-n", tt.ns, "--snapshot", exampleCluster)
			if code != 0 {
				t.Fatalf("exit code %d: %s", code, stderr)
			}
			var line string
			for _, l := range strings.Split(out, "\n") {
				if rest, ok := strings.CutPrefix(l, "Dry-run:"); ok {
					line = strings.TrimSpace(rest)
				}
			}
			if line != tt.want {
				t.Errorf("Dry-run line\n got: %s\nwant: %s", line, tt.want)
			}
		})
	}
	// Skipped on request, and with --at-turn (its State line is the
	// dry-run's).
	for _, args := range [][]string{
		{"explain", "pod", "render-2", "-n", "batch", "--snapshot", exampleCluster, "--check-turn=false"},
		{"explain", "pod", "render-2", "-n", "batch", "--snapshot", exampleCluster, "--at-turn"},
	} {
		code, out, stderr := run(t, "", args...)
		if code != 0 || strings.Contains(out, "Dry-run:") {
			t.Errorf("%s: exit code %d, a Dry-run line in\n%s%s", strings.Join(args[1:], " "), code, out, stderr)
		}
	}
}
