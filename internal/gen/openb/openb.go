// Package openb converts the Alibaba GPU cluster trace "openb" (clusterdata
// cluster-trace-gpu-v2023, USENIX ATC'23 "Beware of Fragmentation") into
// Kubernetes Nodes and pending Pods, for realistic dry-runs, tests and
// benchmarks.
//
// The mapping is the one the conformance fixture testdata/conformance/openb-400
// was made with; the test in this package checks it object by object, so
// keep it stable:
//
// Nodes (openb_node_list_all_node.csv: sn,cpu_milli,memory_mib,gpu,model):
//   - name = sn; label kubernetes.io/hostname = sn, and gpu.model = model
//     when model is not empty;
//   - capacity = allocatable = cpu: <cpu_milli>m, memory: <memory_mib>Mi,
//     pods: 110, and nvidia.com/gpu: <gpu> when gpu > 0;
//   - condition Ready=True; no taints, no UID, no creationTimestamp.
//
// Pods (openb_pod_list_*.csv: name,cpu_milli,memory_mib,num_gpu,gpu_milli,
// gpu_spec,qos,pod_phase,creation_time,deletion_time,scheduled_time; only
// name, cpu_milli, memory_mib and num_gpu are required):
//   - rows with pod_phase Failed are dropped (they never held resources);
//     Limit counts the rows kept;
//   - every kept pod is pending, whatever its phase in the trace (Running,
//     Succeeded, Pending): status.phase Pending, no spec.nodeName, so the
//     trace replays as one scheduling queue. scheduled_time is not used;
//     deletion_time is used only with Options.Departures (below);
//   - namespace openb; labels app=openb and qos=<qos> (when the column
//     exists); creationTimestamp = Epoch + creation_time seconds (Epoch when
//     the column is missing); no UID, no schedulerName (the default);
//   - one container "main", image registry.example/openb:1, with requests =
//     limits = cpu: <cpu_milli>m, memory: <memory_mib>Mi and, when num_gpu >
//     0, nvidia.com/gpu: <num_gpu>. gpu_milli is not represented: a
//     GPU-sharing pod (gpu_milli < 1000) asks for one whole GPU, which is all
//     plain Kubernetes can express;
//   - a non-empty gpu_spec ("T4|P100") becomes required node affinity
//     gpu.model In [T4, P100].
//
// Options.GPU selects another representation of the GPU request, for the
// FGD paper's GPU-sharing model (docs/fgd.md):
//   - GPUShare: no nvidia.com/gpu request and no node affinity; when
//     num_gpu > 0 the pod carries the GPU-share annotations the gpushare
//     plugins read: gpu-count = num_gpu, gpu-milli = gpu_milli (1000 when
//     the column is missing, clamped to [0, 1000] as the artifact's
//     pod_csv_to_yaml.py does) and, for a non-empty gpu_spec, gpu-model =
//     gpu_spec. Nodes are unchanged: GpuShare counts a node's GPUs from
//     nvidia.com/gpu and reads its model from gpu.model.
//   - GPUDRA: no nvidia.com/gpu request and no node affinity; when
//     num_gpu > 0 the pod has one resource claim "gpu", from the
//     ResourceClaimTemplate of its shape (DRATemplateName; see dra.go for
//     the DeviceClass, ResourceSlices and templates), and keeps the
//     GPU-share annotations as the record of its shape.
//
// Options.KeepFailed keeps the rows with pod_phase Failed, as the FGD
// artifact does (it replays every row of the pod list).
//
// With Options.Departures (the trace `kubectl sched replay` reads), a pod
// also leaves: metadata.deletionTimestamp = Epoch + deletion_time seconds
// when the column is present and not empty. A deletion_time before the
// row's creation_time is an error naming the file and line. Nothing else
// changes, so the pods are the same objects with one more field.
package openb

