// Package plugins holds the in-tree plugins and the one list of them: the
// registry and kube-scheduler v1.37's default profile.
package plugins

import (
	configv1 "k8s.io/kube-scheduler/config/v1"

	"github.com/kubectl-sched/kubectl-sched/plugins/coscheduling"
	"github.com/kubectl-sched/kubectl-sched/plugins/defaultbinder"
	"github.com/kubectl-sched/kubectl-sched/plugins/defaultpreemption"
	"github.com/kubectl-sched/kubectl-sched/plugins/dynamicresources"
	"github.com/kubectl-sched/kubectl-sched/plugins/gangscheduling"
	"github.com/kubectl-sched/kubectl-sched/plugins/gpushare"
	"github.com/kubectl-sched/kubectl-sched/plugins/imagelocality"
	"github.com/kubectl-sched/kubectl-sched/plugins/interpodaffinity"
	"github.com/kubectl-sched/kubectl-sched/plugins/names"
	"github.com/kubectl-sched/kubectl-sched/plugins/nodeaffinity"
	"github.com/kubectl-sched/kubectl-sched/plugins/nodedeclaredfeatures"
	"github.com/kubectl-sched/kubectl-sched/plugins/nodename"
	"github.com/kubectl-sched/kubectl-sched/plugins/nodeports"
	"github.com/kubectl-sched/kubectl-sched/plugins/noderesources"
	"github.com/kubectl-sched/kubectl-sched/plugins/nodeunschedulable"
	"github.com/kubectl-sched/kubectl-sched/plugins/nodevolumelimits"
	"github.com/kubectl-sched/kubectl-sched/plugins/podgrouppodscount"
	"github.com/kubectl-sched/kubectl-sched/plugins/podtopologyspread"
	"github.com/kubectl-sched/kubectl-sched/plugins/queuesort"
	"github.com/kubectl-sched/kubectl-sched/plugins/schedulinggates"
	"github.com/kubectl-sched/kubectl-sched/plugins/tainttoleration"
	"github.com/kubectl-sched/kubectl-sched/plugins/topologyaware"
	"github.com/kubectl-sched/kubectl-sched/plugins/volumebinding"
	"github.com/kubectl-sched/kubectl-sched/plugins/volumerestrictions"
	"github.com/kubectl-sched/kubectl-sched/plugins/volumezone"
	"github.com/kubectl-sched/kubectl-sched/schedcore"
)

