package sweep

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	batchv1 "k8s.io/api/batch/v1"
	v1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"
)

// Labels and annotations of the objects an on-cluster sweep creates. Every
// one carries LabelSweep, so that one selector lists (and deletes) them.
const (
	// LabelSweep names the sweep (the Job) an object belongs to.
	LabelSweep = "sweep.kubectl-sched.io/name"
	// LabelRole says what an object is for: RoleStudy or RoleResult.
	LabelRole = "sweep.kubectl-sched.io/role"
	// AnnotationCell is a result ConfigMap's cell id.
	AnnotationCell = "sweep.kubectl-sched.io/cell"
	// AnnotationHash is a result ConfigMap's cell hash.
	AnnotationHash = "sweep.kubectl-sched.io/hash"

	RoleStudy  = "study"
	RoleResult = "result"
)

// ConfigMapLimit is the most a ConfigMap holds: the API server refuses one
// whose values (data and binaryData) add up to more than 1 MiB.
const ConfigMapLimit = 1 << 20

// configMapBudget is what one study ConfigMap is filled to: the limit less
// room for the keys and metadata.
const configMapBudget = ConfigMapLimit - 16<<10

// StudyMount is where a pod finds the study's ConfigMaps, ResultsMount
// where it writes a cell's result before putting it in its ConfigMap.
const (
	StudyMount   = "/study"
	ResultsMount = "/results"
)

// ClusterOptions say what an on-cluster sweep creates.
type ClusterOptions struct {
	// Name names the Job; the other objects are named after it.
	Name      string
	Namespace string
	// Image runs kubectl-sched as its entrypoint (as deploy/'s does).
	Image string
	// Parallelism is the pods at once (0: the Job controller's default, 1).
	Parallelism int32
	// CellsPerPod is the cells each index runs (0 or 1: one).
	CellsPerPod int
	// ServiceAccount, when set, is an existing account the pods run as
	// (it must be allowed to create and get ConfigMaps); empty creates one with its
	// Role and RoleBinding.
	ServiceAccount string
	// ImageStudy, when set, is the study file's path in the image (a study
	// too large for ConfigMaps is built into the image): no study
	// ConfigMap is made.
	ImageStudy string
	// Requests are each pod's resource requests (its cells run one after
	// another: a replay uses one core).
	Requests v1.ResourceList
}

// ClusterObjects are what an on-cluster sweep creates, in creation order
// by List.
type ClusterObjects struct {
	ServiceAccount *v1.ServiceAccount
	Role           *rbacv1.Role
	RoleBinding    *rbacv1.RoleBinding
	// ConfigMaps hold the study file and every input it names.
	ConfigMaps []*v1.ConfigMap
	Job        *batchv1.Job
}

// List gives the objects in the order they are created (the Job last, so
// that its pods find everything they need).
func (o *ClusterObjects) List() []runtime.Object {
	var out []runtime.Object
	if o.ServiceAccount != nil {
		out = append(out, o.ServiceAccount, o.Role, o.RoleBinding)
	}
	for _, cm := range o.ConfigMaps {
		out = append(out, cm)
	}
	return append(out, o.Job)
}

// Completions is the Job's number of indexes: cells over cells per pod.
func Completions(cells, perPod int) int {
	if perPod < 1 {
		perPod = 1
	}
	return (cells + perPod - 1) / perPod
}

// ChunkCells are the cells index runs when each runs perPod of them.
func ChunkCells(index, perPod, cells int) []int {
	if perPod < 1 {
		perPod = 1
	}
	var out []int
	for i := index * perPod; i < (index+1)*perPod && i < cells; i++ {
		out = append(out, i)
	}
	return out
}

var dnsLabelChars = regexp.MustCompile(`[^a-z0-9-]+`)

// DefaultName is the Job's name when --name is not given: "sweep-" and
// the study file's base name, as a DNS label.
func DefaultName(studyPath string) string {
	base := strings.ToLower(strings.TrimSuffix(filepath.Base(studyPath), filepath.Ext(studyPath)))
	base = strings.Trim(dnsLabelChars.ReplaceAllString(base, "-"), "-")
	name := "sweep-" + base
	if base == "" {
		name = "sweep"
	}
	if len(name) > maxName {
		name = strings.TrimRight(name[:maxName], "-")
	}
	return name
}

