package openb

import (
	"fmt"
	"math/rand"
	"sort"
	"strconv"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// GPUMilli returns the GPU thousandths a pod asks for per GPU and in total,
// from its GPU-share annotations (pods read with GPUShare or GPUDRA); 0, 0
// for a pod without GPUs.
func GPUMilli(p *v1.Pod) (perGPU, total int64) {
	c, err1 := strconv.ParseInt(p.Annotations[AnnotationGPUCount], 10, 64)
	m, err2 := strconv.ParseInt(p.Annotations[AnnotationGPUMilli], 10, 64)
	if err1 != nil || err2 != nil || c <= 0 || m <= 0 {
		return 0, 0
	}
	return m, m * c
}

// Workload is one seed's input to the FGD experiment.
type Workload struct {
	// Nodes are the nodes, renamed "<prefix>-<name>" as the artifact
	// renames them (see TunedWorkload).
	Nodes []*v1.Node
	// Pods are in arrival order.
	Pods []*v1.Pod
}

// TunedWorkload builds the FGD artifact's workload for one seed
// (simulator.Simulate with workloadTuningConfig {ratio, seed} and
// shufflePod), drawing from Go's math/rand exactly as the artifact's
// global source does after rand.Seed(seed):
//
//  1. one Int() (the artifact logs a random int right after seeding);
//
//  2. the pods, sorted by name, are shuffled: the arrival order;
//
//  3. while their GPU demand (thousandths) is below ratio x capacityMilli
//     (it is 98% of the cluster for openb's default trace), pods are
//     sampled with replacement from the name-sorted list and appended,
//     named "<name>-tuned-<i>", until the next sample's per-GPU
//     thousandths would pass the target (the artifact compares the
//     per-GPU, not the total, request there); above the target, random
//     pods are removed instead.
//
//  4. the nodes, sorted by name, are renamed "%04d-<name>" with the
//     prefixes of one Perm: the artifact's scheduler (a fork of
//     kube-scheduler v1.20.5) breaks ties between equal scores by the
//     lowest node name, so this is a seeded random priority order among
//     the nodes. (In the artifact other goroutines may draw from the same
//     global source between the tuning and the Perm; here nothing does.)
//
// The pods must carry the GPU-share annotations (Options.GPU GPUShare or
// GPUDRA). The pods are in arrival order, creationTimestamp = epoch + i
// seconds for the i-th, so the queue pops them in that order; the inputs
// are not modified.
func TunedWorkload(nodes []*v1.Node, pods []*v1.Pod, capacityMilli int64, ratio float64, seed int64, epoch time.Time) Workload {
	r := rand.New(rand.NewSource(seed))
	r.Int()
	sorted := append([]*v1.Pod(nil), pods...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].Name < sorted[j].Name })
	order := append([]*v1.Pod(nil), sorted...)
	r.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
	var demand int64
	for _, p := range order {
		_, t := GPUMilli(p)
		demand += t
	}
	target := ratio * float64(capacityMilli)
	switch {
	case ratio <= 0 || float64(demand) == target:
	case float64(demand) > target:
		for float64(demand) > target && len(order) > 0 {
			i := r.Intn(len(order))
			_, t := GPUMilli(order[i])
			order = append(order[:i:i], order[i+1:]...)
			demand -= t
		}
	default:
		for i := 0; ; i++ {
			src := sorted[r.Intn(len(sorted))]
			per, t := GPUMilli(src)
			if float64(demand+per) > target {
				break
			}
			p := src.DeepCopy()
			p.Name = fmt.Sprintf("%s-tuned-%d", src.Name, i)
			p.UID = ""
			demand += t
			order = append(order, p)
		}
	}
	w := Workload{Pods: make([]*v1.Pod, len(order)), Nodes: make([]*v1.Node, len(nodes))}
	for i, p := range order {
		c := p.DeepCopy()
		c.CreationTimestamp = metav1.NewTime(epoch.Add(time.Duration(i) * time.Second))
		w.Pods[i] = c
	}
	for i, n := range nodes {
		w.Nodes[i] = n.DeepCopy()
	}
	sort.Slice(w.Nodes, func(i, j int) bool { return w.Nodes[i].Name < w.Nodes[j].Name })
	for i, idx := range r.Perm(len(w.Nodes)) {
		w.Nodes[i].Name = fmt.Sprintf("%04d-", idx) + w.Nodes[i].Name
	}
	return w
}
