package capacity

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubectl-sched/kubectl-sched/internal/snapshot"
	"github.com/kubectl-sched/kubectl-sched/internal/whatif"
)

// copyPods returns the next copy: one pod, or a gang's members with a
// PodGroup of their own (added to the simulation), or a StatefulSet pod
// with its claims (added too).
func (c *counter) copyPods() ([]*v1.Pod, error) {
	s := c.spec
	if s.PodGroupCycle() {
		return c.copyGroups()
	}
	if s.Gang == nil {
		p := c.newPod()
		c.addClaims(p)
		return []*v1.Pod{p}, nil
	}
	g := s.Gang.Group.DeepCopy()
	c.seq++
	name := uniqueName(c.sim, g.GetNamespace(), fmt.Sprintf("%s-%d", g.GetName(), c.seq))
	g.SetName(name)
	g.SetUID(types.UID("capacity-" + g.GetNamespace() + "-" + name))
	g.SetCreationTimestamp(metav1.Time{})
	c.sim.AddObject(g)
	pods := make([]*v1.Pod, len(s.Gang.Members))
	for i, m := range s.Gang.Members {
		p := m.DeepCopy()
		p.Name = uniqueName(c.sim, p.Namespace, fmt.Sprintf("%s-%d", name, i))
		p.UID = types.UID("capacity-" + p.Namespace + "-" + p.Name)
		if s.Gang.Native {
			p.Spec.SchedulingGroup.PodGroupName = &name
		} else {
			setLabel(p, podGroupLabel, name)
		}
		pods[i] = p
	}
	return pods, nil
}

// copyGroups returns the next copy of a spec scheduled by the pod-group
// cycle: each PodGroup of it (renamed "<name>-<copy>", its workloadRef
// naming the Workload's copy) added to the simulation as kube's informer
// delivers a new PodGroup, then its members, named "<group>-<i>", naming
// their group's copy. The groups' names are kept in c.copyNames for the
// report.
func (c *counter) copyGroups() ([]*v1.Pod, error) {
	c.seq++
	c.copyNames = c.copyNames[:0]
	var pods []*v1.Pod
	workload := ""
	if w := c.spec.Workload; w != nil {
		workload = fmt.Sprintf("%s-%d", w.Name, c.seq)
	}
	for _, gang := range c.spec.gangs() {
		pg := gang.PodGroup.DeepCopy()
		name := uniqueGroupName(c.sim, pg.Namespace, fmt.Sprintf("%s-%d", pg.Name, c.seq))
		pg.Name = name
		pg.UID = types.UID("capacity-" + pg.Namespace + "-" + name)
		if workload != "" && pg.Spec.WorkloadRef != nil {
			pg.Spec.WorkloadRef.WorkloadName = workload
		}
		if err := c.sim.AddPodGroup(pg); err != nil {
			return nil, err
		}
		c.copyNames = append(c.copyNames, name)
		for i, m := range gang.Members {
			p := m.DeepCopy()
			p.Name = uniqueName(c.sim, p.Namespace, fmt.Sprintf("%s-%d", name, i))
			p.UID = types.UID("capacity-" + p.Namespace + "-" + p.Name)
			p.Spec.SchedulingGroup.PodGroupName = &name
			pods = append(pods, p)
		}
	}
	return pods, nil
}

// uniqueGroupName is name, or name-i, such that no PodGroup of the
// simulation has it.
func uniqueGroupName(sim *whatif.Sim, ns, name string) string {
	n := name
	for i := 1; sim.HasPodGroup(ns, n); i++ {
		n = fmt.Sprintf("%s-%d", name, i)
	}
	return n
}

// newPod returns a new copy of the spec's pod with a name of its own. The
// copy owns its top-level fields (a StatefulSet's copy its labels too);
// its metadata's and spec's slices, maps and pointers are the template's (a copy's spec is never changed in
// place: the engine's store and cache replace a pod rather than write into
// it, and what capacity changes in a copy, its node, tolerations,
// affinity and volumes, it assigns whole). One deep copy per copy was most
// of capacity's memory: 9.6 GB for 1.7 million copies at 100,000 nodes.
func (c *counter) newPod() *v1.Pod {
	p := shareSpec(c.spec.Pod)
	if c.spec.Kind == KindStatefulSet {
		p.Labels = maps.Clone(p.Labels)
	}
	p.Name = c.nextName()
	if c.spec.Kind == KindStatefulSet {
		setLabel(p, "statefulset.kubernetes.io/pod-name", p.Name)
		setLabel(p, "apps.kubernetes.io/pod-index", fmt.Sprint(c.seq-1))
	}
	p.UID = types.UID("capacity-" + p.Namespace + "-" + p.Name)
	return p
}

