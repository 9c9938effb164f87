package capacity

import (
	"fmt"
	"io"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	apidefaults "github.com/kubectl-sched/kubectl-sched/internal/defaults"
	"github.com/kubectl-sched/kubectl-sched/internal/snapshot"
)

// LoadNodeTemplate reads the one Node of a node template file ('-' is
// stdin), with the API server's defaults (allocatable is capacity when
// not given). It must offer pods (status.allocatable, or status.capacity,
// with pods): that is what the scheduler reads of a node.
func LoadNodeTemplate(path string, stdin io.Reader) (*v1.Node, error) {
	objs, err := snapshot.ReadObjects([]string{path}, stdin)
	if err != nil {
		return nil, err
	}
	if len(objs) != 1 || objs[0].Kind() != "Node" || apiGroup(objs[0].APIVersion()) != "" {
		kinds := ""
		for i, o := range objs {
			if i > 0 {
				kinds += ", "
			}
			kinds += o.Kind()
		}
		return nil, &snapshot.LoadError{File: path, Msg: fmt.Sprintf("a node template is exactly one v1 Node, found %d objects (%s)", len(objs), kinds)}
	}
	o := objs[0]
	n := &v1.Node{}
	if err := o.Decode(n); err != nil {
		return nil, err
	}
	// The API server's defaults: allocatable is capacity when not given.
	apidefaults.Node(n)
	if len(n.Status.Allocatable) == 0 {
		return nil, o.Errorf("status.allocatable: required: the resources a template node offers pods (cpu, memory, pods, ...); or status.capacity, which it defaults to")
	}
	if q, ok := n.Status.Allocatable[v1.ResourcePods]; !ok || q.Sign() <= 0 {
		return nil, o.Errorf("status.allocatable.pods: required: how many pods a template node holds (a node without it holds none)")
	}
	return n, nil
}

// TemplateNodes returns n nodes made from the template: named
// "<template>-1", "<template>-2", ... (or "<template>-added-<i>" when a
// name is taken by an existing node), with kubernetes.io/hostname set to
// the name, capacity defaulted to allocatable and a Ready condition, as a
// kubelet registering them would.
func TemplateNodes(t *v1.Node, n int, existing []*v1.Node) []*v1.Node {
	if t == nil || n <= 0 {
		return nil
	}
	taken := map[string]bool{}
	for _, e := range existing {
		taken[e.Name] = true
	}
	format := "%s-%d"
	for i := 1; i <= n; i++ {
		if taken[fmt.Sprintf(format, t.Name, i)] {
			format = "%s-added-%d"
			break
		}
	}
	out := make([]*v1.Node, n)
	for i := range out {
		node := t.DeepCopy()
		node.Name = fmt.Sprintf(format, t.Name, i+1)
		node.UID = types.UID("template-" + node.Name)
		node.ResourceVersion = ""
		if node.Labels == nil {
			node.Labels = map[string]string{}
		}
		node.Labels[v1.LabelHostname] = node.Name
		if node.Status.Capacity == nil {
			node.Status.Capacity = v1.ResourceList{}
			for k, v := range node.Status.Allocatable {
				node.Status.Capacity[k] = v.DeepCopy()
			}
		}
		if len(node.Status.Conditions) == 0 {
			node.Status.Conditions = []v1.NodeCondition{{Type: v1.NodeReady, Status: v1.ConditionTrue}}
		}
		out[i] = node
	}
	return out
}
