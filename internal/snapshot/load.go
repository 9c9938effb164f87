// Package snapshot reads cluster dumps (a v1 List, multi-document YAML or
// JSON, or a directory of them) into typed objects, and writes them back.
package snapshot

import (
	"bufio"
	"bytes"
	"encoding/json"
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

	"github.com/kubectl-sched/kubectl-sched/internal/defaults"
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

type doc struct {
	line int
	data []byte
}

// splitDocs splits YAML on "---" lines, remembering each document's first
// line. JSON input is one document.
func splitDocs(data []byte) []doc {
	trimmed := bytes.TrimSpace(data)
	if len(trimmed) > 0 && (trimmed[0] == '{' || trimmed[0] == '[') {
		return []doc{{line: 1, data: data}}
	}
	if docs, ok := splitDocsInPlace(data); ok {
		return docs
	}
	return splitDocsByLines(data)
}

// maxLineInPlace is the longest line splitDocsInPlace takes: longer ones
// are left to the line scanner, which stops at 64 MiB.
const maxLineInPlace = 16 << 20

// splitDocsInPlace is splitDocsByLines without copying the lines: each
// document is a slice of data (the last one copied if data does not end
// in a newline, which the scanner adds). ok is false for data with "\r"
// (which the scanner drops before a newline) or a line too long.
func splitDocsInPlace(data []byte) (docs []doc, ok bool) {
	if bytes.IndexByte(data, '\r') >= 0 {
		return nil, false
	}
	from, start, line := 0, 1, 0
	for off := 0; off < len(data); {
		end := len(data)
		if i := bytes.IndexByte(data[off:], '\n'); i >= 0 {
			end = off + i
		}
		if end-off > maxLineInPlace {
			return nil, false
		}
		line++
		next := min(end+1, len(data))
		if t := data[off:end]; bytes.HasPrefix(t, []byte("---")) && len(bytes.TrimSpace(t[3:])) == 0 {
			docs = append(docs, doc{line: start, data: data[from:off:off]})
			from, start = next, line+1
		}
		off = next
	}
	last := data[from:len(data):len(data)]
	if len(last) > 0 && last[len(last)-1] != '\n' {
		last = append(append(make([]byte, 0, len(last)+1), last...), '\n')
	}
	return append(docs, doc{line: start, data: last}), true
}

// splitDocsByLines splits data as splitDocs does, line by line.
func splitDocsByLines(data []byte) []doc {
	var docs []doc
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 1024*1024), 64*1024*1024)
	var cur bytes.Buffer
	start, line := 1, 0
	for sc.Scan() {
		line++
		t := sc.Text()
		if strings.HasPrefix(t, "---") && strings.TrimSpace(strings.TrimPrefix(t, "---")) == "" {
			docs = append(docs, doc{line: start, data: append([]byte(nil), cur.Bytes()...)})
			cur.Reset()
			start = line + 1
			continue
		}
		cur.WriteString(t)
		cur.WriteByte('\n')
	}
	docs = append(docs, doc{line: start, data: cur.Bytes()})
	return docs
}

// AddData decodes one file's content.
func (c *Cluster) AddData(file string, data []byte) error {
	if c.OnProgress != nil {
		c.OnProgress(file, 0, 0)
	}
	if msg := notObjects(data); msg != "" {
		return &LoadError{File: file, Line: 1, Msg: msg}
	}
	docs := splitDocs(data)
	for from := 0; from < len(docs); from += docBatch {
		batch := docs[from:min(from+docBatch, len(docs))]
		var prepared []preparedDoc
		if typedPath && parallelYAML && len(batch) > 1 {
			// Documents are prepared a batch at a time, on every core:
			// a bad document early in a file is reported without
			// converting the rest first.
			prepared = prepareDocs(batch)
		}
		for i, d := range batch {
			if onlyComments(d.data) {
				continue
			}
			// The typed path decodes straight from the bytes; it declines
			// (having added nothing) what it cannot take exactly as the map
			// path below would, which then also words the errors.
			var p preparedDoc
			switch {
			case prepared != nil:
				p = prepared[i]
			case typedPath:
				p = prepareDoc(d)
			default:
				p.decline = true
			}
			if ok, err := c.addPrepared(file, d, p); ok || err != nil {
				if err != nil {
					return err
				}
				continue
			}
			obj, err := decodeDocJSON(file, d, p.js)
			if err != nil {
				return err
			}
			if obj == nil {
				continue
			}
			if err := c.addObject(file, d.line, "", obj); err != nil {
				return err
			}
		}
	}
	return nil
}

// docBatch is how many documents of a file are prepared at a time.
const docBatch = 512

