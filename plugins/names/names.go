// Package names holds the names of the in-tree plugins, as kube-scheduler
// v1.37 spells them, so plugins, the registry and tests agree.
package names

// Plugin names.
const (
	PrioritySort                    = "PrioritySort"
	DefaultBinder                   = "DefaultBinder"
	DefaultPreemption               = "DefaultPreemption"
	DynamicResources                = "DynamicResources"
	ImageLocality                   = "ImageLocality"
	InterPodAffinity                = "InterPodAffinity"
	NodeAffinity                    = "NodeAffinity"
	NodeName                        = "NodeName"
	NodePorts                       = "NodePorts"
	NodeResourcesBalancedAllocation = "NodeResourcesBalancedAllocation"
	NodeResourcesFit                = "NodeResourcesFit"
	NodeUnschedulable               = "NodeUnschedulable"
	NodeVolumeLimits                = "NodeVolumeLimits"
	PodTopologySpread               = "PodTopologySpread"
	SchedulingGates                 = "SchedulingGates"
	TaintToleration                 = "TaintToleration"
	VolumeBinding                   = "VolumeBinding"
	VolumeRestrictions              = "VolumeRestrictions"
	VolumeZone                      = "VolumeZone"
	NodeDeclaredFeatures            = "NodeDeclaredFeatures"
	GangScheduling                  = "GangScheduling"
	PodGroupPodsCount               = "PodGroupPodsCount"
	TopologyPlacementGenerator      = "TopologyPlacementGenerator"
	Coscheduling                    = "Coscheduling"

	// The GPU-share family (plugins/gpushare), off by default: the FGD
	// paper's GPU-share model and its six scoring policies, named as in
	// its artifact.
	GpuShare           = "GpuShare"
	RandomScore        = "RandomScore"
	DotProductScore    = "DotProductScore"
	GpuClusteringScore = "GpuClusteringScore"
	GpuPackingScore    = "GpuPackingScore"
	BestFitScore       = "BestFitScore"
	FGDScore           = "FGDScore"
)