// nextName numbers the next copy (c.seq) and returns its name: "<base>-<i>"
// from 0 for a StatefulSet, as its controller names pods, else
// "<base>-capacity-<i>" from 1; a name the simulation has is skipped.
func (c *counter) nextName() string {
	ns := c.spec.Pod.Namespace
	base := c.spec.Pod.Name
	if base == "" {
		base = c.spec.Name[strings.Index(c.spec.Name, "/")+1:]
		if len(c.spec.Pod.OwnerReferences) > 0 && c.spec.Kind != KindStatefulSet {
			base = c.spec.Pod.OwnerReferences[0].Name
		}
	}
	for {
		c.seq++
		var name string
		if c.spec.Kind == KindStatefulSet {
			name = fmt.Sprintf("%s-%d", base, c.seq-1)
		} else {
			name = fmt.Sprintf("%s-capacity-%d", base, c.seq)
		}
		if !c.sim.HasPod(ns, name) {
			return name
		}
	}
}

// shareCopies reports whether the copies a node-local count commits on one
// node can be one pod object standing for all of them
// (whatif.Copies.BindShared): only the node's first copy then exists by
// name. That holds for the last spec, whose copies nothing names one by one
// afterwards: the copy that stops the count is the same pod, without pod
// (anti-)affinity terms (or the count would not be node-local), so no
// explanation of it lists the copies around it, and no later spec's
// copies are named after or beside them. A StatefulSet's copies differ in
// their labels, so each is its own pod.
func (c *counter) shareCopies() bool {
	return c.last && c.spec.Kind != KindStatefulSet && !c.r.noShare
}

// shareSpec copies a pod's top-level fields, its metadata's included;
// the labels and the rest of the metadata, spec and status keep sharing
// t's slices, maps and pointers.
func shareSpec(t *v1.Pod) *v1.Pod {
	p := *t
	return &p
}

func uniqueName(sim *whatif.Sim, ns, name string) string {
	n := name
	for i := 1; sim.HasPod(ns, n); i++ {
		n = fmt.Sprintf("%s-%d", name, i)
	}
	return n
}

// addClaims gives a StatefulSet copy its claims, as the StatefulSet
// controller creates them before the pod: "<template>-<pod>", with the
// default StorageClass when the template names none.
func (c *counter) addClaims(p *v1.Pod) {
	for _, t := range c.spec.ClaimTemplates {
		pvc := &v1.PersistentVolumeClaim{ObjectMeta: *t.ObjectMeta.DeepCopy(), Spec: *t.Spec.DeepCopy()}
		pvc.Name, pvc.Namespace = t.Name+"-"+p.Name, p.Namespace
		pvc.UID = types.UID("capacity-" + pvc.Namespace + "-" + pvc.Name)
		if pvc.Spec.StorageClassName == nil {
			if d := defaultStorageClass(c.r.base); d != "" {
				pvc.Spec.StorageClassName = &d
			}
		}
		c.sim.AddPVC(pvc)
		vol := v1.Volume{Name: t.Name, VolumeSource: v1.VolumeSource{PersistentVolumeClaim: &v1.PersistentVolumeClaimVolumeSource{ClaimName: pvc.Name}}}
		// The volumes are the template's (newPod): the copy gets its own
		// list before one is replaced.
		p.Spec.Volumes = slices.Clone(p.Spec.Volumes)
		replaced := false
		for i := range p.Spec.Volumes {
			if p.Spec.Volumes[i].Name == t.Name {
				p.Spec.Volumes[i] = vol
				replaced = true
			}
		}
		if !replaced {
			p.Spec.Volumes = append(p.Spec.Volumes, vol)
		}
	}
}

// defaultStorageClass is the StorageClass annotated as the default, which
// the DefaultStorageClass admission plugin gives claims without one (the
// newest of several, as kube picks).
func defaultStorageClass(cl *snapshot.Cluster) string {
	return snapshot.DefaultStorageClass(cl.StorageClasses)
}
