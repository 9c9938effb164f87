package imagelocality

import (
	"context"
	"strings"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kubectl-sched/kubectl-sched/plugins/names"
	"github.com/kubectl-sched/kubectl-sched/schedcore"
)

// The bounds of the image score range: a reasonable size range for
// compressed container images in registries (kube-scheduler's values).
const (
	mb                    int64 = 1024 * 1024
	minThreshold          int64 = 23 * mb
	maxContainerThreshold int64 = 1000 * mb
)

// Name is the plugin's name in the registry and in configurations.
const Name = names.ImageLocality

// ImageLocality scores nodes by the images of the pod they already hold.
// A node's score depends on its own image summaries (taken when the node
// is copied into the snapshot, so its generation covers them), the pod's
// images and the node count: the framework remembers it per ScoreKey.
type ImageLocality struct {
	handle *schedcore.Handle
}

var (
	_ schedcore.ScorePlugin     = (*ImageLocality)(nil)
	_ schedcore.NodeLocalScorer = (*ImageLocality)(nil)
	_ schedcore.UniformScorer   = (*ImageLocality)(nil)
	_ schedcore.PreScorePlugin  = (*ImageLocality)(nil)
)

// New returns the plugin; it takes no args.
func New(_ context.Context, _ runtime.Object, h *schedcore.Handle) (schedcore.Plugin, error) {
	return &ImageLocality{handle: h}, nil
}

// Name returns the plugin's name.
func (pl *ImageLocality) Name() string { return Name }

// preScoreStateKey holds the cycle's preScoreState.
const preScoreStateKey schedcore.StateKey = "PreScore" + Name

// preScoreState is the pod's image names (normalized, in
// calculatePriority's order: init containers, containers, image volumes),
// looked up on the snapshot's nodes.
type preScoreState struct {
	images schedcore.ImageLookup
}

// Clone returns the state itself: it is never changed once written.
func (s *preScoreState) Clone() schedcore.StateData { return s }

// PreScore resolves the pod's image names once for the cycle: Score then
// reads each node's summaries through the snapshot's image columns
// (schedcore.ImageLookup) rather than each node's ImageStates map. kube's
// plugin has no PreScore; this one never fails nor skips.
func (pl *ImageLocality) PreScore(_ context.Context, state *schedcore.CycleState, pod *v1.Pod, nodes []*schedcore.NodeInfo) *schedcore.Status {
	state.Write(preScoreStateKey, pl.newPreScoreState(pod, len(nodes)))
	return nil
}

// newPreScoreState is the pod's state for scoring about scored nodes.
func (pl *ImageLocality) newPreScoreState(pod *v1.Pod, scored int) *preScoreState {
	snap := pl.handle.Snapshot()
	if snap != nil && snap.NodesWithImages() == 0 {
		snap = nil // no node has images: no columns to build
	}
	return &preScoreState{images: snap.ImageLookup(podImageNames(pod), scored)}
}

// Score sums the spread-scaled sizes of the pod's images present on the
// node and maps the sum onto [0, 100].
func (pl *ImageLocality) Score(_ context.Context, state *schedcore.CycleState, pod *v1.Pod, nodeInfo *schedcore.NodeInfo) (int64, *schedcore.Status) {
	s, err := schedcore.ReadAs[*preScoreState](state, preScoreStateKey)
	if err != nil {
		s = pl.newPreScoreState(pod, 1) // PreScore did not run: this node alone
	}
	sum, count := sumImageScores(nodeInfo, &s.images, pl.handle.Snapshot().NumNodes())
	return calculatePriority(sum, count), nil
}

// ScoreKey is the pod's image list and the node count (imagesKey).
func (pl *ImageLocality) ScoreKey(_ *schedcore.CycleState, pod *v1.Pod, k *schedcore.MemoKey) bool {
	imagesKey(k, pod, pl.handle.Snapshot().NumNodes())
	return true
}

// UniformScore is 0 when no node holds any image: with no image of the
// pod on a node, its score is calculatePriority(0, n), which is 0.
func (pl *ImageLocality) UniformScore(_ *schedcore.CycleState, _ *v1.Pod) (int64, bool) {
	return 0, pl.handle.Snapshot().NodesWithImages() == 0
}

// imagesKey is the pod's image references in Score's order, and the node
// count the spread is scaled by.
func imagesKey(k *schedcore.MemoKey, pod *v1.Pod, totalNumNodes int) *schedcore.MemoKey {
	k.Int(int64(totalNumNodes))
	k.Int(int64(len(pod.Spec.InitContainers)))
	for i := range pod.Spec.InitContainers {
		k.String(pod.Spec.InitContainers[i].Image)
	}
	k.Int(int64(len(pod.Spec.Containers)))
	for i := range pod.Spec.Containers {
		k.String(pod.Spec.Containers[i].Image)
	}
	for i := range pod.Spec.Volumes {
		if img := pod.Spec.Volumes[i].Image; img != nil {
			k.String(img.Reference)
		}
	}
	return k
}

// calculatePriority clamps the summed image scores to
// [minThreshold, imageCount × maxContainerThreshold] and scales them to
// [0, MaxNodeScore].
func calculatePriority(sumScores int64, imageCount int) int64 {
	maxThreshold := maxContainerThreshold * int64(imageCount)
	if sumScores < minThreshold {
		sumScores = minThreshold
	} else if sumScores > maxThreshold {
		sumScores = maxThreshold
	}
	return schedcore.MaxNodeScore * (sumScores - minThreshold) / (maxThreshold - minThreshold)
}

// sumImageScores returns the summed scaled scores of the pod's images on the
// node and the number of image sources: init containers, containers and
// image volumes.
func sumImageScores(nodeInfo *schedcore.NodeInfo, images *schedcore.ImageLookup, totalNumNodes int) (int64, int) {
	var sum int64
	for k := range images.Len() {
		if s := images.Summary(nodeInfo, k); s != nil {
			sum += scaledImageScore(s, totalNumNodes)
		}
	}
	return sum, images.Len()
}

// podImageNames lists the normalized names of the pod's image sources, in
// sumImageScores' order.
func podImageNames(pod *v1.Pod) []string {
	names := make([]string, 0, len(pod.Spec.InitContainers)+len(pod.Spec.Containers))
	for i := range pod.Spec.InitContainers {
		names = append(names, normalizedImageName(pod.Spec.InitContainers[i].Image))
	}
	for i := range pod.Spec.Containers {
		names = append(names, normalizedImageName(pod.Spec.Containers[i].Image))
	}
	for i := range pod.Spec.Volumes {
		if img := pod.Spec.Volumes[i].Image; img != nil {
			names = append(names, normalizedImageName(img.Reference))
		}
	}
	return names
}

// scaledImageScore is the image's size scaled by the fraction of nodes that
// have it, with kube's float arithmetic.
func scaledImageScore(s *schedcore.ImageStateSummary, totalNumNodes int) int64 {
	spread := float64(s.NumNodes) / float64(totalNumNodes)
	return int64(float64(s.Size) * spread)
}

// normalizedImageName is the CRI-style name kube-scheduler looks the image
// up under: a name without a tag gets ":latest" (digests and implicit
// registries are not normalized, as in kube).
func normalizedImageName(image string) string {
	if needsLatest(image) {
		return image + ":latest"
	}
	return image
}

// needsLatest reports whether the image name has no tag after its last "/".
func needsLatest(name string) bool {
	return strings.LastIndex(name, ":") <= strings.LastIndex(name, "/")
}
