// Package nodeaffinity implements kube-scheduler v1.37's NodeAffinity
// plugin: spec.nodeSelector and required node affinity filter nodes,
// preferred node affinity scores them, and the scheduler-wide
// args.addedAffinity applies on top of every pod's own.
//
// Extension points:
//   - PreFilter: Skip when the pod has no nodeSelector (nil), no required
//     node affinity and there is no addedAffinity.required. Otherwise it
//     parses the pod's selector and affinity once into the CycleState. When
//     every required term has "metadata.name In" matchFields, it returns the
//     union over terms of the intersection within each term as
//     PreFilterResult.NodeNames; if that union is empty the pod is rejected
//     with UnschedulableAndUnresolvable and ErrReasonConflict.
//   - Filter: ErrReasonEnforced when the node does not match
//     addedAffinity.required (checked first), ErrReasonPod when it does not
//     match the pod's nodeSelector and required affinity; both
//     UnschedulableAndUnresolvable. Parse errors of the pod's terms are
//     ignored, as kube does, so such a term just matches nothing.
//   - PreScore: Skip when neither the pod (preferred terms nil) nor
//     addedAffinity has preferred terms; an invalid preferred term is an Error.
//   - Score: the sum of the weights of the matching preferred terms, the
//     pod's and addedAffinity's.
//   - NormalizeScore: helper.DefaultNormalizeScore, not reversed.
//   - FilterKey and ScoreKey (schedcore.NodeLocalFilter and NodeLocalScorer):
//     the pod's required, resp. preferred, node constraints; the framework
//     remembers Filter's verdicts (both rejections are shared statuses) and
//     Score's sums per node while the node is unchanged.
//   - EventsToRegister: Node Add|UpdateNodeLabel; the hint queues a node that
//     matches addedAffinity and the pod's required affinity and either is new
//     or did not match before.
//
// Args: k8s.io/kube-scheduler/config/v1 NodeAffinityArgs{addedAffinity}
// (no defaults). Validation errors name the field, e.g.
// "addedAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchExpressions[0].key: ...".
package nodeaffinity
