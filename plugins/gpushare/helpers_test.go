package gpushare

import (
	"strconv"

	v1 "k8s.io/api/core/v1"

	st "github.com/kubectl-sched/kubectl-sched/schedcore/schedtest"
)

// gpuPod is a pod asking for count x milli of model's GPUs and cpu
// millicores (count 0: no GPU annotations).
func gpuPod(name string, count int, milli int64, model string, cpu int64) *v1.Pod {
	p := st.MakePod(name).Req("cpu", strconv.FormatInt(cpu, 10)+"m").Obj()
	if count > 0 {
		p.Annotations = map[string]string{
			AnnotationGPUCount: strconv.Itoa(count),
			AnnotationGPUMilli: strconv.FormatInt(milli, 10),
		}
		if model != "" {
			p.Annotations[AnnotationGPUModel] = model
		}
	}
	return p
}

// on binds a pod to a node, with its GPUs recorded in AnnotationGPUIndex
// when ids is not empty.
func placedOn(p *v1.Pod, node string, ids ...int) *v1.Pod {
	p.Spec.NodeName = node
	if len(ids) > 0 {
		p.Annotations[AnnotationGPUIndex] = FormatIndex(ids)
	}
	return p
}

// gpuNode is a node with n GPUs of model and cpu millicores.
func gpuNode(name string, n int, model string, cpu int64) *v1.Node {
	w := st.MakeNode(name).Capacity("cpu", strconv.FormatInt(cpu, 10)+"m", "memory", "64Gi")
	if n > 0 {
		w.Capacity(DefaultGPUResource, strconv.Itoa(n))
	}
	if model != "" {
		w.Label(DefaultModelLabel, model)
	}
	return w.Obj()
}

// req is a parsed request.
func req(count int, milli, cpu int64) Request { return Request{Count: count, Milli: milli, CPU: cpu} }

// gpus is a node's GPU state.
func gpus(model string, free ...int64) *NodeGPUs { return &NodeGPUs{Model: model, Free: free} }
