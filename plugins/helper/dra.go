package helper

import (
	"k8s.io/dynamic-resource-allocation/structured"

	"github.com/kubectl-sched/kubectl-sched/schedcore"
)

// AllocatorFeatures maps the feature gates to the DRA allocator's
// features, as kube's AllocatorFeatures does. DynamicResources allocates
// with them, and NodeResourcesFit's scoring of DRA-backed extended
// resources picks the allocator's NodeMatches with them, as kube's scorer
// does: one mapping, so that the two cannot disagree on a gate.
func AllocatorFeatures(f schedcore.Features) structured.Features {
	return structured.Features{
		AdminAccess:             f.DRAAdminAccess,
		PrioritizedList:         f.DRAPrioritizedList,
		PartitionableDevices:    f.DRAPartitionableDevices,
		DeviceTaints:            f.DRADeviceTaints,
		DeviceBindingAndStatus:  f.DRADeviceBindingConditions && f.DRAResourceClaimDeviceStatus,
		ConsumableCapacity:      f.DRAConsumableCapacity,
		FractionalCapacityRange: f.DRAFractionalCapacityRange,
	}
}