// addObject adds one decoded document (or each item of a List) to the
// cluster; where names the item within the document ("items[3]").
func (c *Cluster) addObject(file string, line int, where string, obj map[string]any) error {
	kind, _ := obj["kind"].(string)
	apiVersion, _ := obj["apiVersion"].(string)
	meta, _ := obj["metadata"].(map[string]any)
	name, _ := meta["name"].(string)
	ns, _ := meta["namespace"].(string)
	ident := objectIdent(where, kind, meta)
	fail := func(msg string) error {
		return &LoadError{File: file, Line: line, Msg: strings.TrimSpace(ident + ": " + msg)}
	}
	if kind == "" {
		return fail("missing kind")
	}
	if strings.HasSuffix(kind, "List") {
		return c.addList(file, line, kind, obj, fail)
	}
	switch {
	case kind == "KubeSchedulerConfiguration":
		return fail("a scheduler configuration, not cluster state: give it with --config")
	case kind == "Config" && obj["clusters"] != nil:
		return fail("a kubeconfig, not cluster state: give it with --kubeconfig, or dump the cluster with 'kubectl sched snapshot -A'")
	case name == "":
		return fail("metadata.name: required")
	}
	if err := checkQuantities(kind, obj); err != nil {
		return fail(err.Error())
	}
	raw, _ := json.Marshal(obj)
	decode := func(into any) error {
		if err := json.Unmarshal(raw, into); err != nil {
			// addNamed words it: the object's name may gain its namespace.
			return decodeError(strings.TrimPrefix(err.Error(), "json: "))
		}
		return nil
	}
	return c.addNamed(file, line, where, ident, apiVersion, kind, name, ns, obj, decode)
}

// addNamed adds an object whose header was checked: it records its name
// (an object named twice is an error) and decodes it into its list. obj is
// the decoded map, nil when the typed path decoded the object (which it
// does only for kinds addTyped decodes without the map).
func (c *Cluster) addNamed(file string, line int, where, ident, apiVersion, kind, name, ns string, obj map[string]any, decode func(any) error) error {
	// fail reads ident when called: a pod's gains its namespace below.
	fail := func(msg string) error {
		return &LoadError{File: file, Line: line, Msg: strings.TrimSpace(ident + ": " + msg)}
	}
	group := ""
	if i := strings.Index(apiVersion, "/"); i >= 0 {
		group = apiVersion[:i]
	}
	if name != "" && readKind(group, kind) {
		// Two objects of one name would both count (a node's room twice,
		// a pod placed twice); the API server holds one.
		key := group + "/" + kind + "/" + ns + "/" + name
		if ns == "" && kind == "Pod" && group == "" {
			key = "/Pod/" + c.DefaultNamespace + "/" + name
			if c.DefaultNamespace == "" {
				key = "/Pod/default/" + name
			}
			ident = strings.Replace(ident, "Pod "+name, "Pod "+strings.Split(key, "/")[2]+"/"+name, 1)
		}
		here := Origin{File: file, Line: line, Where: where}
		if prev, ok := c.named[key]; ok {
			return fail("named twice (also at " + prev.String() + ")")
		}
		if c.named == nil {
			c.named = map[string]Origin{}
		}
		c.named[key] = here
	}
	handled, err := c.addTyped(kind, group, obj, decode, Origin{File: file, Line: line, Where: where})
	if !handled {
		handled, err = c.addDRA(apiVersion, kind, decode, fail)
	}
	if !handled {
		handled, err = c.addWorkloadAPI(apiVersion, kind, decode, fail)
	}
	if de, ok := err.(decodeError); ok {
		err = fail(string(de))
	}
	if err != nil {
		// (Inside the if: the target of errors.As is allocated.)
		var inv *defaults.InvalidError
		if errors.As(err, &inv) {
			msg := inv.Error()
			if where != "" {
				msg = where + ": " + msg
			}
			err = &LoadError{File: file, Line: line, Msg: msg}
		}
	}
	if !handled {
		c.Warnings = append(c.Warnings, fmt.Sprintf("warning: %s:%d: skipping %s (kind %s/%s is not used by the scheduler)", file, line, ident, apiVersion, kind))
	}
	return err
}

// decodeDefaulted decodes an object with either path's decode and gives
// it what the API server would have (internal/defaults): defaulting, and
// for a pod the validation a decision depends on. Every kind addTyped and
// addDRA read is decoded through it, so both paths apply it once.
func decodeDefaulted(decode func(any) error, into any) error {
	if err := decode(into); err != nil {
		return err
	}
	defaults.Object(into)
	if p, ok := into.(*v1.Pod); ok {
		return defaults.ValidatePod(p)
	}
	return nil
}

// decodeError is a typed decoder's message, for addNamed to word.
type decodeError string

func (e decodeError) Error() string { return string(e) }

