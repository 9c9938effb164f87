// Package snapshot reads cluster dumps (a v1 List, multi-document YAML or
// JSON, or a directory of them) into typed objects, and writes them back.
package snapshot

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	nodev1 "k8s.io/api/node/v1"
	policyv1 "k8s.io/api/policy/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubectl-sched/kubectl-sched/internal/share"
)

// ErrInvalid marks bad input (exit code 2).
var ErrInvalid = errors.New("invalid input")

// Cluster is the typed content of one or more dump files.
type Cluster struct {
	Nodes                  []*v1.Node
	Pods                   []*v1.Pod
	Namespaces             []*v1.Namespace
	PDBs                   []*policyv1.PodDisruptionBudget
	PVCs                   []*v1.PersistentVolumeClaim
	PVs                    []*v1.PersistentVolume
	StorageClasses         []*storagev1.StorageClass
	CSINodes               []*storagev1.CSINode
	CSIDrivers             []*storagev1.CSIDriver
	CSIStorageCapacities   []*storagev1.CSIStorageCapacity
	Services               []*v1.Service
	ReplicaSets            []*appsv1.ReplicaSet
	StatefulSets           []*appsv1.StatefulSet
	ReplicationControllers []*v1.ReplicationController
	// DaemonSets are kept for drain, which leaves their pods where they
	// are; the scheduler does not read them.
	DaemonSets []*appsv1.DaemonSet
	// PriorityClasses are kept for completeness: pods carry their priority
	// in spec.priority, which is what the engine reads.
	PriorityClasses []*schedulingv1.PriorityClass
	// RuntimeClasses give the pods that name them their overhead and
	// scheduling constraints, as the RuntimeClass admission does
	// (AdmitRuntimeClass).
	RuntimeClasses []*nodev1.RuntimeClass
	// DRA holds the resource.k8s.io objects (DeviceClasses, ResourceSlices,
	// ResourceClaims, ResourceClaimTemplates, DeviceTaintRules).
	DRA DRA
	// Workloads holds the Workload API objects (scheduling.k8s.io/v1beta1
	// Workloads and PodGroups).
	Workloads Workloads
	// Others are objects of kinds the engine reads through other packages
	// (scheduler-plugins' PodGroups), kept unstructured.
	Others []*unstructured.Unstructured
	// Warnings are one line each, for stderr.
	Warnings []string
	// DefaultNamespace is given to pods without a namespace ("" means
	// "default"), as kubectl's --namespace does for files without one.
	DefaultNamespace string
	// Sharer, when set before loading, has the pods and nodes read share
	// their equal parts (internal/share) as they are decoded, on every
	// core, so that the copies die young: for a caller that changes no
	// object's maps or slices in place afterwards (the engine's, with
	// engine.Options.InPlace, which then shares nothing again). Nil: each
	// object keeps its own.
	Sharer *share.Sharer
	// OnProgress, when set, hears how loading goes: a file's objects read
	// of a List's items (total 0 while the file is being parsed).
	OnProgress func(file string, objects, total int)

	// origins maps each loaded Pod and Node to where it was read.
	origins map[any]Origin
	// named maps each read object's group, kind, namespace and name to
	// where it was read: an object named twice is an error.
	named map[string]Origin
}

// Origin is where an object was read: its file, the first line of its
// document, and its place in a List ("items[3]"), if it was in one.
type Origin struct {
	File  string
	Line  int
	Where string
}

// String renders the origin as errors quote it: "file:line" or
// "file:line: items[3]".
func (o Origin) String() string {
	s := o.File
	if o.Line > 0 {
		s = fmt.Sprintf("%s:%d", o.File, o.Line)
	}
	if o.Where != "" {
		s += ": " + o.Where
	}
	return s
}

// OriginOf returns where a loaded *v1.Pod or *v1.Node was read.
func (c *Cluster) OriginOf(obj any) (Origin, bool) {
	o, ok := c.origins[obj]
	return o, ok
}

func (c *Cluster) setOrigin(obj any, o Origin) {
	if c.origins == nil {
		c.origins = map[any]Origin{}
	}
	c.origins[obj] = o
}

// LoadError is a load failure with its file and position.
type LoadError struct {
	File string
	Line int
	Msg  string
}

func (e *LoadError) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Msg)
	}
	return fmt.Sprintf("%s: %s", e.File, e.Msg)
}

// Unwrap makes errors.Is(err, ErrInvalid) true.
func (e *LoadError) Unwrap() error { return ErrInvalid }

// LoadPaths loads files or directories (YAML/JSON files inside, sorted by
// name) into one Cluster. "-" reads standard input.
func LoadPaths(paths []string, stdin io.Reader) (*Cluster, error) {
	c := &Cluster{}
	if err := c.AddPaths(paths, stdin); err != nil {
		return nil, err
	}
	return c, nil
}

// AddPaths loads files or directories into c, as LoadPaths does; then
// unbound claims without a class get the default StorageClass of what c
// holds (defaultClaimClasses), and pods naming a RuntimeClass what it
// gives (admitRuntimeClasses).
func (c *Cluster) AddPaths(paths []string, stdin io.Reader) error {
	if err := c.addPaths(paths, stdin); err != nil {
		return err
	}
	c.defaultClaimClasses()
	c.admitRuntimeClasses()
	return nil
}

func (c *Cluster) addPaths(paths []string, stdin io.Reader) error {
	for _, p := range paths {
		if p == "-" {
			data, err := io.ReadAll(stdin)
			if err != nil {
				return &LoadError{File: "<stdin>", Msg: err.Error()}
			}
			if err := c.AddData("<stdin>", data); err != nil {
				return err
			}
			continue
		}
		st, err := os.Stat(p)
		if err != nil {
			return &LoadError{File: p, Msg: strings.TrimPrefix(err.Error(), "stat "+p+": ")}
		}
		files := []string{p}
		if st.IsDir() {
			if files, err = manifestFiles(p); err != nil {
				return err
			}
			if len(files) == 0 {
				return &LoadError{File: p, Msg: "a directory without *.yaml, *.yml or *.json files"}
			}
			sort.Strings(files)
		}
		for _, f := range files {
			data, err := os.ReadFile(f)
			if err != nil {
				return &LoadError{File: f, Msg: err.Error()}
			}
			if err := c.AddData(f, data); err != nil {
				return err
			}
		}
	}
	return nil
}

// manifestFiles lists the YAML and JSON files under dir, sorted by name.
func manifestFiles(dir string) ([]string, error) {
	var files []string
	err := filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		switch strings.ToLower(filepath.Ext(path)) {
		case ".yaml", ".yml", ".json":
			if !d.IsDir() {
				files = append(files, path)
			}
		}
		return nil
	})
	if err != nil {
		return nil, &LoadError{File: dir, Msg: err.Error()}
	}
	sort.Strings(files)
	return files, nil
}