// maxName leaves room for the suffixes of the objects named after the Job
// ("-study-NN", "-result-NNNNN") within a DNS label's 63 characters, as the
// Job's own pods need (their names add the index and a random suffix).
const maxName = 40

// CheckName says what is wrong with a sweep's name, or nil.
func CheckName(name string) error {
	if errs := validation.IsDNS1123Label(name); len(errs) > 0 {
		return fmt.Errorf("--name %q: %s", name, errs[0])
	}
	if len(name) > maxName {
		return fmt.Errorf("--name %q: at most %d characters (the ConfigMaps and pods named after it add their suffixes)", name, maxName)
	}
	return nil
}

// StudyConfigMapName is the i-th ConfigMap of a sweep's study.
func StudyConfigMapName(name string, i int) string { return fmt.Sprintf("%s-study-%d", name, i) }

// ResultConfigMapName is the ConfigMap of a cell's result.
func ResultConfigMapName(name string, c Cell) string {
	return fmt.Sprintf("%s-result-%d", name, c.Index)
}

// Labels are the labels of every object of the sweep name.
func Labels(name, role string) map[string]string {
	l := map[string]string{
		"app.kubernetes.io/name":      "kubectl-sched",
		"app.kubernetes.io/component": "sweep",
		LabelSweep:                    name,
	}
	if role != "" {
		l[LabelRole] = role
	}
	return l
}

// inputFile is one file a study reads: its path as the pod sees it below
// the study's root, and where it is on this machine.
type inputFile struct {
	rel, local string
}

// inputs lists the study file and every file its cells read (directories
// walked), relative to their common root: the directory the pod mounts, so
// that the study's relative paths (and so its cells' hashes) are the same
// there. An absolute path in the study cannot be kept so and is refused.
func (p *Plan) inputs() (root, study string, files []inputFile, err error) {
	dir := filepath.Dir(p.Path)
	type named struct{ field, path string }
	var given []named
	for i, t := range p.Study.Axes.Traces {
		for j, f := range t.Files {
			given = append(given, named{fmt.Sprintf("axes.traces[%d].files[%d]", i, j), f})
		}
		if t.OpenbNodes != "" {
			given = append(given, named{fmt.Sprintf("axes.traces[%d].openbNodes", i), t.OpenbNodes}, named{fmt.Sprintf("axes.traces[%d].openbPods", i), t.OpenbPods})
		}
	}
	for i, w := range p.Study.Axes.Workloads {
		for j, f := range w.Files {
			given = append(given, named{fmt.Sprintf("axes.workloads[%d].files[%d]", i, j), f})
		}
		if w.NodeTemplate != "" {
			given = append(given, named{fmt.Sprintf("axes.workloads[%d].nodeTemplate", i), w.NodeTemplate})
		}
	}
	for i, c := range p.Study.Axes.Configs {
		if c.File != "" && c.File != "default" {
			given = append(given, named{fmt.Sprintf("axes.configs[%d].file", i), c.File})
		}
	}
	absDir, err := filepath.Abs(dir)
	if err != nil {
		return "", "", nil, err
	}
	root = absDir
	paths := []string{filepath.Join(absDir, filepath.Base(p.Path))}
	for _, g := range given {
		if filepath.IsAbs(g.path) {
			return "", "", nil, &FieldError{File: p.Path, Field: g.field, Err: fmt.Errorf("%s is an absolute path: the pods find the inputs beside the study, so give it relative to the study file", g.path)}
		}
		abs := filepath.Join(absDir, g.path)
		for !within(root, abs) {
			root = filepath.Dir(root)
		}
		err := filepath.WalkDir(abs, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if !d.IsDir() {
				paths = append(paths, path)
			}
			return nil
		})
		if err != nil {
			return "", "", nil, &FieldError{File: p.Path, Field: g.field, Err: unwrapPath(err)}
		}
	}
	seen := map[string]bool{}
	for _, path := range paths {
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		if seen[rel] {
			continue
		}
		seen[rel] = true
		files = append(files, inputFile{rel: rel, local: path})
	}
	study = files[0].rel
	sort.SliceStable(files[1:], func(i, j int) bool { return files[1+i].rel < files[1+j].rel })
	return root, study, files, nil
}

