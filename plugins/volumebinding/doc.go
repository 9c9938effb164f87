// Package volumebinding implements kube-scheduler v1.37's VolumeBinding
// plugin: a pod's PersistentVolumeClaims (and generic ephemeral volumes'
// claims) must be bound, or bindable on the node.
//
// Extension points:
//   - PreFilter: Skip for pods without claims. UnschedulableAndUnresolvable
//     with kube's messages for a missing claim (`persistentvolumeclaim "x"
//     not found`), a missing ephemeral claim ("waiting for ephemeral volume
//     controller to create the persistentvolumeclaim ..."), a Lost claim, a
//     claim being deleted, and ErrReasonUnboundImmediate for claims that are
//     unbound but not of a WaitForFirstConsumer class (Immediate, no class,
//     unknown class, pre-bound to a PV). A claim counts as bound with
//     spec.volumeName and the pv.kubernetes.io/bind-completed annotation.
//   - Filter (UnschedulableAndUnresolvable, reasons in this order):
//     ErrReasonNodeConflict (a bound PV's node affinity, after in-tree to CSI
//     translation when the CSINode lists the plugin as migrated),
//     ErrReasonBindConflict (no available PV of the class with the size,
//     access modes, volume mode, attributes class, selector and node
//     affinity, and no provisioning: no provisioner, kubernetes.io/no-provisioner,
//     allowedTopologies excluding the node, or a selected-node annotation
//     naming another node), ErrReasonNotEnoughSpace (a CSIDriver with
//     storageCapacity and no CSIStorageCapacity reachable from the node with
//     room), ErrReasonPVNotExist.
//   - PreScore/Score (StorageCapacityScoring, on in v1.37): per storage
//     class, requested*100/capacity of the static bindings (else of the
//     provisioning capacities) through the shape, averaged and rounded;
//     skipped when no node has either (kube scores 0 everywhere then).
//   - Reserve/Unreserve: the chosen PVs get the claimRef and the claims to
//     provision the volume.kubernetes.io/selected-node annotation in the
//     plugin's assume cache (kube's), seen by later cycles; undone on
//     Unreserve.
//   - PreBindPreFlight/PreBind: Skip when all claims were bound; otherwise
//     the assumed objects go to the driver's schedcore.VolumeBinder within
//     bindTimeoutSeconds (dryrun commits them to its state; run writes them
//     to the API server and waits for the claims to be bound).
//   - EventsToRegister: kube's events and hints (StorageClass, PVC, PV,
//     Node, CSINode, CSIDriver, CSIStorageCapacity).
//
// Args (VolumeBindingArgs): bindTimeoutSeconds (default 600, not negative),
// shape (default {0: 10, 100: 0}; utilizations increasing in [0, 100],
// scores in [0, 10]; set without StorageCapacityScoring it is an error).
//
// Deviation: among PVs of equal size kube picks in its informer index's
// (unspecified) order; here the lowest name wins.
package volumebinding
