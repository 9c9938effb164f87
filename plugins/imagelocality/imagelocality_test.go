package imagelocality

import (
	"context"
	"fmt"
	"maps"
	"math/rand/v2"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-sched/kubectl-sched/schedcore"
)

func img(size int64, names ...string) v1.ContainerImage {
	return v1.ContainerImage{Names: names, SizeBytes: size}
}

func imageNode(name string, images ...v1.ContainerImage) *v1.Node {
	return &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}, Status: v1.NodeStatus{Images: images}}
}

func containers(images ...string) []v1.Container {
	var out []v1.Container
	for _, i := range images {
		out = append(out, v1.Container{Image: i})
	}
	return out
}

func TestScore(t *testing.T) {
	node403002000 := []v1.ContainerImage{
		img(40*mb, "gcr.io/40:latest", "gcr.io/40:v1", "gcr.io/40:v1"),
		img(300*mb, "gcr.io/300:latest", "gcr.io/300:v1"),
		img(2000*mb, "gcr.io/2000:latest"),
	}
	node25010 := []v1.ContainerImage{img(250*mb, "gcr.io/250:latest"), img(10*mb, "gcr.io/10:latest", "gcr.io/10:v1")}
	node60040900 := []v1.ContainerImage{img(600*mb, "gcr.io/600:latest"), img(40*mb, "gcr.io/40:latest"), img(900*mb, "gcr.io/900:latest")}
	node300600900 := []v1.ContainerImage{img(300*mb, "gcr.io/300:latest"), img(600*mb, "gcr.io/600:latest"), img(900*mb, "gcr.io/900:latest")}
	node400030 := []v1.ContainerImage{img(4000*mb, "gcr.io/4000:latest"), img(30*mb, "gcr.io/30:latest")}
	node203040 := []v1.ContainerImage{img(20*mb, "gcr.io/20:latest"), img(30*mb, "gcr.io/30:latest"), img(40*mb, "gcr.io/40:latest")}

	tests := []struct {
		name  string
		spec  v1.PodSpec
		nodes []*v1.Node
		want  schedcore.NodeScoreList
	}{
		{
			// node1: 40M/2 < 23M → 0; node2: 100*(250M/2-23M)/(2000M-23M) = 5.
			name:  "two images spread on two nodes prefer the node with the larger image",
			spec:  v1.PodSpec{Containers: containers("gcr.io/40", "gcr.io/250")},
			nodes: []*v1.Node{imageNode("node1", node403002000...), imageNode("node2", node25010...)},
			want:  schedcore.NodeScoreList{{Name: "node1", Score: 0}, {Name: "node2", Score: 5}},
		},
		{
			// node1: 100*((40M+300M)/2-23M)/(2000M-23M) = 7.
			name:  "two images on one node prefer that node",
			spec:  v1.PodSpec{Containers: containers("gcr.io/40", "gcr.io/300")},
			nodes: []*v1.Node{imageNode("node1", node403002000...), imageNode("node2", node25010...)},
			want:  schedcore.NodeScoreList{{Name: "node1", Score: 7}, {Name: "node2", Score: 0}},
		},
		{
			name:  "a sum above the maximum threshold is clamped to it",
			spec:  v1.PodSpec{Containers: containers("gcr.io/10", "gcr.io/4000")},
			nodes: []*v1.Node{imageNode("node1", node400030...), imageNode("node2", node25010...)},
			want:  schedcore.NodeScoreList{{Name: "node1", Score: 100}, {Name: "node2", Score: 0}},
		},
		{
			// node1: 100*(4000M/3-23M)/(2000M-23M) = 66.
			name:  "a node without images still counts in the spread",
			spec:  v1.PodSpec{Containers: containers("gcr.io/10", "gcr.io/4000")},
			nodes: []*v1.Node{imageNode("node1", node400030...), imageNode("node2", node25010...), imageNode("node3")},
			want:  schedcore.NodeScoreList{{Name: "node1", Score: 66}, {Name: "node2", Score: 0}, {Name: "node3", Score: 0}},
		},
		{
			// node1: 100*(600M*2/3+900M*2/3-23M)/(3000M-23M) = 32; node2 adds 300M/3: 36.
			name:  "several large images prefer the node holding all of them",
			spec:  v1.PodSpec{Containers: containers("gcr.io/300", "gcr.io/600", "gcr.io/900")},
			nodes: []*v1.Node{imageNode("node1", node60040900...), imageNode("node2", node300600900...), imageNode("node3")},
			want:  schedcore.NodeScoreList{{Name: "node1", Score: 32}, {Name: "node2", Score: 36}, {Name: "node3", Score: 0}},
		},
		{
			// node1: 100*(30M+40M/2-23M)/(2000M-23M) = 1.
			name:  "small images score just above the minimum threshold",
			spec:  v1.PodSpec{Containers: containers("gcr.io/30", "gcr.io/40")},
			nodes: []*v1.Node{imageNode("node1", node203040...), imageNode("node2", node400030...)},
			want:  schedcore.NodeScoreList{{Name: "node1", Score: 1}, {Name: "node2", Score: 0}},
		},
		{
			// node1: 100*(300M/2-23M)/(2000M-23M) = 6.
			name: "an image volume counts as an image",
			spec: v1.PodSpec{
				Containers: containers("gcr.io/30"),
				Volumes:    []v1.Volume{{Name: "iv", VolumeSource: v1.VolumeSource{Image: &v1.ImageVolumeSource{Reference: "gcr.io/300"}}}},
			},
			nodes: []*v1.Node{imageNode("node1", node300600900...), imageNode("node2", node400030...)},
			want:  schedcore.NodeScoreList{{Name: "node1", Score: 6}, {Name: "node2", Score: 0}},
		},
		{
			name:  "the same images as regular containers score the same",
			spec:  v1.PodSpec{Containers: containers("gcr.io/30", "gcr.io/300")},
			nodes: []*v1.Node{imageNode("node1", node300600900...), imageNode("node2", node400030...)},
			want:  schedcore.NodeScoreList{{Name: "node1", Score: 6}, {Name: "node2", Score: 0}},
		},
		{
			name:  "init container images count",
			spec:  v1.PodSpec{Containers: containers("gcr.io/30"), InitContainers: containers("gcr.io/300")},
			nodes: []*v1.Node{imageNode("node1", node403002000...), imageNode("node2", node203040...)},
			want:  schedcore.NodeScoreList{{Name: "node1", Score: 6}, {Name: "node2", Score: 0}},
		},
		{
			// gcr.io/40:v1 is listed twice on node1 but is on one node of two:
			// 100*(300M/2+40M/2-23M)/(2000M-23M) = 7.
			name:  "a name listed twice on one node counts that node once",
			spec:  v1.PodSpec{Containers: containers("gcr.io/40:v1", "gcr.io/300:v1")},
			nodes: []*v1.Node{imageNode("node1", node403002000...), imageNode("node2", node25010...)},
			want:  schedcore.NodeScoreList{{Name: "node1", Score: 7}, {Name: "node2", Score: 0}},
		},
		{
			// Both nodes have it: 100*(300M-23M)/(1000M-23M) = 28.
			name:  "an explicit tag is looked up as is",
			spec:  v1.PodSpec{Containers: containers("gcr.io/300:v1")},
			nodes: []*v1.Node{imageNode("node1", node403002000...), imageNode("node2", img(300*mb, "gcr.io/300:v1"))},
			want:  schedcore.NodeScoreList{{Name: "node1", Score: 28}, {Name: "node2", Score: 28}},
		},
		{
			name:  "a registry port is not taken for a tag",
			spec:  v1.PodSpec{Containers: containers("registry:5000/app")},
			nodes: []*v1.Node{imageNode("node1", img(500*mb, "registry:5000/app:latest")), imageNode("node2", img(500*mb, "registry:5000/app"))},
			want:  schedcore.NodeScoreList{{Name: "node1", Score: 23}, {Name: "node2", Score: 0}},
		},
		{
			// "a@sha256:..." has a ":" after the last "/", so it is not given ":latest".
			name:  "a digest reference is looked up as is",
			spec:  v1.PodSpec{Containers: containers("docker.io/library/nginx@sha256:abc")},
			nodes: []*v1.Node{imageNode("node1", img(500*mb, "docker.io/library/nginx@sha256:abc"))},
			want:  schedcore.NodeScoreList{{Name: "node1", Score: 48}},
		},
	}
	ctx := context.Background()
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			snap := schedcore.NewSnapshot(nil, tc.nodes)
			h := schedcore.NewHandle(snap, 0)
			p, err := New(ctx, nil, h)
			if err != nil {
				t.Fatal(err)
			}
			pod := &v1.Pod{Spec: tc.spec}
			var got schedcore.NodeScoreList
			for _, n := range tc.nodes {
				ni, err := snap.Get(n.Name)
				if err != nil {
					t.Fatal(err)
				}
				sc, s := p.(*ImageLocality).Score(ctx, schedcore.NewCycleState(), pod, ni)
				if !s.IsSuccess() {
					t.Fatalf("Score: %v", s)
				}
				got = append(got, schedcore.NodeScore{Name: n.Name, Score: sc})
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("scores (-want +got):\n%s", diff)
			}
		})
	}
}