// addTyped decodes an object of a kind the scheduler reads into its list;
// handled is false for other kinds.
func (c *Cluster) addTyped(kind, group string, obj map[string]any, decode func(any) error, origin Origin) (handled bool, err error) {
	switch {
	case kind == "Node" && group == "":
		n := &v1.Node{}
		if err := decodeDefaulted(decode, n); err != nil {
			return true, err
		}
		c.Nodes = append(c.Nodes, n)
		c.setOrigin(n, origin)
	case kind == "Pod" && group == "":
		p := &v1.Pod{}
		if err := decodeDefaulted(decode, p); err != nil {
			return true, err
		}
		p.Namespace = c.namespaceOr(p.Namespace)
		c.Pods = append(c.Pods, p)
		c.setOrigin(p, origin)
	case kind == "Namespace" && group == "":
		return true, decodeAppend(decode, &c.Namespaces)
	case kind == "PodDisruptionBudget":
		return true, decodeAppend(decode, &c.PDBs)
	case kind == "PersistentVolumeClaim":
		if err := decodeAppend(decode, &c.PVCs); err != nil {
			return true, err
		}
		p := c.PVCs[len(c.PVCs)-1]
		p.Namespace = c.namespaceOr(p.Namespace)
	case kind == "PersistentVolume":
		return true, decodeAppend(decode, &c.PVs)
	case kind == "StorageClass":
		return true, decodeAppend(decode, &c.StorageClasses)
	case kind == "CSINode":
		return true, decodeAppend(decode, &c.CSINodes)
	case kind == "CSIDriver":
		return true, decodeAppend(decode, &c.CSIDrivers)
	case kind == "CSIStorageCapacity":
		return true, decodeAppend(decode, &c.CSIStorageCapacities)
	case kind == "Service" && group == "":
		return true, decodeAppend(decode, &c.Services)
	case kind == "ReplicaSet" && group == "apps":
		return true, decodeAppend(decode, &c.ReplicaSets)
	case kind == "StatefulSet" && group == "apps":
		return true, decodeAppend(decode, &c.StatefulSets)
	case kind == "DaemonSet" && group == "apps":
		return true, decodeAppend(decode, &c.DaemonSets)
	case kind == "ReplicationController" && group == "":
		return true, decodeAppend(decode, &c.ReplicationControllers)
	case kind == "PriorityClass" && group == "scheduling.k8s.io":
		return true, decodeAppend(decode, &c.PriorityClasses)
	case kind == "RuntimeClass" && group == "node.k8s.io":
		return true, decodeAppend(decode, &c.RuntimeClasses)
	case kind == "PodGroup" && group != "scheduling.k8s.io":
		// scheduler-plugins' (addWorkloadAPI reads kube's own).
		c.Others = append(c.Others, &unstructured.Unstructured{Object: obj})
	default:
		return false, nil
	}
	return true, nil
}

// objectIdent names an object in messages: "items[3] Pod ns/name".
func objectIdent(where, kind string, meta map[string]any) string {
	name, _ := meta["name"].(string)
	ns, _ := meta["namespace"].(string)
	ident := where
	if ident != "" && kind != "" {
		ident += " "
	}
	ident += kind
	if name != "" {
		if ns != "" {
			ident += " " + ns + "/" + name
		} else {
			ident += " " + name
		}
	}
	return ident
}

// addList adds a List's items; a typed list (PodList) gives its items
// their kind when they have none.
func (c *Cluster) addList(file string, line int, kind string, obj map[string]any, fail func(string) error) error {
	items, _ := obj["items"].([]any)
	for i, it := range items {
		if c.OnProgress != nil {
			c.OnProgress(file, i, len(items))
		}
		m, ok := it.(map[string]any)
		if !ok {
			return fail(fmt.Sprintf("items[%d]: not an object", i))
		}
		if _, ok := m["kind"]; !ok && kind != "List" {
			m["kind"] = strings.TrimSuffix(kind, "List")
		}
		if err := c.addObject(file, line, fmt.Sprintf("items[%d]", i), m); err != nil {
			return err
		}
	}
	return nil
}

// namespaceOr returns ns, or the namespace given to objects without one.
func (c *Cluster) namespaceOr(ns string) string {
	switch {
	case ns != "":
		return ns
	case c.DefaultNamespace != "":
		return c.DefaultNamespace
	}
	return "default"
}

// decodeAppend decodes the object and appends it to list.
func decodeAppend[T any](decode func(any) error, list *[]*T) error {
	obj := new(T)
	if err := decodeDefaulted(decode, obj); err != nil {
		return err
	}
	*list = append(*list, obj)
	return nil
}

// readKind says whether the loader reads objects of the kind (Kinds).
func readKind(group, kind string) bool {
	for _, k := range Kinds {
		g, _, ok := strings.Cut(k.APIVersion, "/")
		if !ok {
			g = ""
		}
		if k.Kind == kind && g == group {
			return true
		}
	}
	return false
}
