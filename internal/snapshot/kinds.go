package snapshot

import "strings"

// Kind is a kind of object a dump holds that the loader reads.
type Kind struct {
	// APIVersion and Kind as in the object.
	APIVersion, Kind string
	// Resource is kubectl's name for it in `kubectl get`; "" for a kind
	// a cluster may not serve (a CRD), which `kubectl get` would refuse.
	Resource string
}

// Kinds are the kinds the loader reads, in the order KubectlGet names them.
// A kind added to the loader is added here: the docs and the help quote
// KubectlGet, and a test loads each kind.
var Kinds = []Kind{
	{"v1", "Node", "nodes"},
	{"v1", "Pod", "pods"},
	{"v1", "Namespace", "namespaces"},
	{"policy/v1", "PodDisruptionBudget", "pdb"},
	{"v1", "PersistentVolumeClaim", "pvc"},
	{"v1", "PersistentVolume", "pv"},
	{"storage.k8s.io/v1", "StorageClass", "storageclass"},
	{"storage.k8s.io/v1", "CSINode", "csinode"},
	{"storage.k8s.io/v1", "CSIDriver", "csidriver"},
	{"storage.k8s.io/v1", "CSIStorageCapacity", "csistoragecapacity"},
	{"v1", "Service", "services"},
	{"apps/v1", "ReplicaSet", "replicasets"},
	{"apps/v1", "StatefulSet", "statefulsets"},
	{"apps/v1", "DaemonSet", "daemonsets"},
	{"v1", "ReplicationController", "replicationcontrollers"},
	{"scheduling.k8s.io/v1", "PriorityClass", "priorityclass"},
	{"node.k8s.io/v1", "RuntimeClass", "runtimeclasses"},
	{"resource.k8s.io/v1", "DeviceClass", "deviceclasses"},
	{"resource.k8s.io/v1", "ResourceSlice", "resourceslices"},
	{"resource.k8s.io/v1", "ResourceClaim", "resourceclaims"},
	{"resource.k8s.io/v1", "ResourceClaimTemplate", "resourceclaimtemplates"},
	// DeviceTaintRules are served only with the DRADeviceTaints gate on.
	{"resource.k8s.io/v1", "DeviceTaintRule", ""},
	// The Workload API is served only with the GenericWorkload gate on.
	{"scheduling.k8s.io/v1beta1", "Workload", ""},
	{"scheduling.k8s.io/v1beta1", "PodGroup", ""},
	// scheduler-plugins' PodGroup CRD (Coscheduling, pods joined by label).
	{"scheduling.x-k8s.io/v1alpha1", "PodGroup", ""},
}

// KubectlGet is the kubectl command that dumps what the loader reads (but
// CRDs, which `kubectl sched snapshot` lists when the cluster serves them).
var KubectlGet = func() string {
	var rs []string
	for _, k := range Kinds {
		if k.Resource != "" {
			rs = append(rs, k.Resource)
		}
	}
	return "kubectl get " + strings.Join(rs, ",") + " -A -o yaml"
}()