import (
	"compress/gzip"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Names used by the mapping. Tests, docs and node affinity quote them.
const (
	Namespace     = "openb"
	GPUResource   = v1.ResourceName("nvidia.com/gpu")
	LabelGPUModel = "gpu.model"
	LabelApp      = "app"
	AppValue      = "openb"
	LabelQoS      = "qos"
	ContainerName = "main"
	Image         = "registry.example/openb:1"
	PodsPerNode   = 110
)

// maxValue bounds every number read, far above any real value, so that
// quantities and timestamps cannot overflow.
const maxValue = 1 << 40

// Epoch is the instant creation_time 0 maps to.
var Epoch = time.Date(2026, time.January, 1, 0, 0, 0, 0, time.UTC)

// ErrInvalid marks a malformed trace file.
var ErrInvalid = errors.New("invalid openb trace")

// GPUMapping is how a pod's GPU request is represented.
type GPUMapping string

// The GPU mappings.
const (
	// GPUWhole requests nvidia.com/gpu: num_gpu whole GPUs (the default).
	GPUWhole GPUMapping = ""
	// GPUShare carries num_gpu x gpu_milli in the gpushare annotations.
	GPUShare GPUMapping = "gpushare"
	// GPUDRA claims devices through a ResourceClaimTemplate.
	GPUDRA GPUMapping = "dra"
)

// The GPU-share annotations (plugins/gpushare reads them).
const (
	AnnotationGPUMilli = "gpushare.kubectl-sched.io/gpu-milli"
	AnnotationGPUCount = "gpushare.kubectl-sched.io/gpu-count"
	AnnotationGPUModel = "gpushare.kubectl-sched.io/gpu-model"
)

// Options tune the pod conversion. The zero value is the fixture's mapping
// over the whole file.
type Options struct {
	// Limit keeps the first Limit non-failed pods; 0 keeps all.
	Limit int
	// Namespace overrides "openb".
	Namespace string
	// Epoch overrides Epoch.
	Epoch time.Time
	// GPU is the representation of GPU requests (default GPUWhole).
	GPU GPUMapping
	// KeepFailed keeps the rows whose pod_phase is Failed.
	KeepFailed bool
	// Departures sets each pod's deletionTimestamp from deletion_time, for
	// a replay with departures.
	Departures bool
}

func (o Options) namespace() string {
	if o.Namespace == "" {
		return Namespace
	}
	return o.Namespace
}

func (o Options) epoch() time.Time {
	if o.Epoch.IsZero() {
		return Epoch
	}
	return o.Epoch
}

// NamespaceObject is the Namespace the pods live in.
func NamespaceObject(o Options) *v1.Namespace {
	return &v1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: o.namespace()}}
}

// LoadFiles reads a node list and a pod list from disk; a path ending in
// ".gz" is gunzipped as it is read (the artifact's lists ship compressed).
func LoadFiles(nodesPath, podsPath string, o Options) ([]*v1.Node, []*v1.Pod, error) {
	var nodes []*v1.Node
	err := readFileGz(nodesPath, func(r io.Reader) (err error) {
		nodes, err = ReadNodes(r, nodesPath)
		return err
	})
	if err != nil {
		return nil, nil, err
	}
	var pods []*v1.Pod
	err = readFileGz(podsPath, func(r io.Reader) (err error) {
		pods, err = ReadPods(r, podsPath, o)
		return err
	})
	if err != nil {
		return nil, nil, err
	}
	return nodes, pods, nil
}

// readFileGz hands read the file at path, gunzipped when its name ends in
// ".gz".
func readFileGz(path string, read func(io.Reader) error) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	if !strings.HasSuffix(path, ".gz") {
		return read(f)
	}
	z, err := gzip.NewReader(f)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	defer z.Close()
	return read(z)
}

