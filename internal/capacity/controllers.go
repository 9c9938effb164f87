package capacity

import (
	"fmt"
	"hash/fnv"
	"sort"
	"strconv"

	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/dump"
	"k8s.io/apimachinery/pkg/util/rand"

	"github.com/kubectl-sched/kubectl-sched/internal/snapshot"
)

// deployment is a Deployment's spec: its pods belong to its newest
// ReplicaSet in the cluster (scaling up an existing Deployment), or to the
// ReplicaSet the Deployment controller would create, named and labelled
// with the template's pod-template-hash.
func (l *loader) deployment(d *appsv1.Deployment) *Spec {
	if rs := newestReplicaSet(l.cluster, d); rs != nil {
		pod := templatePod(d.Spec.Template, d.Namespace, owner("apps/v1", KindReplicaSet, rs.Name, rs.UID))
		if h := rs.Labels[appsv1.DefaultDeploymentUniqueLabelKey]; h != "" {
			setLabel(pod, appsv1.DefaultDeploymentUniqueLabelKey, h)
		}
		return &Spec{Kind: KindDeployment, Pod: pod}
	}
	hash := podTemplateHash(&d.Spec.Template)
	name := d.Name + "-" + hash
	rs := &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: d.Namespace, UID: types.UID("capacity-" + d.Namespace + "-" + name),
		Labels:          map[string]string{appsv1.DefaultDeploymentUniqueLabelKey: hash},
		OwnerReferences: []metav1.OwnerReference{owner("apps/v1", KindDeployment, d.Name, d.UID)}}}
	rs.Spec.Template = *d.Spec.Template.DeepCopy()
	if rs.Spec.Template.Labels == nil {
		rs.Spec.Template.Labels = map[string]string{}
	}
	rs.Spec.Template.Labels[appsv1.DefaultDeploymentUniqueLabelKey] = hash
	rs.Spec.Selector = d.Spec.Selector.DeepCopy()
	if rs.Spec.Selector == nil {
		rs.Spec.Selector = &metav1.LabelSelector{}
	}
	if rs.Spec.Selector.MatchLabels == nil {
		rs.Spec.Selector.MatchLabels = map[string]string{}
	}
	rs.Spec.Selector.MatchLabels[appsv1.DefaultDeploymentUniqueLabelKey] = hash
	pod := templatePod(rs.Spec.Template, d.Namespace, owner("apps/v1", KindReplicaSet, rs.Name, rs.UID))
	return &Spec{Kind: KindDeployment, Pod: pod, ReplicaSet: rs}
}

// podTemplateHash is the Deployment controller's ComputeHash without a
// collision count: fnv32a of the template's hash dump, safely encoded.
func podTemplateHash(t *v1.PodTemplateSpec) string {
	h := fnv.New32a()
	fmt.Fprintf(h, "%v", dump.ForHash(*t))
	return rand.SafeEncodeString(fmt.Sprint(h.Sum32()))
}

// newestReplicaSet returns the cluster's ReplicaSet of the Deployment with
// the highest revision, or nil.
func newestReplicaSet(cl *snapshot.Cluster, d *appsv1.Deployment) *appsv1.ReplicaSet {
	if cl == nil {
		return nil
	}
	var owned []*appsv1.ReplicaSet
	for _, rs := range cl.ReplicaSets {
		if rs.Namespace != d.Namespace {
			continue
		}
		if ref := metav1.GetControllerOfNoCopy(rs); ref != nil && ref.Kind == KindDeployment && ref.Name == d.Name {
			owned = append(owned, rs)
		}
	}
	if len(owned) == 0 {
		return nil
	}
	rev := func(rs *appsv1.ReplicaSet) int64 {
		n, _ := strconv.ParseInt(rs.Annotations["deployment.kubernetes.io/revision"], 10, 64)
		return n
	}
	sort.SliceStable(owned, func(i, j int) bool {
		if a, b := rev(owned[i]), rev(owned[j]); a != b {
			return a > b
		}
		return owned[j].CreationTimestamp.Before(&owned[i].CreationTimestamp)
	})
	return owned[0]
}

// find returns the object of the list with that namespace and name, or
// the zero value.
func find[T interface {
	comparable
	GetNamespace() string
	GetName() string
}](list []T, ns, name string) T {
	var zero T
	for _, o := range list {
		if o.GetNamespace() == ns && o.GetName() == name {
			return o
		}
	}
	return zero
}

func findRS(cl *snapshot.Cluster, ns, name string) *appsv1.ReplicaSet {
	if cl == nil {
		return nil
	}
	return find(cl.ReplicaSets, ns, name)
}

func findSS(cl *snapshot.Cluster, ns, name string) *appsv1.StatefulSet {
	if cl == nil {
		return nil
	}
	return find(cl.StatefulSets, ns, name)
}
