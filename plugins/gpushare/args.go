package gpushare

import (
	"fmt"
	"slices"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// Defaults of GpuShareArgs.
const (
	// DefaultGPUResource is the node allocatable that counts a node's GPUs.
	DefaultGPUResource = "nvidia.com/gpu"
	// DefaultModelLabel is the node label naming its GPU model (the openb
	// mapping's label).
	DefaultModelLabel = "gpu.model"
	// maxGPUsPerNode bounds the GPUs accounted on one node; a larger
	// allocatable is read as this many.
	maxGPUsPerNode = 256
)

// GPU selection methods of GpuShareArgs.gpuSelection, besides the name of a
// score plugin that selects GPUs (a GPUSelector such as FGDScore).
const (
	// SelectBest puts a share on the GPU with the least free thousandths
	// that holds it (the artifact's default, "best").
	SelectBest = "best"
	// SelectWorst puts it on the GPU with the most free thousandths.
	SelectWorst = "worst"
	// SelectRandom puts it on a GPU that holds it, picked with the
	// handle's seeded source.
	SelectRandom = "random"
)

// GpuShareArgs are GpuShare's args.
type GpuShareArgs struct {
	metav1.TypeMeta `json:",inline"`

	// GPUResource is the node allocatable whose value is the node's GPU
	// count (default nvidia.com/gpu). Pods do not request it: they carry
	// their request in annotations.
	GPUResource string `json:"gpuResource,omitempty"`
	// ModelLabel is the node label naming the GPU model (default gpu.model).
	ModelLabel string `json:"modelLabel,omitempty"`
	// GPUSelection picks the GPU(s) of the chosen node at Reserve: best
	// (default), worst, random, or the name of an enabled score plugin that
	// selects GPUs as it scores (FGDScore, DotProductScore with
	// dimExtMethod share).
	GPUSelection string `json:"gpuSelection,omitempty"`
}

// DeepCopyObject implements runtime.Object.
func (a *GpuShareArgs) DeepCopyObject() runtime.Object { c := *a; return &c }

// NewGpuShareArgs returns the empty args the configuration is decoded into.
func NewGpuShareArgs() runtime.Object { return &GpuShareArgs{} }

// argsAs returns a copy of obj as *T (obj must be a *T), or a new T when
// obj is nil.
func argsAs[T any](obj runtime.Object) (*T, error) {
	if obj == nil {
		return new(T), nil
	}
	in, ok := any(obj).(*T)
	if !ok {
		return nil, fmt.Errorf("want args of type %T, got %T", new(T), obj)
	}
	c := *in
	return &c, nil
}

func gpuShareArgs(obj runtime.Object) (*GpuShareArgs, error) {
	a, err := argsAs[GpuShareArgs](obj)
	if err != nil {
		return nil, err
	}
	if a.GPUResource == "" {
		a.GPUResource = DefaultGPUResource
	}
	if a.ModelLabel == "" {
		a.ModelLabel = DefaultModelLabel
	}
	if a.GPUSelection == "" {
		a.GPUSelection = SelectBest
	}
	if errs := validateResourceName(v1.ResourceName(a.GPUResource)); errs != "" {
		return nil, fmt.Errorf("gpuResource: Invalid value: %q: %s", a.GPUResource, errs)
	}
	return a, nil
}

func validateResourceName(n v1.ResourceName) string {
	if n == v1.ResourceCPU || n == v1.ResourceMemory || n == v1.ResourcePods || n == v1.ResourceEphemeralStorage {
		return "must be an extended resource, not a native one"
	}
	return ""
}

// TypicalPod is one pod shape of the workload FGD expects, with its weight
// (a count or a fraction: weights are relative).
type TypicalPod struct {
	// MilliCPU is the pod's CPU request in millicores (non-zero default
	// applied, as scores read it).
	MilliCPU int64 `json:"milliCPU"`
	// GPUMilli is the thousandths of each GPU (0 for a CPU-only pod).
	GPUMilli int64 `json:"gpuMilli,omitempty"`
	// GPUCount is the number of GPUs.
	GPUCount int `json:"gpuCount,omitempty"`
	// GPUModel is the model restriction ("T4|P100"), "" for any.
	GPUModel string `json:"gpuModel,omitempty"`
	// Weight is how often the shape occurs, relative to the others.
	Weight float64 `json:"weight"`
}

// DefaultPopularityThreshold is the artifact's podPopularityThreshold: the
// most frequent shapes covering 95% of the weight are the typical pods.
const DefaultPopularityThreshold = 95

// FGDScoreArgs are FGDScore's args.
type FGDScoreArgs struct {
	metav1.TypeMeta `json:",inline"`

	// TypicalPods is the workload's pod shapes with their weights
	// (required). TypicalPodsOf counts them from a list of pods.
	TypicalPods []TypicalPod `json:"typicalPods,omitempty"`
	// PopularityThreshold is the percentage of the weight the typical pods
	// cover: the most frequent shapes are taken, one at a time, until they
	// reach it (default 95; 100 keeps every shape).
	PopularityThreshold *int32 `json:"popularityThreshold,omitempty"`
}

// DeepCopyObject implements runtime.Object.
func (a *FGDScoreArgs) DeepCopyObject() runtime.Object {
	c := *a
	c.TypicalPods = slices.Clone(a.TypicalPods)
	if a.PopularityThreshold != nil {
		v := *a.PopularityThreshold
		c.PopularityThreshold = &v
	}
	return &c
}

// NewFGDScoreArgs returns the empty args the configuration is decoded into.
func NewFGDScoreArgs() runtime.Object { return &FGDScoreArgs{} }

func fgdArgs(obj runtime.Object) (*FGDScoreArgs, error) {
	if obj == nil {
		return nil, fmt.Errorf("typicalPods: Required value: FGD needs the workload's typical pods")
	}
	in, err := argsAs[FGDScoreArgs](obj)
	if err != nil {
		return nil, err
	}
	a := in.DeepCopyObject().(*FGDScoreArgs)
	if a.PopularityThreshold == nil {
		v := int32(DefaultPopularityThreshold)
		a.PopularityThreshold = &v
	}
	if t := *a.PopularityThreshold; t < 1 || t > 100 {
		return nil, fmt.Errorf("popularityThreshold: Invalid value: %d: must be in [1, 100]", t)
	}
	if len(a.TypicalPods) == 0 {
		return nil, fmt.Errorf("typicalPods: Required value: FGD needs the workload's typical pods")
	}
	seen := map[TypicalPod]int{}
	for i, tp := range a.TypicalPods {
		switch {
		case tp.MilliCPU < 0:
			return nil, fmt.Errorf("typicalPods[%d].milliCPU: Invalid value: %d: must not be negative", i, tp.MilliCPU)
		case tp.GPUMilli < 0 || tp.GPUMilli > MilliPerGPU:
			return nil, fmt.Errorf("typicalPods[%d].gpuMilli: Invalid value: %d: must be in [0, %d]", i, tp.GPUMilli, MilliPerGPU)
		case tp.GPUCount < 0 || tp.GPUCount > maxGPUsPerPod:
			return nil, fmt.Errorf("typicalPods[%d].gpuCount: Invalid value: %d: must be in [0, %d]", i, tp.GPUCount, maxGPUsPerPod)
		case tp.Weight <= 0:
			return nil, fmt.Errorf("typicalPods[%d].weight: Invalid value: %v: must be positive", i, tp.Weight)
		}
		key := tp
		key.Weight = 0
		if j, dup := seen[key]; dup {
			return nil, fmt.Errorf("typicalPods[%d]: Duplicate value: the shape of typicalPods[%d]", i, j)
		}
		seen[key] = i
	}
	return a, nil
}

// Dimension-extension and normalization methods of DotProductScoreArgs.
const (
	// DimExtMerge scores the node's CPU and total free GPU thousandths as
	// one 2-vector.
	DimExtMerge = "merge"
	// DimExtShare scores each partly used GPU and the fully free GPUs
	// together as separate virtual nodes sharing the node's CPU, and
	// selects the best one's GPU.
	DimExtShare = "share"
	// NormMax divides CPU by 128 cores and GPU by 8000 thousandths, the
	// largest node of the artifact's cluster.
	NormMax = "max"
)

// DotProductScoreArgs are DotProductScore's args.
type DotProductScoreArgs struct {
	metav1.TypeMeta `json:",inline"`

	// DimExtMethod is merge (default; the paper's DotProd row) or share.
	DimExtMethod string `json:"dimExtMethod,omitempty"`
	// NormMethod is max (the only one the paper uses).
	NormMethod string `json:"normMethod,omitempty"`
}

// DeepCopyObject implements runtime.Object.
func (a *DotProductScoreArgs) DeepCopyObject() runtime.Object { c := *a; return &c }

// NewDotProductScoreArgs returns the empty args the configuration is
// decoded into.
func NewDotProductScoreArgs() runtime.Object { return &DotProductScoreArgs{} }

func dotProductArgs(obj runtime.Object) (*DotProductScoreArgs, error) {
	a, err := argsAs[DotProductScoreArgs](obj)
	if err != nil {
		return nil, err
	}
	if a.DimExtMethod == "" {
		a.DimExtMethod = DimExtMerge
	}
	if a.NormMethod == "" {
		a.NormMethod = NormMax
	}
	if a.DimExtMethod != DimExtMerge && a.DimExtMethod != DimExtShare {
		return nil, fmt.Errorf("dimExtMethod: Unsupported value: %q: supported values: %q, %q", a.DimExtMethod, DimExtMerge, DimExtShare)
	}
	if a.NormMethod != NormMax {
		return nil, fmt.Errorf("normMethod: Unsupported value: %q: supported values: %q", a.NormMethod, NormMax)
	}
	return a, nil
}