func within(root, path string) bool {
	rel, err := filepath.Rel(root, path)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, "../")
}

var keyChars = regexp.MustCompile(`[^-._a-zA-Z0-9]+`)

// ClusterObjects builds what an on-cluster sweep creates. A study whose
// files do not fit in ConfigMaps (one file over 1 MiB) is bad input that
// says to build the study into the image.
func (p *Plan) ClusterObjects(o ClusterOptions) (*ClusterObjects, error) {
	objs := &ClusterObjects{}
	studyPath := o.ImageStudy
	var volumes []v1.Volume
	var mounts []v1.VolumeMount
	if o.ImageStudy == "" {
		_, study, files, err := p.inputs()
		if err != nil {
			return nil, err
		}
		studyPath = StudyMount + "/" + study
		var sources []v1.VolumeProjection
		var cm *v1.ConfigMap
		var size int
		for i, f := range files {
			data, err := os.ReadFile(f.local)
			if err != nil {
				return nil, &FieldError{File: p.Path, Err: fmt.Errorf("reading %s: %w", f.local, unwrapPath(err))}
			}
			if len(data) > configMapBudget {
				return nil, &FieldError{File: p.Path, Err: fmt.Errorf("%s is %d bytes: a ConfigMap holds at most 1 MiB; build the study and its inputs into the image and give --image-study PATH (docs/sweep.md)", f.rel, len(data))}
			}
			if cm == nil || size+len(data) > configMapBudget {
				cm = &v1.ConfigMap{
					TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
					ObjectMeta: metav1.ObjectMeta{Name: StudyConfigMapName(o.Name, len(objs.ConfigMaps)), Namespace: o.Namespace, Labels: Labels(o.Name, RoleStudy)},
				}
				objs.ConfigMaps = append(objs.ConfigMaps, cm)
				sources = append(sources, v1.VolumeProjection{ConfigMap: &v1.ConfigMapProjection{LocalObjectReference: v1.LocalObjectReference{Name: cm.Name}}})
				size = 0
			}
			size += len(data)
			base := path.Base(f.rel)
			key := fmt.Sprintf("%03d.%s", i, keyChars.ReplaceAllString(base, "-"))
			if len(key) > 253 {
				key = key[:253]
			}
			if utf8.Valid(data) {
				if cm.Data == nil {
					cm.Data = map[string]string{}
				}
				cm.Data[key] = string(data)
			} else {
				if cm.BinaryData == nil {
					cm.BinaryData = map[string][]byte{}
				}
				cm.BinaryData[key] = data
			}
			src := sources[len(sources)-1].ConfigMap
			src.Items = append(src.Items, v1.KeyToPath{Key: key, Path: f.rel})
		}
		volumes = append(volumes, v1.Volume{Name: "study", VolumeSource: v1.VolumeSource{Projected: &v1.ProjectedVolumeSource{Sources: sources}}})
		mounts = append(mounts, v1.VolumeMount{Name: "study", MountPath: StudyMount, ReadOnly: true})
	}
	volumes = append(volumes, v1.Volume{Name: "results", VolumeSource: v1.VolumeSource{EmptyDir: &v1.EmptyDirVolumeSource{}}})
	mounts = append(mounts, v1.VolumeMount{Name: "results", MountPath: ResultsMount})

	sa := o.ServiceAccount
	if sa == "" {
		sa = o.Name
		meta := metav1.ObjectMeta{Name: o.Name, Namespace: o.Namespace, Labels: Labels(o.Name, "")}
		objs.ServiceAccount = &v1.ServiceAccount{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ServiceAccount"}, ObjectMeta: meta}
		objs.Role = &rbacv1.Role{
			TypeMeta:   metav1.TypeMeta{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "Role"},
			ObjectMeta: meta,
			Rules:      PodRules(),
		}
		objs.RoleBinding = &rbacv1.RoleBinding{
			TypeMeta:   metav1.TypeMeta{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "RoleBinding"},
			ObjectMeta: meta,
			RoleRef:    rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "Role", Name: o.Name},
			Subjects:   []rbacv1.Subject{{Kind: "ServiceAccount", Name: o.Name, Namespace: o.Namespace}},
		}
	}
	completions := int32(Completions(len(p.Cells), o.CellsPerPod))
	args := []string{"sweep", "-f", studyPath, "--on-cluster", "--name", o.Name, "-n", o.Namespace, "--results", ResultsMount, "--workers", "1"}
	if o.CellsPerPod > 1 {
		args = append(args, "--cells-per-pod", strconv.Itoa(o.CellsPerPod))
	}
	args = append(args, "--cell", "$(JOB_COMPLETION_INDEX)")
	parallelism := o.Parallelism
	if parallelism == 0 {
		parallelism = 1
	}
	objs.Job = &batchv1.Job{
		TypeMeta:   metav1.TypeMeta{APIVersion: "batch/v1", Kind: "Job"},
		ObjectMeta: metav1.ObjectMeta{Name: o.Name, Namespace: o.Namespace, Labels: Labels(o.Name, "")},
		Spec: batchv1.JobSpec{
			CompletionMode: ptr.To(batchv1.IndexedCompletion),
			Completions:    &completions,
			Parallelism:    &parallelism,
			// A cell that fails (out of memory, an evicted pod) is
			// retried on its own; the others go on.
			BackoffLimitPerIndex: ptr.To(int32(2)),
			Template: v1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: Labels(o.Name, "")},
				Spec: v1.PodSpec{
					RestartPolicy:      v1.RestartPolicyNever,
					ServiceAccountName: sa,
					SecurityContext: &v1.PodSecurityContext{
						RunAsNonRoot:   ptr.To(true),
						RunAsUser:      ptr.To(int64(65532)),
						SeccompProfile: &v1.SeccompProfile{Type: v1.SeccompProfileTypeRuntimeDefault},
					},
					Containers: []v1.Container{{
						Name:      "sweep",
						Image:     o.Image,
						Args:      args,
						Resources: v1.ResourceRequirements{Requests: o.Requests},
						SecurityContext: &v1.SecurityContext{
							AllowPrivilegeEscalation: ptr.To(false),
							ReadOnlyRootFilesystem:   ptr.To(true),
							Capabilities:             &v1.Capabilities{Drop: []v1.Capability{"ALL"}},
						},
						VolumeMounts: mounts,
					}},
					Volumes: volumes,
				},
			},
		},
	}
	return objs, nil
}