// ReadNodes converts a node list; file names the input in errors.
func ReadNodes(r io.Reader, file string) ([]*v1.Node, error) {
	t, err := newTable(r, file, "sn", "cpu_milli", "memory_mib", "gpu")
	if err != nil {
		return nil, err
	}
	var nodes []*v1.Node
	seen := map[string]bool{}
	for {
		ok, err := t.next()
		if err != nil {
			return nil, err
		}
		if !ok {
			return nodes, nil
		}
		name := t.str("sn")
		if name == "" {
			return nil, t.errorf("sn: empty node name")
		}
		if seen[name] {
			return nil, t.errorf("sn: duplicate node %q", name)
		}
		seen[name] = true
		cpu, err := t.nonNegative("cpu_milli")
		if err != nil {
			return nil, err
		}
		mem, err := t.nonNegative("memory_mib")
		if err != nil {
			return nil, err
		}
		gpu, err := t.nonNegative("gpu")
		if err != nil {
			return nil, err
		}
		res := v1.ResourceList{
			v1.ResourceCPU:    *resource.NewMilliQuantity(cpu, resource.DecimalSI),
			v1.ResourceMemory: *resource.NewQuantity(mem<<20, resource.BinarySI),
			v1.ResourcePods:   *resource.NewQuantity(PodsPerNode, resource.DecimalSI),
		}
		if gpu > 0 {
			res[GPUResource] = *resource.NewQuantity(gpu, resource.DecimalSI)
		}
		labels := map[string]string{v1.LabelHostname: name}
		if m := t.str("model"); m != "" {
			labels[LabelGPUModel] = m
		}
		nodes = append(nodes, &v1.Node{
			ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels},
			Status: v1.NodeStatus{
				Capacity:    res,
				Allocatable: res.DeepCopy(),
				Conditions:  []v1.NodeCondition{{Type: v1.NodeReady, Status: v1.ConditionTrue}},
			},
		})
	}
}

// ReadPods converts a pod list; file names the input in errors.
func ReadPods(r io.Reader, file string, o Options) ([]*v1.Pod, error) {
	t, err := newTable(r, file, "name", "cpu_milli", "memory_mib", "num_gpu")
	if err != nil {
		return nil, err
	}
	ns, epoch := o.namespace(), o.epoch()
	var pods []*v1.Pod
	seen := map[string]bool{}
	for o.Limit <= 0 || len(pods) < o.Limit {
		ok, err := t.next()
		if err != nil {
			return nil, err
		}
		if !ok {
			break
		}
		if !o.KeepFailed && t.str("pod_phase") == string(v1.PodFailed) {
			continue
		}
		p, err := podFromRow(t, ns, epoch, o.GPU, o.Departures)
		if err != nil {
			return nil, err
		}
		if seen[p.Name] {
			return nil, t.errorf("name: duplicate pod %q", p.Name)
		}
		seen[p.Name] = true
		pods = append(pods, p)
	}
	return pods, nil
}

func podFromRow(t *table, ns string, epoch time.Time, mapping GPUMapping, departures bool) (*v1.Pod, error) {
	name := t.str("name")
	if name == "" {
		return nil, t.errorf("name: empty pod name")
	}
	cpu, err := t.nonNegative("cpu_milli")
	if err != nil {
		return nil, err
	}
	mem, err := t.nonNegative("memory_mib")
	if err != nil {
		return nil, err
	}
	gpu, err := t.nonNegative("num_gpu")
	if err != nil {
		return nil, err
	}
	created := int64(0)
	if t.has("creation_time") {
		if created, err = t.nonNegative("creation_time"); err != nil {
			return nil, err
		}
	}
	milli := int64(MilliPerGPU)
	if t.has("gpu_milli") && gpu > 0 {
		if milli, err = t.integer("gpu_milli"); err != nil {
			return nil, err
		}
		milli = min(max(milli, 0), MilliPerGPU)
	}
	var deleted *metav1.Time
	if departures && t.str("deletion_time") != "" {
		d, err := t.nonNegative("deletion_time")
		if err != nil {
			return nil, err
		}
		if d < created {
			return nil, t.errorf("deletion_time %d is before creation_time %d", d, created)
		}
		dt := metav1.NewTime(epoch.Add(time.Duration(d) * time.Second))
		deleted = &dt
	}
	res := v1.ResourceList{
		v1.ResourceCPU:    *resource.NewMilliQuantity(cpu, resource.DecimalSI),
		v1.ResourceMemory: *resource.NewQuantity(mem<<20, resource.BinarySI),
	}
	if gpu > 0 && mapping == GPUWhole {
		res[GPUResource] = *resource.NewQuantity(gpu, resource.DecimalSI)
	}
	labels := map[string]string{LabelApp: AppValue}
	if t.has("qos") {
		labels[LabelQoS] = t.str("qos")
	}
	p := &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name:              name,
			Namespace:         ns,
			CreationTimestamp: metav1.NewTime(epoch.Add(time.Duration(created) * time.Second)),
			DeletionTimestamp: deleted,
			Labels:            labels,
		},
		Spec: v1.PodSpec{Containers: []v1.Container{{
			Name:      ContainerName,
			Image:     Image,
			Resources: v1.ResourceRequirements{Requests: res, Limits: res.DeepCopy()},
		}}},
		Status: v1.PodStatus{Phase: v1.PodPending},
	}
	var models []string
	for _, m := range strings.Split(t.str("gpu_spec"), "|") {
		if m = strings.TrimSpace(m); m != "" {
			models = append(models, m)
		}
	}
	if (mapping == GPUShare || mapping == GPUDRA) && gpu > 0 && milli > 0 {
		p.Annotations = map[string]string{
			AnnotationGPUCount: strconv.FormatInt(gpu, 10),
			AnnotationGPUMilli: strconv.FormatInt(milli, 10),
		}
		if len(models) > 0 {
			p.Annotations[AnnotationGPUModel] = strings.Join(models, "|")
		}
	}
	switch {
	case mapping == GPUDRA && gpu > 0 && milli > 0:
		withDRAClaim(p, Shape{Count: gpu, Milli: milli, Models: models})
	case mapping == GPUWhole:
		if len(models) > 0 {
			p.Spec.Affinity = &v1.Affinity{NodeAffinity: &v1.NodeAffinity{
				RequiredDuringSchedulingIgnoredDuringExecution: &v1.NodeSelector{
					NodeSelectorTerms: []v1.NodeSelectorTerm{{MatchExpressions: []v1.NodeSelectorRequirement{{
						Key: LabelGPUModel, Operator: v1.NodeSelectorOpIn, Values: models,
					}}}},
				},
			}}
		}
	}
	return p, nil
}

