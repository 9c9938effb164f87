// Package nodevolumelimits implements kube-scheduler v1.37's
// NodeVolumeLimits plugin (CSILimits): the CSI volumes attached to a node
// must stay within its CSINode's per-driver allocatable count.
//
// Extension points:
//   - PreFilter: Skip for pods without claims, generic ephemeral volumes or
//     migratable in-tree inline volumes.
//   - Filter: counts the pod's volumes per driver: from the bound PV's CSI
//     source, from the StorageClass's provisioner for unbound claims, and
//     in-tree volumes (AWS EBS, GCE PD, Azure Disk, Cinder, Portworx)
//     translated with csi-translation-lib when the node has a CSINode, as
//     kube does. A missing claim of the pod is UnschedulableAndUnresolvable;
//     a CSIDriver with preventPodSchedulingIfMissing absent from the CSINode
//     is Unschedulable "<driver> CSI driver is not installed on the node"
//     (VolumeLimitScaling, on in v1.37); the node's pods' volumes (each
//     counted once) plus the new ones over a driver's count is
//     ErrReasonMaxVolumeCountExceeded (Unschedulable).
//   - EventsToRegister: CSINode Add and Update (a limit raised), AssignedPod
//     Delete (pods with volumes), PVC Add (the pod's claims),
//     VolumeAttachment Delete.
//
// Args: none.
//
// Not modelled: VolumeAttachments (kube also counts attachments of CSI PVs
// that no pod on the node uses); snapshots do not carry them.
package nodevolumelimits