func TestCalculatePriority(t *testing.T) {
	tests := []struct {
		name  string
		sum   int64
		count int
		want  int64
	}{
		{name: "below the minimum threshold scores 0", sum: 10 * mb, count: 1, want: 0},
		{name: "the minimum threshold scores 0", sum: minThreshold, count: 1, want: 0},
		{name: "the maximum threshold scores 100", sum: maxContainerThreshold, count: 1, want: 100},
		{name: "above the maximum threshold scores 100", sum: 5 * maxContainerThreshold, count: 2, want: 100},
		{name: "the threshold grows with the image count", sum: maxContainerThreshold, count: 2, want: 100 * (1000*mb - minThreshold) / (2000*mb - minThreshold)},
		{name: "no images scores 0", sum: 0, count: 0, want: 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := calculatePriority(tc.sum, tc.count); got != tc.want {
				t.Errorf("calculatePriority(%d, %d) = %d, want %d", tc.sum, tc.count, got, tc.want)
			}
		})
	}
}

func TestLookupNormalizesImageNames(t *testing.T) {
	tests := []struct{ in, want string }{
		{"nginx", "nginx:latest"},
		{"nginx:1.25", "nginx:1.25"},
		{"gcr.io/40", "gcr.io/40:latest"},
		{"registry:5000/app", "registry:5000/app:latest"},
		{"registry:5000/app:v2", "registry:5000/app:v2"},
		{"nginx@sha256:abc", "nginx@sha256:abc"},
		{"", ":latest"},
	}
	for _, tc := range tests {
		states := map[string]*schedcore.ImageStateSummary{tc.want: {Size: 1, NumNodes: 1}}
		if lookup(states, tc.in) == nil {
			t.Errorf("lookup(%q) did not find %q", tc.in, tc.want)
		}
		if tc.in != tc.want {
			if s := lookup(map[string]*schedcore.ImageStateSummary{tc.in: {Size: 1, NumNodes: 1}}, tc.in); s != nil {
				t.Errorf("lookup(%q) found the name as written, not %q", tc.in, tc.want)
			}
		}
	}
}