// table reads a CSV with a header row, addressing fields by column name.
type table struct {
	file string
	r    *csv.Reader
	col  map[string]int
	row  []string
	line int
}

func newTable(r io.Reader, file string, required ...string) (*table, error) {
	cr := csv.NewReader(r)
	cr.ReuseRecord = true
	cr.FieldsPerRecord = -1
	head, err := cr.Read()
	if err != nil {
		if errors.Is(err, io.EOF) {
			return nil, fmt.Errorf("%s: %w: empty file, want a header row", file, ErrInvalid)
		}
		return nil, fmt.Errorf("%s: %w: %v", file, ErrInvalid, err)
	}
	t := &table{file: file, r: cr, col: map[string]int{}}
	for i, h := range head {
		t.col[strings.TrimSpace(strings.TrimPrefix(h, "\ufeff"))] = i
	}
	var missing []string
	for _, c := range required {
		if !t.has(c) {
			missing = append(missing, c)
		}
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("%s:1: %w: missing column(s) %s", file, ErrInvalid, strings.Join(missing, ", "))
	}
	cr.FieldsPerRecord = len(head)
	return t, nil
}

func (t *table) next() (bool, error) {
	row, err := t.r.Read()
	if errors.Is(err, io.EOF) {
		return false, nil
	}
	if err != nil {
		var pe *csv.ParseError
		if errors.As(err, &pe) {
			return false, fmt.Errorf("%s:%d: %w: %v", t.file, pe.StartLine, ErrInvalid, pe.Err)
		}
		return false, fmt.Errorf("%s: %w: %v", t.file, ErrInvalid, err)
	}
	t.row = row
	t.line, _ = t.r.FieldPos(0)
	return true, nil
}

func (t *table) has(c string) bool { _, ok := t.col[c]; return ok }

func (t *table) str(c string) string {
	i, ok := t.col[c]
	if !ok {
		return ""
	}
	return strings.TrimSpace(t.row[i])
}

func (t *table) integer(c string) (int64, error) {
	s := t.str(c)
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil || v > maxValue || v < -maxValue {
		return 0, t.errorf("%s: invalid value %q: want an integer", c, s)
	}
	return v, nil
}

func (t *table) nonNegative(c string) (int64, error) {
	s := t.str(c)
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil || v < 0 {
		return 0, t.errorf("%s: invalid value %q: want a non-negative integer", c, s)
	}
	if v > maxValue {
		return 0, t.errorf("%s: value %d is too large", c, v)
	}
	return v, nil
}

func (t *table) errorf(format string, args ...any) error {
	return fmt.Errorf("%s:%d: %w: %s", t.file, t.line, ErrInvalid, fmt.Sprintf(format, args...))
}