// PodRules are what a sweep's pods may do: create their cell's result
// ConfigMap and read it back (a retried pod finds the result its first
// attempt wrote).
func PodRules() []rbacv1.PolicyRule {
	return []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"get", "create"}}}
}

// Marshal renders the objects for review, as `kubectl create --dry-run=client`
// does: "yaml" is one document per object in creation order, "json" a v1
// List. Fields left unset (creationTimestamp, an empty status) are left out.
func (o *ClusterObjects) Marshal(format string) ([]byte, error) {
	var items []any
	for _, obj := range o.List() {
		m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
		if err != nil {
			return nil, err
		}
		prune(m)
		items = append(items, m)
	}
	var buf bytes.Buffer
	switch format {
	case "json":
		data, err := json.MarshalIndent(map[string]any{"apiVersion": "v1", "kind": "List", "items": items}, "", "    ")
		if err != nil {
			return nil, err
		}
		buf.Write(data)
		buf.WriteByte('\n')
	case "yaml":
		for i, item := range items {
			data, err := yaml.Marshal(item)
			if err != nil {
				return nil, err
			}
			if i > 0 {
				buf.WriteString("---\n")
			}
			buf.Write(data)
		}
	default:
		return nil, fmt.Errorf("unknown format %q (yaml, json)", format)
	}
	return buf.Bytes(), nil
}

// prune drops nil values and empty status maps.
func prune(m map[string]any) {
	for k, v := range m {
		switch v := v.(type) {
		case nil:
			delete(m, k)
		case map[string]any:
			prune(v)
			if k == "status" && len(v) == 0 {
				delete(m, k)
			}
		case []any:
			for _, e := range v {
				if em, ok := e.(map[string]any); ok {
					prune(em)
				}
			}
		}
	}
}
