package cluster

// WorkloadGates are the feature gates of kube's Workload API and the
// scheduling that reads it: pods naming a PodGroup
// (spec.schedulingGroup) and the pod-group cycle (GenericWorkload, beta,
// off in v1.37), PodGroups' topology constraints
// (TopologyAwareWorkloadScheduling, alpha). Without them kube-apiserver
// drops those fields.
const WorkloadGates = "GenericWorkload=true,TopologyAwareWorkloadScheduling=true"

// WorkloadAPIServerArgs make kube-apiserver v1.37.2 serve the Workload API:
// the gates, and scheduling.k8s.io/v1beta1 (Workloads, PodGroups), which
// is not served by default.
var WorkloadAPIServerArgs = []string{"--feature-gates=" + WorkloadGates, "--runtime-config=scheduling.k8s.io/v1beta1=true"}

// WorkloadSchedulerArgs give kube-scheduler the same gates.
var WorkloadSchedulerArgs = []string{"--feature-gates=" + WorkloadGates}
