package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubectl-sched/kubectl-sched/internal/capacity"
	"github.com/kubectl-sched/kubectl-sched/internal/explain"
	"github.com/kubectl-sched/kubectl-sched/internal/explain/podgroup"
	"github.com/kubectl-sched/kubectl-sched/internal/report"
	"github.com/kubectl-sched/kubectl-sched/internal/snapshot"
	"github.com/kubectl-sched/kubectl-sched/schedcore"
)

// runPodGroup is `explain podgroup NAME` (a PodGroup of the cluster) and
// `explain podgroup -f WORKLOAD.yaml` (a PodGroup and its pods not yet
// created, added to the state as pending): the pod-group cycle of its
// pending members on the state as listed, nothing bound. With
// --node-template, capacity's --min-nodes search says how many such
// nodes make one copy of the group fit beside the running pods.
func (o *ExplainOptions) runPodGroup(ctx context.Context, in *engineInput, eo explain.Options) error {
	cl := in.Cluster
	ns, name := o.namespace, o.Name
	if o.PodFile != "" {
		if !eo.Features.GenericWorkload {
			return AsUsage(podgroup.ErrGenericWorkloadOff)
		}
		var err error
		if cl, ns, name, err = o.withPodGroupFile(cl, eo.Features); err != nil {
			return err
		}
	}
	rep, err := podgroup.Run(ctx, cl, ns, name, eo)
	if err != nil {
		if errors.Is(err, podgroup.ErrNotFound) || errors.Is(err, podgroup.ErrNoPendingMembers) ||
			errors.Is(err, podgroup.ErrGenericWorkloadOff) || errors.Is(err, explain.ErrUnknownProfile) {
			return AsUsage(err)
		}
		return o.engine.runError(err)
	}
	if o.NodeTemplate != "" && !rep.Fits {
		if rep.NodesNeeded, err = o.podGroupNodesNeeded(ctx, in, cl, ns, name); err != nil {
			return err
		}
	}
	var buf bytes.Buffer
	if err := report.WritePodGroupExplain(&buf, rep, o.Output); err != nil {
		return err
	}
	for _, w := range cl.Warnings {
		fmt.Fprintln(o.ErrOut, w)
	}
	_, err = o.Out.Write(buf.Bytes())
	return err
}

// withPodGroupFile reads -f as capacity reads a spec (a v1beta1 PodGroup,
// or a Workload with its PodGroups, and the pods, Jobs or workloads whose
// pods name them; defaulted and validated as the API server would) and
// returns a copy of the cluster with the group and its members added as
// pending, and the name of the group to explain: NAME, or the file's only
// PodGroup.
func (o *ExplainOptions) withPodGroupFile(cl *snapshot.Cluster, f schedcore.Features) (_ *snapshot.Cluster, ns, name string, _ error) {
	specs, err := capacity.LoadSpecsFor([]string{o.PodFile}, o.In, o.namespace, cl, f)
	if err != nil {
		return nil, "", "", asInputError(err)
	}
	var gangs []*capacity.Gang
	var names []string
	for _, s := range specs {
		switch {
		case s.Workload != nil:
			gangs = append(gangs, s.Groups...)
		case s.Gang != nil && s.Gang.PodGroup != nil:
			gangs = append(gangs, s.Gang)
		case s.Gang != nil:
			return nil, "", "", UsageErrorf("%s: PodGroup %s is a scheduler-plugins PodGroup (scheduling.x-k8s.io, the Coscheduling plugin's), not a scheduling.k8s.io/v1beta1 one: explain pod -f explains a member", s.Source, s.Name)
		}
	}
	for _, g := range gangs {
		names = append(names, g.PodGroup.Name)
	}
	if len(gangs) == 0 {
		return nil, "", "", UsageErrorf("%s: no scheduling.k8s.io/v1beta1 PodGroup (give a PodGroup, or a Workload with its PodGroups, and their pods)", o.PodFile)
	}
	name = o.Name
	switch {
	case name == "" && len(gangs) > 1:
		return nil, "", "", UsageErrorf("%s: %d PodGroups (%s): name the one to explain: kubectl sched explain podgroup NAME -f %s", o.PodFile, len(gangs), strings.Join(names, ", "), o.PodFile)
	case name == "":
		name = names[0]
	case !slices.Contains(names, name):
		return nil, "", "", UsageErrorf("%s: no PodGroup %q (it has %s)", o.PodFile, name, strings.Join(names, ", "))
	}
	work := *cl
	work.Pods = slices.Clip(cl.Pods)
	work.Workloads.PodGroups = slices.Clip(cl.Workloads.PodGroups)
	taken := map[string]bool{}
	for _, p := range cl.Pods {
		taken[p.Namespace+"/"+p.Name] = true
	}
	for _, g := range gangs {
		pg := g.PodGroup.DeepCopy()
		for _, have := range cl.Workloads.PodGroups {
			if have.Namespace == pg.Namespace && have.Name == pg.Name {
				return nil, "", "", UsageErrorf("%s: PodGroup %s/%s exists in the cluster already: explain it by name (kubectl sched explain podgroup %s -n %s)", g.Source, pg.Namespace, pg.Name, pg.Name, pg.Namespace)
			}
		}
		pg.UID = types.UID("explain-" + pg.Namespace + "-" + pg.Name)
		pg.ResourceVersion = "1"
		work.Workloads.PodGroups = append(work.Workloads.PodGroups, pg)
		for i, m := range g.Members {
			p := m.DeepCopy()
			if p.Name == "" || taken[p.Namespace+"/"+p.Name] {
				p.Name = memberName(p, pg.Name, i, taken)
			}
			taken[p.Namespace+"/"+p.Name] = true
			p.UID = types.UID("explain-" + p.Namespace + "-" + p.Name)
			work.Pods = append(work.Pods, p)
		}
	}
	for _, g := range gangs {
		if g.PodGroup.Name == name {
			ns = g.PodGroup.Namespace
		}
	}
	return &work, ns, name, nil
}

