package kube

import (
	"context"
	"fmt"
	"sort"

	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	nodev1 "k8s.io/api/node/v1"
	policyv1 "k8s.io/api/policy/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/metadata"

	"github.com/kubectl-sched/kubectl-sched/internal/snapshot"
)

// Clients are what the verbs use to talk to a cluster.
type Clients struct {
	Kube      kubernetes.Interface
	Dynamic   dynamic.Interface
	Discovery discovery.DiscoveryInterface
	// Metadata lists objects' metadata only (nil: not built): sweep's
	// wait counts result ConfigMaps without downloading them.
	Metadata metadata.Interface
}

// NewClients builds the clients from kubectl's flags. Listing a big cluster
// makes one request per kind and page, so the client-side rate limit is
// raised above client-go's default of 5 per second.
func NewClients(f *genericclioptions.ConfigFlags) (*Clients, error) {
	cfg, err := ToRESTConfig(f)
	if err != nil {
		return nil, err
	}
	cfg.QPS, cfg.Burst = 50, 100
	kc, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	dc, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	mc, err := metadata.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	return &Clients{Kube: kc, Dynamic: dc, Discovery: kc.Discovery(), Metadata: mc}, nil
}

// ListOptions scope ListCluster.
type ListOptions struct {
	// Namespace restricts the namespaced kinds to one namespace ("" = all).
	Namespace string
}

// pageSize is how many objects one list request asks for.
const pageSize = 500

// PodGroupGroups are the API groups whose "podgroups" resource is listed,
// unstructured, when the cluster serves it: scheduler-plugins'
// coscheduling (scheduling.x-k8s.io). kube's own (scheduling.k8s.io/v1beta1)
// is listed typed, with its Workloads (listWorkloadAPI).
var PodGroupGroups = []string{"scheduling.x-k8s.io"}

