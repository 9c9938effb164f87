package fgd

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	v1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kubectl-sched/kubectl-sched/internal/gen/openb"
	"github.com/kubectl-sched/kubectl-sched/internal/gen/v1list"
	"github.com/kubectl-sched/kubectl-sched/internal/replay"
	"github.com/kubectl-sched/kubectl-sched/internal/snapshot"
	"github.com/kubectl-sched/kubectl-sched/plugins/gpushare"
	"github.com/kubectl-sched/kubectl-sched/plugins/names"
	"github.com/kubectl-sched/kubectl-sched/schedcore"
)

// draGPUs is a node's GPUs in the DRA row as its pods' claims were
// allocated: each device's thousandths free are its capacity less what
// the allocation results on it consumed. It checks each allocation
// against the pod's shape (openb's annotations, which the DRA mapping
// keeps): num_gpu devices of this node's pool, a model gpu_spec accepts,
// each consuming gpu_milli of the capacity. The GPUs are whole when an
// error is returned.
func draGPUs(m *schedcore.DRAManager, ni *schedcore.NodeInfo) (*gpushare.NodeGPUs, error) {
	node := ni.Node()
	q := node.Status.Allocatable[openb.GPUResource]
	g := &gpushare.NodeGPUs{Model: node.Labels[openb.LabelGPUModel], Free: make([]int64, max(q.Value(), 0))}
	for i := range g.Free {
		g.Free[i] = gpushare.MilliPerGPU
	}
	whole := func(err error) (*gpushare.NodeGPUs, error) {
		for i := range g.Free {
			g.Free[i] = gpushare.MilliPerGPU
		}
		return g, err
	}
	for _, pi := range ni.Pods {
		p := pi.Pod
		perGPU, total := openb.GPUMilli(p)
		if total == 0 {
			continue
		}
		var results []resourcev1.DeviceRequestAllocationResult
		for _, st := range p.Status.ResourceClaimStatuses {
			if st.ResourceClaimName == nil {
				continue
			}
			c, ok := m.Claim(p.Namespace, *st.ResourceClaimName)
			if !ok || c.Status.Allocation == nil {
				return whole(fmt.Errorf("pod %s/%s runs on node %s without its claim %s allocated", p.Namespace, p.Name, node.Name, *st.ResourceClaimName))
			}
			results = append(results, c.Status.Allocation.Devices.Results...)
		}
		if int64(len(results))*perGPU != total {
			return whole(fmt.Errorf("pod %s/%s asks for %d GPUs of %dm, its claims were allocated %d devices", p.Namespace, p.Name, total/perGPU, perGPU, len(results)))
		}
		models := strings.Split(p.Annotations[openb.AnnotationGPUModel], "|")
		if models[0] != "" && !slices.Contains(models, g.Model) {
			return whole(fmt.Errorf("pod %s/%s asks for GPU models %v, node %s has %s", p.Namespace, p.Name, models, node.Name, g.Model))
		}
		for _, r := range results {
			id, err := strconv.Atoi(strings.TrimPrefix(r.Device, "gpu-"))
			if r.Driver != openb.DRADriver || r.Pool != node.Name || err != nil || id < 0 || id >= len(g.Free) || !strings.HasPrefix(r.Device, "gpu-") {
				return whole(fmt.Errorf("pod %s/%s on node %s was allocated device %s/%s/%s, not one of the node's GPUs", p.Namespace, p.Name, node.Name, r.Driver, r.Pool, r.Device))
			}
			c, ok := r.ConsumedCapacity[openb.DRACapacity]
			if !ok || c.Value() != perGPU {
				return whole(fmt.Errorf("pod %s/%s asks for %dm of each GPU, its claim consumed %v of %s", p.Namespace, p.Name, perGPU, r.ConsumedCapacity, r.Device))
			}
			g.Free[id] -= perGPU
		}
	}
	return g, nil
}

// ErrNoDRA is the DRA row on a registry without DynamicResources.
var ErrNoDRA = errors.New("the registry has no DynamicResources plugin")

// DRAAvailable reports whether a registry has DRA's plugin.
func DRAAvailable(reg schedcore.Registry) bool {
	_, ok := reg[names.DynamicResources]
	return ok
}

// draTrace puts a trace in the DRA mapping (DRAObjects), its objects read
// by the snapshot loader as any dump of them would be.
func draTrace(tr *replay.Trace) error {
	nodes := make([]*v1.Node, len(tr.Nodes))
	for i, n := range tr.Nodes {
		nodes[i] = n.Node
	}
	pods := make([]*v1.Pod, len(tr.Pods))
	for i, p := range tr.Pods {
		pods[i] = p.Pod
	}
	objs, pods, err := DRAObjects(nodes, pods)
	if err != nil {
		return err
	}
	for i := range tr.Pods {
		tr.Pods[i].Pod = pods[i]
	}
	data, err := v1list.Marshal("json", objs...)
	if err != nil {
		return err
	}
	cl := &snapshot.Cluster{}
	if err := cl.AddData("fgd-dra.json", data); err != nil {
		return err
	}
	if len(cl.Warnings) > 0 {
		return fmt.Errorf("the DRA objects do not load: %s", cl.Warnings[0])
	}
	tr.Objects = cl
	return nil
}

// DRAObjects returns the DRA mapping of a workload: the pods, each GPU pod
// with the claim of its shape's template (copies; the inputs are left as
// they are), and the objects besides nodes and pods: the namespace, the
// DeviceClass, one ResourceSlice per node with GPUs and the templates.
func DRAObjects(nodes []*v1.Node, pods []*v1.Pod) ([]runtime.Object, []*v1.Pod, error) {
	objs := []runtime.Object{openb.NamespaceObject(openb.Options{}), openb.DRADeviceClass()}
	for _, s := range openb.DRAResourceSlices(nodes) {
		objs = append(objs, s)
	}
	out := make([]*v1.Pod, len(pods))
	for i, p := range pods {
		var err error
		if out[i], err = openb.DRAPod(p); err != nil {
			return nil, nil, err
		}
	}
	tmpls, err := openb.DRAClaimTemplates(out)
	if err != nil {
		return nil, nil, err
	}
	for _, t := range tmpls {
		objs = append(objs, t)
	}
	return objs, out, nil
}