func TestScoreDoesNotAllocate(t *testing.T) {
	nodes := []*v1.Node{imageNode("node1", img(300*mb, "gcr.io/300:latest"), img(40*mb, "gcr.io/40:v1"))}
	snap := schedcore.NewSnapshot(nil, nodes)
	p, _ := New(context.Background(), nil, schedcore.NewHandle(snap, 0))
	pl := p.(*ImageLocality)
	ni, _ := snap.Get("node1")
	pod := &v1.Pod{Spec: v1.PodSpec{Containers: containers("gcr.io/300", "gcr.io/40:v1", "nginx")}}
	state := schedcore.NewCycleState()
	allocs := testing.AllocsPerRun(100, func() { _, _ = pl.Score(context.Background(), state, pod, ni) })
	if allocs != 0 {
		t.Errorf("Score allocates %v times per run, want 0", allocs)
	}
}

// TestScoreFilterChangesNoScore compares Score on nodes from the cache,
// whose image filter skips the nodes without the pod's images, with Score
// on copies whose ImageStates were set by hand (the filter off), on nodes
// holding random subsets of the images and pods with random images, tags
// and untagged names, init containers and image volumes.
func TestScoreFilterChangesNoScore(t *testing.T) {
	names := func(i int) []string {
		return []string{fmt.Sprintf("reg.io/app-%02d:v%d", i, 1+i%3), fmt.Sprintf("reg.io/app-%02d@sha256:%02x", i, i), fmt.Sprintf("reg.io/bare-%02d:latest", i)}
	}
	rng := rand.New(rand.NewPCG(1, 2))
	var nodes []*v1.Node
	for n := range 300 {
		var imgs []v1.ContainerImage
		for range rng.IntN(7) {
			imgs = append(imgs, img(int64(1+rng.IntN(1500))*mb, names(rng.IntN(24))...))
		}
		nodes = append(nodes, imageNode(fmt.Sprintf("node-%d", n), imgs...))
	}
	snap := schedcore.NewSnapshot(nil, nodes)
	p, _ := New(context.Background(), nil, schedcore.NewHandle(snap, 0))
	pl := p.(*ImageLocality)
	ref := func(i int) string {
		switch all := names(i); rng.IntN(3) {
		case 0:
			return all[0]
		case 1:
			return all[1]
		default:
			return fmt.Sprintf("reg.io/bare-%02d", i)
		}
	}
	skipped := 0
	for range 100 {
		pod := &v1.Pod{Spec: v1.PodSpec{Containers: containers(ref(rng.IntN(24)))}}
		if rng.IntN(2) == 0 {
			pod.Spec.InitContainers = containers(ref(rng.IntN(24)))
		}
		if rng.IntN(3) == 0 {
			pod.Spec.Volumes = []v1.Volume{{Name: "v", VolumeSource: v1.VolumeSource{Image: &v1.ImageVolumeSource{Reference: ref(rng.IntN(24))}}}}
		}
		for _, ni := range snap.List() {
			byHand := ni.Clone()
			byHand.ImageStates = maps.Clone(ni.ImageStates)
			got, _ := pl.Score(context.Background(), schedcore.NewCycleState(), pod, ni)
			want, _ := pl.Score(context.Background(), schedcore.NewCycleState(), pod, byHand)
			if got != want {
				t.Fatalf("pod %v on %s: score %d with the filter, %d without", pod.Spec, ni.Name(), got, want)
			}
			if !mayHoldAny(ni, pod) {
				skipped++
			}
		}
	}
	if skipped == 0 {
		t.Error("the filter skipped no node: the test does not exercise it")
	}
}
