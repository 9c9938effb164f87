package cli

import (
	"regexp"
	"strings"
	"testing"
)

// priorityDump is a dump written by hand: the pods name a PriorityClass
// and carry no spec.priority, as the API server would fill in. vip (class
// high, 1000) runs on n1, low (no class: 0) on n2, each node has room for
// one of them; urgent (class high) is pending.
const priorityDump = `apiVersion: v1
kind: List
items:
- {apiVersion: scheduling.k8s.io/v1, kind: PriorityClass, metadata: {name: high}, value: 1000}
- apiVersion: v1
  kind: Node
  metadata: {name: n1, labels: {kubernetes.io/hostname: n1}}
  status: {allocatable: {cpu: "4", memory: 8Gi, pods: "10"}}
- apiVersion: v1
  kind: Node
  metadata: {name: n2, labels: {kubernetes.io/hostname: n2}}
  status: {allocatable: {cpu: "4", memory: 8Gi, pods: "10"}}
- apiVersion: v1
  kind: Pod
  metadata: {name: low, namespace: ns}
  spec: {nodeName: n2, containers: [{name: c, resources: {requests: {cpu: "3"}}}]}
  status: {phase: Running}
- apiVersion: v1
  kind: Pod
  metadata: {name: vip, namespace: ns, ownerReferences: [{apiVersion: apps/v1, kind: ReplicaSet, name: vip-rs, uid: u1, controller: true}]}
  spec: {nodeName: n1, priorityClassName: high, containers: [{name: c, resources: {requests: {cpu: "3"}}}]}
  status: {phase: Running}
`

const urgentPod = `- apiVersion: v1
  kind: Pod
  metadata: {name: urgent, namespace: ns}
  spec: {priorityClassName: high, containers: [{name: c, resources: {requests: {cpu: "3"}}}]}
`

// TestEveryVerbReadsAPriorityClassAsDryrunDoes: a pod whose priority comes
// only from its priorityClassName preempts the lower-priority pod in every
// verb that reads a dump, as in dryrun: replay and compare (whose traces
// and dumps were read without the classes' priorities), drain (exit status
// 3: it preempts).
func TestEveryVerbReadsAPriorityClassAsDryrunDoes(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string { return writeFile(t, dir, name, content) }
	running := write("running.yaml", priorityDump)
	pending := write("pending.yaml", priorityDump+urgentPod)
	runVerbs(t, []verbCase{
		{name: "dryrun (the reference)", args: []string{"dryrun", "-f", pending}, want: `ns/urgent +n2 +scheduled[\s\S]*evicted: 1`},
		{name: "replay", args: []string{"replay", "-f", pending}, want: `placed 1 .* preempted 1 `},
		{name: "compare", args: []string{"compare", "-f", pending, "--config", "default"}, want: `pods placed +1\n`},
		{name: "compare --replay", args: []string{"compare", "-f", pending, "--config", "default", "--replay"}, want: `pods placed +1\n`},
		{name: "drain", args: []string{"drain", "n1", "--snapshot", running}, want: `ns/vip +n1 +n2 +Scheduled \(after preempting pods there\)[\s\S]*ns/low +n2 +ns/vip`, code: ExitIncomplete},
	})
}

// TestEveryVerbServesRunsProfileAndSaysWhatItSkips: without --config,
// every verb that schedules a dump's pods knows the profile `run` uses
// (kubectl-sched) as dryrun does, and says, as dryrun does, how many
// pending pods it skips for a scheduler no profile serves.
func TestEveryVerbServesRunsProfileAndSaysWhatItSkips(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string { return writeFile(t, dir, name, content) }
	forRun := strings.ReplaceAll(priorityDump+urgentPod, "spec: {", "spec: {schedulerName: kubectl-sched, ")
	pending := write("pending.yaml", forRun+`- apiVersion: v1
  kind: Pod
  metadata: {name: vol, namespace: ns}
  spec: {schedulerName: volcano, containers: [{name: c}]}
`)
	running := write("running.yaml", strings.ReplaceAll(priorityDump, "spec: {", "spec: {schedulerName: kubectl-sched, "))
	const skipped = `warning: 1 pending pod for scheduler "volcano" skipped: no profile of that name (profiles: default-scheduler, kubectl-sched)`
	runVerbs(t, []verbCase{
		{name: "dryrun (the reference)", args: []string{"dryrun", "-f", pending}, want: `ns/urgent +n2 +scheduled`, wantStderr: skipped},
		{name: "replay", args: []string{"replay", "-f", pending}, want: `placed 1 .* preempted 1 `, wantStderr: skipped},
		{name: "compare", args: []string{"compare", "-f", pending, "--config", "default"}, want: `pods placed +1\n`, wantStderr: skipped},
		{name: "compare --replay", args: []string{"compare", "-f", pending, "--config", "default", "--replay"}, want: `pods placed +1\n`, wantStderr: skipped},
		{name: "drain", args: []string{"drain", "n1", "--snapshot", running}, want: `ns/vip +n1 +n2 +Scheduled \(after preempting pods there\)`, code: ExitIncomplete},
		{name: "capacity", args: []string{"capacity", "-f", write("spec.yaml", "apiVersion: v1\nkind: Pod\nmetadata: {name: w, namespace: ns}\nspec: {schedulerName: kubectl-sched, containers: [{name: c, resources: {requests: {cpu: \"1\"}}}]}\n"), "--snapshot", running},
			want: `ns/w +Pod +2 +fit`},
	})
}

// TestCapacityAndDrainSayTheyLeaveThePendingPodsOut: capacity and drain
// answer beside the pods that run, where dryrun of the same dump places
// the pending pods first; they say so.
func TestCapacityAndDrainSayTheyLeaveThePendingPodsOut(t *testing.T) {
	running := writeFile(t, t.TempDir(), "running.yaml", priorityDump)
	runVerbs(t, []verbCase{
		{name: "capacity", args: []string{"capacity", "-f", "../../examples/new-pod.yaml", "--snapshot", exampleCluster}, want: `batch/report-builder +Pod +14 `,
			wantStderr: "note: the cluster's 40 pending pods are not placed first: the copies are counted beside the running pods (kubectl sched dryrun places them)"},
		{name: "drain", args: []string{"drain", "general-a-1", "--snapshot", exampleCluster}, want: `ingress/ingress-nginx-1 +general-a-1 +general-c-2 +Scheduled`,
			wantStderr: "note: the cluster's 40 pending pods are not scheduled alongside the evicted ones (kubectl sched dryrun places them)"},
		{name: "no pending pod, no note", args: []string{"drain", "n1", "--snapshot", running}, want: `ns/vip +n1 +n2`, code: ExitIncomplete},
	})
}

// verbCase is one command and what it must answer.
type verbCase struct {
	name       string
	args       []string
	want       string // a regular expression the output matches
	code       int
	wantStderr string
}

func runVerbs(t *testing.T, tests []verbCase) {
	t.Helper()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out, stderr := run(t, "", tt.args...)
			if code != tt.code {
				t.Fatalf("exit code %d: %s", code, stderr)
			}
			if !regexp.MustCompile(tt.want).MatchString(out) {
				t.Errorf("output does not match %q:\n%s", tt.want, out)
			}
			if got := strings.TrimSpace(stderr); got != tt.wantStderr {
				t.Errorf("stderr\n got: %q\nwant: %q", got, tt.wantStderr)
			}
		})
	}
}