// memberName names a member made from a template (a Job's, a
// Deployment's) as "<owner>-<i>", or "<group>-<i>" without an owner.
func memberName(p *v1.Pod, group string, i int, taken map[string]bool) string {
	base := group
	if len(p.OwnerReferences) > 0 {
		base = p.OwnerReferences[0].Name
	}
	n := fmt.Sprintf("%s-%d", base, i)
	for j := 1; taken[p.Namespace+"/"+n]; j++ {
		n = fmt.Sprintf("%s-%d-%d", base, i, j)
	}
	return n
}

// podGroupNodesNeeded runs capacity's --min-nodes search for one copy of
// the group (its pending members) with --node-template.
func (o *ExplainOptions) podGroupNodesNeeded(ctx context.Context, in *engineInput, cl *snapshot.Cluster, ns, name string) (*report.PodGroupNodesNeeded, error) {
	tmpl, err := capacity.LoadNodeTemplate(o.NodeTemplate, o.In)
	if err != nil {
		return nil, asInputError(err)
	}
	var gang *capacity.Gang
	for _, pg := range cl.Workloads.PodGroups {
		if pg.Namespace == ns && pg.Name == name {
			gang = &capacity.Gang{PodGroup: pg, Native: true}
		}
	}
	if gang == nil {
		return nil, fmt.Errorf("podgroup %s/%s: not in the cluster", ns, name)
	}
	for _, p := range cl.Pods {
		if n, ok := schedcore.PodGroupNameOf(p); ok && n == name && p.Namespace == ns && p.Spec.NodeName == "" {
			m := p.DeepCopy()
			m.Status = v1.PodStatus{}
			gang.Members = append(gang.Members, m)
		}
	}
	spec := &capacity.Spec{Kind: capacity.KindPodGroup, Name: ns + "/" + name, Gang: gang, Replicas: 1}
	rep, err := capacity.Run(ctx, cl, []*capacity.Spec{spec}, capacity.Options{Config: in.Config, Registry: in.Registry, Features: in.Features,
		Template: tmpl, MinNodes: true, Nearest: -1})
	if err != nil {
		return nil, o.engine.runError(err)
	}
	out := &report.PodGroupNodesNeeded{Template: tmpl.Name}
	if m := rep.MinNodes; m != nil && m.Reachable {
		out.Found, out.Nodes = true, m.NodesNeeded
	} else if m != nil {
		out.Message = m.Message
	}
	return out, nil
}
