// Package volumerestrictions implements kube-scheduler v1.37's
// VolumeRestrictions plugin.
//
// Extension points:
//   - PreFilter: looks up the pod's claims (missing: UnschedulableAndUnresolvable,
//     `persistentvolumeclaim "x" not found`), counts the scheduled pods using
//     its ReadWriteOncePod claims; Skip when the pod has no GCE PD, AWS EBS,
//     RBD or ISCSI volume and no such claim is in use. AddPod/RemovePod keep
//     the count for nominated pods and preemption.
//   - Filter (Unschedulable): ErrReasonDiskConflict when a pod on the node
//     mounts the same GCE PD (unless both read-only), EBS volume ID, ISCSI
//     IQN (unless both read-only) or RBD image (a shared monitor, same pool
//     and image, unless both read-only); ErrReasonReadWriteOncePodConflict
//     when a ReadWriteOncePod claim of the pod is in use anywhere.
//   - EventsToRegister: AssignedPod Delete (hint: same namespace and a
//     conflicting disk or a shared claim), Node Add, PVC Add (hint: one of
//     the pod's claims).
//
// Args: none.
package volumerestrictions
