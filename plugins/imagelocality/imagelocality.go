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
)

// New returns the plugin; it takes no args.
func New(_ context.Context, _ runtime.Object, h *schedcore.Handle) (schedcore.Plugin, error) {
	return &ImageLocality{handle: h}, nil
}

// Name returns the plugin's name.
func (pl *ImageLocality) Name() string { return Name }

// Score sums the spread-scaled sizes of the pod's images present on the
// node and maps the sum onto [0, 100].
func (pl *ImageLocality) Score(_ context.Context, _ *schedcore.CycleState, pod *v1.Pod, nodeInfo *schedcore.NodeInfo) (int64, *schedcore.Status) {
	sum, count := sumImageScores(nodeInfo, pod, pl.handle.Snapshot().NumNodes())
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
func sumImageScores(nodeInfo *schedcore.NodeInfo, pod *v1.Pod, totalNumNodes int) (int64, int) {
	if !mayHoldAny(nodeInfo, pod) {
		// None of the pod's images is on the node: every lookup below
		// would find nothing. Most nodes hold none of a pod's images,
		// and their summaries are as many small maps, a cache miss each.
		return 0, imageSources(pod)
	}
	var sum int64
	states := nodeInfo.ImageStates
	for i := range pod.Spec.InitContainers {
		if s := lookup(states, pod.Spec.InitContainers[i].Image); s != nil {
			sum += scaledImageScore(s, totalNumNodes)
		}
	}
	for i := range pod.Spec.Containers {
		if s := lookup(states, pod.Spec.Containers[i].Image); s != nil {
			sum += scaledImageScore(s, totalNumNodes)
		}
	}
	imageCount := len(pod.Spec.InitContainers) + len(pod.Spec.Containers)
	for i := range pod.Spec.Volumes {
		img := pod.Spec.Volumes[i].Image
		if img == nil {
			continue
		}
		if s := lookup(states, img.Reference); s != nil {
			sum += scaledImageScore(s, totalNumNodes)
		}
		imageCount++
	}
	return sum, imageCount
}

// imageSources counts the pod's image sources as sumImageScores does:
// init containers, containers and image volumes.
func imageSources(pod *v1.Pod) int {
	n := len(pod.Spec.InitContainers) + len(pod.Spec.Containers)
	for i := range pod.Spec.Volumes {
		if pod.Spec.Volumes[i].Image != nil {
			n++
		}
	}
	return n
}

// mayHoldAny reports whether the node's image filter
// (schedcore.NodeInfo.MayHoldImage) lets any of the names lookup looks the
// pod's images up under through: false means no lookup would find one.
func mayHoldAny(nodeInfo *schedcore.NodeInfo, pod *v1.Pod) bool {
	for i := range pod.Spec.InitContainers {
		if nodeInfo.MayHoldImage(imageBits(pod.Spec.InitContainers[i].Image)) {
			return true
		}
	}
	for i := range pod.Spec.Containers {
		if nodeInfo.MayHoldImage(imageBits(pod.Spec.Containers[i].Image)) {
			return true
		}
	}
	for i := range pod.Spec.Volumes {
		if img := pod.Spec.Volumes[i].Image; img != nil && nodeInfo.MayHoldImage(imageBits(img.Reference)) {
			return true
		}
	}
	return false
}

// imageBits is the filter bits of the name lookup looks the image up
// under, built in a stack buffer as lookup builds it.
func imageBits(image string) uint64 {
	if !needsLatest(image) {
		return schedcore.ImageNameBits(image)
	}
	var buf [256]byte
	b := append(buf[:0], image...)
	b = append(b, ":latest"...)
	return schedcore.ImageNameBitsOf(b)
}

// scaledImageScore is the image's size scaled by the fraction of nodes that
// have it, with kube's float arithmetic.
func scaledImageScore(s *schedcore.ImageStateSummary, totalNumNodes int) int64 {
	spread := float64(s.NumNodes) / float64(totalNumNodes)
	return int64(float64(s.Size) * spread)
}

// lookup finds the image's state under its normalized name, the CRI-style
// name kube-scheduler looks up: a name without a tag gets ":latest"
// (digests and implicit registries are not normalized, as in kube). That
// key is built in a stack buffer: a map index by string(bytes) does not
// allocate, so the score loop stays allocation-free.
func lookup(states map[string]*schedcore.ImageStateSummary, image string) *schedcore.ImageStateSummary {
	if !needsLatest(image) {
		return states[image]
	}
	var buf [256]byte
	b := append(buf[:0], image...)
	b = append(b, ":latest"...)
	return states[string(b)]
}

// normalizedImageName is the name lookup finds the image under.
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
