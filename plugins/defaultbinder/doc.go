// Package defaultbinder implements kube-scheduler v1.37's DefaultBinder
// plugin: it binds the pod through the driver's Binder (Handle.Binder) —
// the in-memory state for dryrun, the pods/binding subresource for run.
//
// Extension points:
//   - Bind: Handle.Binder.Bind(pod, node); its error becomes an Error
//     status. With no Binder (explain, which only diagnoses) it returns an
//     Error status with ErrNoBinder's message rather than pretending to bind.
//
// Args: none.
package defaultbinder