// NewInTreeRegistry returns every in-tree plugin by its kube-scheduler name.
func NewInTreeRegistry() schedcore.Registry {
	return schedcore.Registry{
		names.SchedulingGates:                 {Factory: schedulinggates.New},
		names.PrioritySort:                    {Factory: queuesort.New},
		names.NodeName:                        {Factory: nodename.New},
		names.NodeUnschedulable:               {Factory: nodeunschedulable.New},
		names.TaintToleration:                 {Factory: tainttoleration.New},
		names.NodeAffinity:                    {Factory: nodeaffinity.New, NewArgs: nodeaffinity.NewArgs},
		names.NodePorts:                       {Factory: nodeports.New},
		names.NodeResourcesFit:                {Factory: noderesources.NewFit, NewArgs: noderesources.NewFitArgs},
		names.VolumeRestrictions:              {Factory: volumerestrictions.New},
		names.NodeVolumeLimits:                {Factory: nodevolumelimits.New},
		names.VolumeBinding:                   {Factory: volumebinding.New, NewArgs: volumebinding.NewArgs},
		names.VolumeZone:                      {Factory: volumezone.New},
		names.PodTopologySpread:               {Factory: podtopologyspread.New, NewArgs: podtopologyspread.NewArgs},
		names.InterPodAffinity:                {Factory: interpodaffinity.New, NewArgs: interpodaffinity.NewArgs},
		names.DefaultPreemption:               {Factory: defaultpreemption.New, NewArgs: defaultpreemption.NewArgs},
		names.NodeResourcesBalancedAllocation: {Factory: noderesources.NewBalancedAllocation, NewArgs: noderesources.NewBalancedAllocationArgs},
		names.ImageLocality:                   {Factory: imagelocality.New},
		names.DefaultBinder:                   {Factory: defaultbinder.New},
		names.DynamicResources:                {Factory: dynamicresources.New, NewArgs: dynamicresources.NewArgs},
		names.NodeDeclaredFeatures:            {Factory: nodedeclaredfeatures.New},
		// kube's workload-aware scheduling plugins; in the default profile
		// only under their gates (DefaultPluginsFor).
		names.GangScheduling:             {Factory: gangscheduling.New},
		names.TopologyPlacementGenerator: {Factory: topologyaware.New},
		names.PodGroupPodsCount:          {Factory: podgrouppodscount.New},
		// Out of tree in kube (scheduler-plugins); off by default.
		names.Coscheduling: {Factory: coscheduling.New, NewArgs: coscheduling.NewArgs},
		// The FGD paper's GPU-share model and policies; off by default.
		names.GpuShare:           {Factory: gpushare.New, NewArgs: gpushare.NewGpuShareArgs},
		names.RandomScore:        {Factory: gpushare.NewRandom},
		names.DotProductScore:    {Factory: gpushare.NewDotProduct, NewArgs: gpushare.NewDotProductScoreArgs},
		names.GpuClusteringScore: {Factory: gpushare.NewGpuClustering},
		names.GpuPackingScore:    {Factory: gpushare.NewGpuPacking},
		names.BestFitScore:       {Factory: gpushare.NewBestFit},
		names.FGDScore:           {Factory: gpushare.NewFGD, NewArgs: gpushare.NewFGDScoreArgs},
	}
}

// DefaultPlugins returns kube-scheduler v1.37.2's default multiPoint list
// with its score weights, with what its feature gates add at their
// defaults (DefaultPluginsFor(schedcore.DefaultFeatures)).
func DefaultPlugins() *configv1.Plugins { return DefaultPluginsFor(schedcore.DefaultFeatures) }

// DefaultPluginsFor returns kube-scheduler v1.37.2's default multiPoint
// list with its score weights and what the feature gates f add, as kube's
// applyFeatureGates: DynamicResources (weight 2) just before
// DefaultPreemption and NodeDeclaredFeatures appended last (both GA and
// locked on, so always), then GangScheduling appended with
// GenericWorkload, then TopologyPlacementGenerator and PodGroupPodsCount
// (weight 1) appended with TopologyAwareWorkloadScheduling.
func DefaultPluginsFor(f schedcore.Features) *configv1.Plugins {
	w := func(n string, weight int32) configv1.Plugin { return configv1.Plugin{Name: n, Weight: &weight} }
	p := func(n string) configv1.Plugin { return configv1.Plugin{Name: n} }
	enabled := []configv1.Plugin{
		p(names.SchedulingGates),
		p(names.PrioritySort),
		p(names.NodeName),
		p(names.NodeUnschedulable),
		w(names.TaintToleration, 3),
		w(names.NodeAffinity, 2),
		p(names.NodePorts),
		w(names.NodeResourcesFit, 1),
		p(names.VolumeRestrictions),
		p(names.NodeVolumeLimits),
		p(names.VolumeBinding),
		p(names.VolumeZone),
		w(names.PodTopologySpread, 2),
		w(names.InterPodAffinity, 2),
		w(names.DynamicResources, 2),
		p(names.DefaultPreemption),
		w(names.NodeResourcesBalancedAllocation, 1),
		w(names.ImageLocality, 1),
		p(names.DefaultBinder),
		p(names.NodeDeclaredFeatures),
	}
	if f.GenericWorkload {
		enabled = append(enabled, p(names.GangScheduling))
	}
	if f.TopologyAwareWorkloadScheduling {
		enabled = append(enabled, p(names.TopologyPlacementGenerator), w(names.PodGroupPodsCount, 1))
	}
	return &configv1.Plugins{MultiPoint: configv1.PluginSet{Enabled: enabled}}
}
