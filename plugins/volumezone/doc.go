// Package volumezone implements kube-scheduler v1.37's VolumeZone plugin:
// the zone and region labels of the PVs bound to the pod's claims must
// match the node's.
//
// Extension points:
//   - PreFilter: collects the failure-domain.beta / topology.kubernetes.io
//     zone and region labels of the bound PVs (values split on "__"); claims
//     of WaitForFirstConsumer classes not yet bound are skipped. Skip when
//     there are none. UnschedulableAndUnresolvable for a missing claim, PV
//     or StorageClass (the listers' NotFound messages), "PersistentVolume had
//     no name" for an unbound claim of another class, "PersistentVolumeClaim
//     had no pv name and storageClass name", "VolumeBindingMode not set for
//     StorageClass ...".
//   - Filter: nodes without any zone or region label pass; otherwise
//     ErrReasonConflict (UnschedulableAndUnresolvable) unless every PV label
//     is on the node (beta keys falling back to GA) with one of its values.
//   - EventsToRegister: StorageClass Add (WaitForFirstConsumer), Node Add and
//     label updates, PVC Add/Update (the pod's claims), PV Add/Update (a
//     topology label change).
//
// Args: none.
package volumezone