// ListCluster lists, once and page by page, everything the engine reads:
// nodes, pods, namespaces, PDBs, PVCs, PVs, StorageClasses, CSINodes,
// CSIDrivers, CSIStorageCapacities,
// PriorityClasses, RuntimeClasses, the Services, ReplicaSets, StatefulSets and
// ReplicationControllers that give pods their default spread selector,
// PodGroups and Workloads where the API exists, and the resource.k8s.io/v1 DRA objects. Nodes and pods must be listable; a kind
// the user may not list (Forbidden) or the cluster does not serve
// (NotFound) becomes a warning. Secrets and ConfigMaps are never read.
func ListCluster(ctx context.Context, c *Clients, o ListOptions) (*snapshot.Cluster, error) {
	cl := &snapshot.Cluster{}
	ns := o.Namespace
	core, apps := c.Kube.CoreV1(), c.Kube.AppsV1()
	required := func(what string, err error) error {
		if err != nil {
			return fmt.Errorf("listing %s: %w", what, err)
		}
		return nil
	}
	optional := func(what string, err error) error {
		if err == nil {
			return nil
		}
		if apierrors.IsForbidden(err) || apierrors.IsNotFound(err) {
			cl.Warnings = append(cl.Warnings, fmt.Sprintf("warning: cannot list %s (%v): the snapshot has none", what, err))
			return nil
		}
		return fmt.Errorf("listing %s: %w", what, err)
	}
	var err error
	if cl.Nodes, err = listAll(ctx, core.Nodes().List, func(l *v1.NodeList) []v1.Node { return l.Items }); err != nil {
		return nil, required("nodes", err)
	}
	if cl.Pods, err = listAll(ctx, core.Pods(ns).List, func(l *v1.PodList) []v1.Pod { return l.Items }); err != nil {
		return nil, required("pods", err)
	}
	steps := []struct {
		what string
		run  func() error
	}{
		{"namespaces", func() (e error) {
			cl.Namespaces, e = listAll(ctx, core.Namespaces().List, func(l *v1.NamespaceList) []v1.Namespace { return l.Items })
			return
		}},
		{"poddisruptionbudgets", func() (e error) {
			cl.PDBs, e = listAll(ctx, c.Kube.PolicyV1().PodDisruptionBudgets(ns).List, func(l *policyv1.PodDisruptionBudgetList) []policyv1.PodDisruptionBudget { return l.Items })
			return
		}},
		{"persistentvolumeclaims", func() (e error) {
			cl.PVCs, e = listAll(ctx, core.PersistentVolumeClaims(ns).List, func(l *v1.PersistentVolumeClaimList) []v1.PersistentVolumeClaim { return l.Items })
			return
		}},
		{"persistentvolumes", func() (e error) {
			cl.PVs, e = listAll(ctx, core.PersistentVolumes().List, func(l *v1.PersistentVolumeList) []v1.PersistentVolume { return l.Items })
			return
		}},
		{"storageclasses", func() (e error) {
			cl.StorageClasses, e = listAll(ctx, c.Kube.StorageV1().StorageClasses().List, func(l *storagev1.StorageClassList) []storagev1.StorageClass { return l.Items })
			return
		}},
		{"csinodes", func() (e error) {
			cl.CSINodes, e = listAll(ctx, c.Kube.StorageV1().CSINodes().List, func(l *storagev1.CSINodeList) []storagev1.CSINode { return l.Items })
			return
		}},
		{"csidrivers", func() (e error) {
			cl.CSIDrivers, e = listAll(ctx, c.Kube.StorageV1().CSIDrivers().List, func(l *storagev1.CSIDriverList) []storagev1.CSIDriver { return l.Items })
			return
		}},
		{"csistoragecapacities", func() (e error) {
			cl.CSIStorageCapacities, e = listAll(ctx, c.Kube.StorageV1().CSIStorageCapacities(ns).List, func(l *storagev1.CSIStorageCapacityList) []storagev1.CSIStorageCapacity { return l.Items })
			return
		}},
		{"priorityclasses", func() (e error) {
			cl.PriorityClasses, e = listAll(ctx, c.Kube.SchedulingV1().PriorityClasses().List, func(l *schedulingv1.PriorityClassList) []schedulingv1.PriorityClass { return l.Items })
			return
		}},
		{"runtimeclasses", func() (e error) {
			cl.RuntimeClasses, e = listAll(ctx, c.Kube.NodeV1().RuntimeClasses().List, func(l *nodev1.RuntimeClassList) []nodev1.RuntimeClass { return l.Items })
			return
		}},
		{"services", func() (e error) {
			cl.Services, e = listAll(ctx, core.Services(ns).List, func(l *v1.ServiceList) []v1.Service { return l.Items })
			return
		}},
		{"replicationcontrollers", func() (e error) {
			cl.ReplicationControllers, e = listAll(ctx, core.ReplicationControllers(ns).List, func(l *v1.ReplicationControllerList) []v1.ReplicationController { return l.Items })
			return
		}},
		{"replicasets", func() (e error) {
			cl.ReplicaSets, e = listAll(ctx, apps.ReplicaSets(ns).List, func(l *appsv1.ReplicaSetList) []appsv1.ReplicaSet { return l.Items })
			return
		}},
		{"statefulsets", func() (e error) {
			cl.StatefulSets, e = listAll(ctx, apps.StatefulSets(ns).List, func(l *appsv1.StatefulSetList) []appsv1.StatefulSet { return l.Items })
			return
		}},
	}
	namespacesListed := true
	for _, s := range steps {
		err := s.run()
		if err != nil && s.what == "namespaces" {
			namespacesListed = false
		}
		if err := optional(s.what, err); err != nil {
			return nil, err
		}
	}
	if ns != "" {
		// Only the namespace itself: its labels matter for affinity
		// namespaceSelectors.
		var keep = cl.Namespaces[:0]
		for _, n := range cl.Namespaces {
			if n.Name == ns {
				keep = append(keep, n)
			}
		}
		cl.Namespaces = keep
		if namespacesListed && len(keep) == 0 {
			cl.Warnings = append(cl.Warnings, fmt.Sprintf("warning: namespace %q not found: the snapshot has no pods or other objects of it", ns))
		}
	}
	if err := listPodGroups(ctx, c, ns, cl); err != nil {
		return nil, err
	}
	if err := listWorkloadAPI(ctx, c, ns, cl); err != nil {
		return nil, err
	}
	if err := listDRA(ctx, c, ns, cl); err != nil {
		return nil, err
	}
	return cl, nil
}

