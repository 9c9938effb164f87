package gpushare

import (
	"fmt"
	"strconv"
	"strings"

	v1 "k8s.io/api/core/v1"
)

// The annotations a pod carries its GPU-share request in. A GPU's capacity
// is MilliPerGPU thousandths; several pods may share one GPU's thousandths.
const (
	// AnnotationGPUMilli is the thousandths of each GPU the pod asks for,
	// 1..1000 ("460": 46% of one GPU). Missing with a count: 1000.
	AnnotationGPUMilli = "gpushare.kubectl-sched.io/gpu-milli"
	// AnnotationGPUCount is the number of GPUs ("2"). Missing with a
	// milli value: 1. A pod asking for more than one GPU takes whole GPUs:
	// its milli value must be 1000.
	AnnotationGPUCount = "gpushare.kubectl-sched.io/gpu-count"
	// AnnotationGPUModel restricts the GPU models the pod accepts, as a
	// '|'-separated list ("V100M16|V100M32"); empty accepts any model.
	AnnotationGPUModel = "gpushare.kubectl-sched.io/gpu-model"
	// AnnotationGPUIndex names the GPUs a bound pod holds on its node,
	// '-'-separated device indexes ("0", "2-3-4-5"), as the FGD artifact
	// writes them. GpuShare honours it for pods it did not place itself
	// (a cluster dump, another scheduler).
	AnnotationGPUIndex = "gpushare.kubectl-sched.io/gpu-index"

	// MilliPerGPU is one whole GPU.
	MilliPerGPU = 1000
	// maxGPUsPerPod bounds a request's count, far above any real node.
	maxGPUsPerPod = 64
)

// Request is a pod's GPU-share request, parsed once per cycle.
type Request struct {
	// Milli is the thousandths of each GPU, 1..1000; 0 for a pod without
	// GPUs.
	Milli int64
	// Count is the number of GPUs.
	Count int
	// Model is the raw model restriction ("T4|P100"), "" for any.
	Model string
	// Models is Model split, empty entries dropped.
	Models []string
	// CPU is the pod's CPU request in millicores as the artifact's scores
	// read it (NonZeroCPU).
	CPU int64
}

// IsGPU reports whether the pod asks for any GPU.
func (r Request) IsGPU() bool { return r.Count > 0 && r.Milli > 0 }

// Shared reports whether the pod shares one GPU with others (one GPU,
// fewer than 1000 thousandths).
func (r Request) Shared() bool { return r.Count == 1 && r.Milli < MilliPerGPU }

// TotalMilli is the thousandths the pod takes over all its GPUs.
func (r Request) TotalMilli() int64 { return r.Milli * int64(r.Count) }

// AcceptsModel reports whether a node whose GPUs are of model may host the
// pod: any model when the pod names none, else one of its models. A node
// without a model label accepts only pods that name none (the artifact's
// IsNodeAccessibleToPodByType).
func (r Request) AcceptsModel(model string) bool {
	if len(r.Models) == 0 {
		return true
	}
	if model == "" {
		return false
	}
	for _, m := range r.Models {
		if m == model {
			return true
		}
	}
	return false
}

// String renders the request for reasons and logs: "1x460m", "2x1000m
// (V100M32)".
func (r Request) String() string {
	s := fmt.Sprintf("%dx%dm", r.Count, r.Milli)
	if r.Model != "" {
		s += " (" + r.Model + ")"
	}
	return s
}

// defaultMilliCPU is kube's non-zero default for a container without a CPU
// request.
const defaultMilliCPU = 100

// NonZeroCPU is the artifact's CPU of a pod (utils.GetPodResource): the sum
// over its containers of their CPU requests, 100m for a container that sets
// none. Init containers and overhead do not count.
func NonZeroCPU(pod *v1.Pod) int64 {
	var cpu int64
	for i := range pod.Spec.Containers {
		if q, ok := pod.Spec.Containers[i].Resources.Requests[v1.ResourceCPU]; ok {
			cpu += q.MilliValue()
		} else {
			cpu += defaultMilliCPU
		}
	}
	return cpu
}

// ParseRequest reads a pod's GPU-share annotations. A pod without them asks
// for no GPU. An invalid value is an error naming the annotation.
func ParseRequest(pod *v1.Pod) (Request, error) {
	var r Request
	milliStr, hasMilli := pod.Annotations[AnnotationGPUMilli]
	countStr, hasCount := pod.Annotations[AnnotationGPUCount]
	r.Model = strings.TrimSpace(pod.Annotations[AnnotationGPUModel])
	for _, m := range strings.Split(r.Model, "|") {
		if m = strings.TrimSpace(m); m != "" {
			r.Models = append(r.Models, m)
		}
	}
	if !hasMilli && !hasCount {
		return r, nil
	}
	r.Milli, r.Count = MilliPerGPU, 1
	if hasMilli {
		v, err := strconv.ParseInt(strings.TrimSpace(milliStr), 10, 64)
		if err != nil || v < 0 || v > MilliPerGPU {
			return Request{}, fmt.Errorf("annotation %s: invalid value %q: want an integer in [0, %d]", AnnotationGPUMilli, milliStr, MilliPerGPU)
		}
		r.Milli = v
	}
	if hasCount {
		v, err := strconv.Atoi(strings.TrimSpace(countStr))
		if err != nil || v < 0 || v > maxGPUsPerPod {
			return Request{}, fmt.Errorf("annotation %s: invalid value %q: want an integer in [0, %d]", AnnotationGPUCount, countStr, maxGPUsPerPod)
		}
		r.Count = v
	}
	if r.Count == 0 || r.Milli == 0 {
		// As in the artifact, a pod with 0 GPUs or 0 thousandths asks for
		// none.
		r.Count, r.Milli = 0, 0
		return r, nil
	}
	if r.Count > 1 && r.Milli != MilliPerGPU {
		return Request{}, fmt.Errorf("annotation %s: %d GPUs of %dm each: a pod with more than one GPU takes whole GPUs (%dm)", AnnotationGPUMilli, r.Count, r.Milli, MilliPerGPU)
	}
	return r, nil
}

// parseIndex reads AnnotationGPUIndex: nil when absent or invalid.
func parseIndex(pod *v1.Pod) []int {
	s, ok := pod.Annotations[AnnotationGPUIndex]
	if !ok || s == "" {
		return nil
	}
	var out []int
	for _, f := range strings.Split(s, "-") {
		i, err := strconv.Atoi(f)
		if err != nil || i < 0 {
			return nil
		}
		out = append(out, i)
	}
	return out
}

// FormatIndex renders device indexes as AnnotationGPUIndex does ("2-3").
func FormatIndex(ids []int) string {
	var b strings.Builder
	for i, id := range ids {
		if i > 0 {
			b.WriteByte('-')
		}
		b.WriteString(strconv.Itoa(id))
	}
	return b.String()
}
