package snapshot

import (
	"bytes"
	"strings"
)

// openbHeaders are the first lines of the Alibaba GPU trace's CSVs
// (cluster-trace-gpu-v2023, "openb"), which hack/openb2k8s converts.
var openbHeaders = map[string]string{
	"sn,cpu_milli,memory_mib,gpu,model": "node list",
	"name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,scheduled_time": "pod list",
	"name,cpu_milli,memory_mib,num_gpu,gpu_milli":                                                                   "pod list",
}

// notObjects tells what a file that holds no Kubernetes objects holds
// instead, when it can: a CSV table (the Alibaba trace above all), which
// the YAML decoder would otherwise report as a string it cannot
// unmarshal. "" means the file is left to the decoder.
func notObjects(data []byte) string {
	first, _, _ := bytes.Cut(bytes.TrimLeft(data, " \t\r\n\ufeff"), []byte("\n"))
	line := strings.TrimSpace(string(first))
	if !strings.Contains(line, ",") || strings.ContainsAny(line, ":{}[]#") {
		return ""
	}
	if what, ok := openbHeaders[line]; ok {
		return "the Alibaba GPU trace's " + what + " (CSV: " + line + "), not Kubernetes objects: " +
			"convert it with 'go run ./hack/openb2k8s -nodes NODES.csv -pods PODS.csv > cluster.yaml' " +
			"in a clone of kubectl-sched (see docs/dryrun.md), then dry-run cluster.yaml"
	}
	return "a CSV table (first line: " + clip(line, 60) + "), not Kubernetes objects: " +
		"dryrun and explain read YAML or JSON (a v1 List, documents separated by '---', or kubectl get -o yaml output)"
}

// clip shortens s to at most n bytes, marking the cut.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
