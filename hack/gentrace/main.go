// Command gentrace writes examples/trace.yaml, the shipped example of a
// trace for `kubectl sched replay -f examples/cluster.yaml -f
// examples/trace.yaml`: eight hours of arrivals and departures on the
// example cluster, from a fixed seed.
//
//	go run ./hack/gentrace > examples/trace.yaml
//
// What happens in it:
//   - batch/render-tN: a render every 8 minutes on the spot pool (1 cpu,
//     10 to 35 minutes each); every tenth is cancelled 8 minutes after it
//     arrives, whether it runs by then or still waits;
//   - spot-c-1, a fifth spot node, joins at 09:40 and is reclaimed at
//     13:30 with whatever runs on it; spot-c-2 joins at 12:00 and stays;
//   - ml/finetune-N: a GPU job every 40 minutes (2 GPUs, 1 to 2.5 hours);
//   - web/frontend-burst-N: twelve frontends scaled up at 12:00, down at 15:00.
package main

import (
	"fmt"
	"io"
	"math/rand"
	"os"
	"time"
)

var start = time.Date(2026, 3, 2, 9, 10, 0, 0, time.UTC)

func ts(t time.Time) string { return t.UTC().Format(time.RFC3339) }

func main() {
	if err := write(os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "gentrace:", err)
		os.Exit(1)
	}
}

func write(w io.Writer) error {
	r := rand.New(rand.NewSource(1))
	var err error
	out := func(format string, args ...any) {
		if err == nil {
			_, err = fmt.Fprintf(w, format, args...)
		}
	}
	out("# A trace for kubectl sched replay, written by hack/gentrace (do not edit):\n")
	out("#   kubectl sched replay -f examples/cluster.yaml -f examples/trace.yaml\n")
	out("# Pods arrive at metadata.creationTimestamp and leave at metadata.deletionTimestamp;\n")
	out("# nodes likewise. See docs/replay.md.\n")
	spot := func(name, zone string, join, leave time.Time) {
		del := ""
		if !leave.IsZero() {
			del = fmt.Sprintf("\n  deletionTimestamp: %q", ts(leave))
		}
		out(`---
apiVersion: v1
kind: Node
metadata:
  name: %s
  creationTimestamp: %q%s
  labels: {kubernetes.io/hostname: %s, kubernetes.io/os: linux, kubernetes.io/arch: amd64,
    topology.kubernetes.io/region: eu-west-1, topology.kubernetes.io/zone: %s,
    node.kubernetes.io/instance-type: m6i.xlarge, pool: spot, node.kubernetes.io/lifecycle: spot}
spec:
  taints: [{key: cloud.example.com/spot, value: "true", effect: NoSchedule}]
status:
  capacity: {cpu: "4", memory: 16Gi, pods: "110"}
  allocatable: {cpu: 3920m, memory: 14Gi, pods: "110"}
  conditions: [{type: Ready, status: "True"}]
`, name, ts(join), del, name, zone)
	}
	spot("spot-c-1", "eu-west-1c", start.Add(30*time.Minute), start.Add(260*time.Minute))
	spot("spot-c-2", "eu-west-1c", start.Add(170*time.Minute), time.Time{})
	for i := 0; i < 60; i++ {
		at := start.Add(time.Duration(i) * 8 * time.Minute)
		life := time.Duration(10+r.Intn(26)) * time.Minute
		if i%10 == 9 {
			life = 8 * time.Minute
		}
		out(`---
apiVersion: v1
kind: Pod
metadata: {name: render-t%d, namespace: batch, creationTimestamp: %q, deletionTimestamp: %q, labels: {app: render}}
spec:
  tolerations: [{key: cloud.example.com/spot, operator: Equal, value: "true", effect: NoSchedule}]
  affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: [{matchExpressions: [{key: node.kubernetes.io/lifecycle, operator: In, values: [spot]}]}]}}}
  containers: [{name: render, image: example.com/render:8, resources: {requests: {cpu: "1", memory: 2Gi}}}]
`, i, ts(at), ts(at.Add(life)))
	}
	for i := 0; i < 12; i++ {
		at := start.Add(time.Duration(i)*40*time.Minute + 3*time.Minute)
		life := time.Duration(60+r.Intn(91)) * time.Minute
		out(`---
apiVersion: v1
kind: Pod
metadata: {name: finetune-%d, namespace: ml, creationTimestamp: %q, deletionTimestamp: %q, labels: {app: finetune}}
spec:
  tolerations: [{key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}]
  containers: [{name: trainer, image: example.com/trainer:0.14, resources: {requests: {cpu: "8", memory: 32Gi, nvidia.com/gpu: "2"}, limits: {nvidia.com/gpu: "2"}}}]
`, i, ts(at), ts(at.Add(life)))
	}
	burst := time.Date(2026, 3, 2, 12, 0, 0, 0, time.UTC)
	for i := 0; i < 12; i++ {
		at := burst.Add(time.Duration(i) * 10 * time.Second)
		out(`---
apiVersion: v1
kind: Pod
metadata: {name: frontend-burst-%d, namespace: web, creationTimestamp: %q, deletionTimestamp: %q, labels: {app: frontend}}
spec:
  topologySpreadConstraints: [{maxSkew: 1, topologyKey: topology.kubernetes.io/zone, whenUnsatisfiable: DoNotSchedule, labelSelector: {matchLabels: {app: frontend}}}]
  containers: [{name: web, image: example.com/frontend:3.2, resources: {requests: {cpu: "2", memory: 4Gi}}}]
`, i, ts(at), ts(burst.Add(3*time.Hour)))
	}
	return err
}
