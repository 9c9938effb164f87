// Package podgrouppodscount is kube-scheduler v1.37's PodGroupPodsCount
// plugin (pkg/scheduler/framework/plugins/podgrouppodscount): among the
// placements where a pod group was found feasible, it favours those that
// hold more of the group's members. The default profile has it, weight 1,
// only with TopologyAwareWorkloadScheduling on (appended to multiPoint
// after TopologyPlacementGenerator, as kube does).
//
// # Extension points
//   - PlacementScore: the group's scheduled members (assumed or bound, as
//     the cycle's snapshot counts them) plus the members placed in the
//     placement.
//   - NormalizePlacementScore: MinScore + score*(MaxScore-MinScore)/max
//     over the placements (integer division); minCount is deliberately not
//     used, so close counts get close scores.
//
// # Args
// None.
//
// # Reasons
// ErrReasonNoPodsAssigned ("no pods from pod group are assigned to any of
// the candidate placements"), an Error from normalization when every
// placement scored 0; a missing pod group state is the snapshot lister's
// error.
package podgrouppodscount
