// Package nodedeclaredfeatures implements kube-scheduler v1.37's
// NodeDeclaredFeatures plugin (GA and locked on in v1.37, the last plugin
// of the default profile): a pod that needs a node feature goes only to
// nodes that declare it in status.declaredFeatures.
//
// The features a pod needs are inferred as kube infers them, with
// component-helpers' nodedeclaredfeatures framework for version 1.37.2:
// RestartAllContainersOnContainerExits (a container restartPolicyRules
// action RestartAllContainers), UserNamespacesHostNetworkSupport
// (hostNetwork with hostUsers: false), VolumeBindMountOptions, and the
// others of its registry. Unknown declared names are ignored.
//
// Extension points:
//   - PreFilter: Skip unless the pod needs a feature; the needs go in the
//     cycle state.
//   - Filter: ErrReason, UnschedulableAndUnresolvable, when the node does
//     not declare every needed feature.
//   - EventsToRegister: Node Add or UpdateNodeDeclaredFeature (hint: the
//     declared features changed), and the pod's own updates (hint: its
//     needs changed).
//
// Args: none.
package nodedeclaredfeatures