// listPodGroups lists the "podgroups" resource of each PodGroupGroups group
// the discovery shows, at the group's preferred version.
func listPodGroups(ctx context.Context, c *Clients, ns string, cl *snapshot.Cluster) error {
	if c.Discovery == nil || c.Dynamic == nil {
		return nil
	}
	groups, err := c.Discovery.ServerGroups()
	if err != nil {
		cl.Warnings = append(cl.Warnings, fmt.Sprintf("warning: API discovery failed (%v): no PodGroups in the snapshot", err))
		return nil
	}
	for _, want := range PodGroupGroups {
		for _, g := range groups.Groups {
			if g.Name != want {
				continue
			}
			// The preferred version may lack podgroups (scheduling.k8s.io
			// prefers v1, which has PriorityClasses only): take the first
			// version, preferred first, that serves them.
			gv, version := "", ""
			var res *metav1.APIResourceList
			versions := append([]metav1.GroupVersionForDiscovery{g.PreferredVersion}, g.Versions...)
			for _, v := range versions {
				rl, err := c.Discovery.ServerResourcesForGroupVersion(v.GroupVersion)
				if err != nil {
					continue
				}
				if hasResource(rl, "podgroups") {
					gv, version, res = v.GroupVersion, v.Version, rl
					break
				}
			}
			if res == nil {
				continue
			}
			for _, r := range res.APIResources {
				if r.Name != "podgroups" {
					continue
				}
				gvr := schema.GroupVersionResource{Group: g.Name, Version: version, Resource: "podgroups"}
				opts := metav1.ListOptions{Limit: pageSize}
				for {
					list, err := c.Dynamic.Resource(gvr).Namespace(ns).List(ctx, opts)
					if err != nil {
						if apierrors.IsForbidden(err) || apierrors.IsNotFound(err) {
							cl.Warnings = append(cl.Warnings, fmt.Sprintf("warning: cannot list %s (%v): the snapshot has none", gvr.GroupResource(), err))
							break
						}
						return fmt.Errorf("listing %s: %w", gvr.GroupResource(), err)
					}
					for i := range list.Items {
						u := list.Items[i]
						if u.GetAPIVersion() == "" {
							u.SetAPIVersion(gv)
						}
						if u.GetKind() == "" {
							u.SetKind("PodGroup")
						}
						cl.Others = append(cl.Others, &u)
					}
					if opts.Continue = list.GetContinue(); opts.Continue == "" {
						break
					}
				}
			}
		}
	}
	sort.SliceStable(cl.Others, func(i, j int) bool {
		return cl.Others[i].GetNamespace()+"/"+cl.Others[i].GetName() < cl.Others[j].GetNamespace()+"/"+cl.Others[j].GetName()
	})
	return nil
}

// listProgressKey carries a WithListProgress callback.
type listProgressKey struct{}

// WithListProgress returns ctx with a callback that ListCluster calls
// after each page it lists, with the number of objects in it (the CLI
// draws a progress line from it), as net/http/httptrace carries its hooks.
func WithListProgress(ctx context.Context, page func(objects int)) context.Context {
	return context.WithValue(ctx, listProgressKey{}, page)
}

// listAll lists every page of one kind and returns pointers to the items.
func listAll[L interface{ GetContinue() string }, T any](ctx context.Context, list func(context.Context, metav1.ListOptions) (L, error), items func(L) []T) ([]*T, error) {
	var out []*T
	opts := metav1.ListOptions{Limit: pageSize}
	progress, _ := ctx.Value(listProgressKey{}).(func(int))
	for {
		l, err := list(ctx, opts)
		if err != nil {
			return nil, err
		}
		page := items(l)
		for i := range page {
			out = append(out, &page[i])
		}
		if progress != nil {
			progress(len(page))
		}
		if opts.Continue = l.GetContinue(); opts.Continue == "" {
			return out, nil
		}
	}
}

func hasResource(rl *metav1.APIResourceList, name string) bool {
	for _, r := range rl.APIResources {
		if r.Name == name {
			return true
		}
	}
	return false
}
