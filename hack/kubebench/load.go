package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"strings"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/kubernetes/pkg/api/legacyscheme"
	_ "k8s.io/kubernetes/pkg/apis/core/install"       // core/v1 defaulting funcs into legacyscheme
	_ "k8s.io/kubernetes/pkg/apis/scheduling/install" // scheduling/v1beta1 defaulting (PodGroup disruptionMode)
	_ "k8s.io/kubernetes/pkg/apis/storage/install"    // storage/v1 defaulting (StorageClass volumeBindingMode)
	"sigs.k8s.io/yaml"
)

// cluster is the content of a snapshot file.
type cluster struct {
	objects []runtime.Object // everything, for the fake clientset
	nodes   int
	bound   int       // pods with spec.nodeName, not terminal
	pending []*v1.Pod // no spec.nodeName, not terminal
	skipped []string  // kinds the fake clientset does not know
	// dra: the snapshot has resource.k8s.io objects.
	dra bool
	// claims counts the ResourceClaims.
	claims int
}

// loadSnapshot reads a v1 List (or several YAML documents, each an object
// or a List), JSON or YAML. Objects get the API server's defaulting
// (pods: schedulerName, namespace "default", port protocol...; nodes:
// allocatable from capacity), as they would have in a real cluster.
// Succeeded and Failed pods are dropped: kube-scheduler's pod informer
// excludes them with a field selector, which the fake clientset ignores.
func loadSnapshot(path string) (*cluster, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var docs [][]byte
	if t := bytes.TrimSpace(data); len(t) > 0 && t[0] == '{' {
		docs = [][]byte{data}
	} else {
		for _, d := range splitYAML(data) {
			js, err := yaml.YAMLToJSON(d)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", path, err)
			}
			docs = append(docs, js)
		}
	}
	c := &cluster{}
	for _, d := range docs {
		if t := bytes.TrimSpace(d); len(t) == 0 || string(t) == "null" {
			continue
		}
		if err := c.addDoc(d); err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
	}
	return c, nil
}

func splitYAML(data []byte) [][]byte {
	var docs [][]byte
	var cur bytes.Buffer
	for _, line := range bytes.SplitAfter(data, []byte("\n")) {
		if t := strings.TrimSpace(string(line)); t == "---" {
			docs = append(docs, append([]byte(nil), cur.Bytes()...))
			cur.Reset()
			continue
		}
		cur.Write(line)
	}
	return append(docs, cur.Bytes())
}

func (c *cluster) addDoc(js []byte) error {
	var head struct {
		Kind  string            `json:"kind"`
		Items []json.RawMessage `json:"items"`
	}
	if err := json.Unmarshal(js, &head); err != nil {
		return err
	}
	if strings.HasSuffix(head.Kind, "List") {
		for i, it := range head.Items {
			if err := c.addObject(it); err != nil {
				return fmt.Errorf("items[%d]: %w", i, err)
			}
		}
		return nil
	}
	return c.addObject(js)
}

func (c *cluster) addObject(js []byte) error {
	obj, gvk, err := scheme.Codecs.UniversalDeserializer().Decode(js, nil, nil)
	if err != nil {
		if runtime.IsNotRegisteredError(err) {
			c.skipped = append(c.skipped, gvk.String())
			return nil
		}
		return err
	}
	legacyscheme.Scheme.Default(obj)
	if gvk.Group == "resource.k8s.io" {
		c.dra = true
		if gvk.Kind == "ResourceClaim" {
			c.claims++
		}
	}
	switch o := obj.(type) {
	case *v1.Node:
		c.nodes++
	case *v1.Pod:
		if o.Namespace == "" {
			o.Namespace = "default"
		}
		if o.UID == "" {
			// The API server assigns one; the scheduler's cache keys on it.
			o.UID = types.UID("kubebench-" + o.Namespace + "-" + o.Name)
		}
		if o.Status.Phase == v1.PodSucceeded || o.Status.Phase == v1.PodFailed {
			return nil
		}
		if o.Spec.NodeName == "" {
			c.pending = append(c.pending, o)
		} else {
			c.bound++
		}
	}
	c.objects = append(c.objects, obj)
	return nil
}
