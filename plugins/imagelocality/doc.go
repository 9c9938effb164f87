// Package imagelocality implements kube-scheduler v1.37's ImageLocality
// plugin: it favours nodes that already hold the pod's images, weighting
// each image by its size and by how widely it has spread, so that pods do
// not all pile onto the few nodes that have an image ("node heating").
//
// Extension points:
//   - Score (no PreScore, no NormalizeScore, as in kube): for every init
//     container, container and image volume whose image (normalized: a name
//     without a tag after its last "/" gets ":latest") is in
//     NodeInfo.ImageStates, add int64(float64(size) * numNodes/totalNodes),
//     where totalNodes is the snapshot's node count. With n = the number of
//     init containers, containers and image volumes, the sum is clamped to
//     [23 MiB, n × 1000 MiB] and the score is
//     100 × (sum − 23 MiB) / (n × 1000 MiB − 23 MiB), in integers.
//
// The framework remembers a node's score per ScoreKey (the pod's images
// and the node count) while the node is unchanged. A node scored afresh
// has its summaries read through schedcore.ImageLookup, which PreScore
// makes once per cycle (the snapshot's image columns, by list position):
// the node's own summaries, without a lookup in its ImageStates map.
//
// Image names on the node side are used as the node reports them
// (status.images[].names); only the pod's image names are normalized.
//
// Args: none.
package imagelocality
