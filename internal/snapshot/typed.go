package snapshot

// The typed path: objects decoded straight from their bytes into their
// types, without the map[string]any that the map path (decodeDoc,
// addObject) builds, re-marshals and decodes again. That round trip was
// three quarters of loading a 5000-node dump. The typed path takes only
// what it can add exactly as the map path would; anything else (an error
// of any kind, a kind it does not decode, a quantity the map path rejects)
// it hands back, object by object, to the map path, which words the error
// or adds the object as before.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"

	v1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"

	"github.com/kubectl-sched/kubectl-sched/internal/share"
)

// typedObj is one object the typed path decoded; obj is nil when it
// declined the object. obj is decoded, defaulted and checked on the
// decoding goroutine (decodeDefaulted's work), so that adding it in order
// is little more than recording its name: err is what the check found,
// which adding it reports at its place.
type typedObj struct {
	apiVersion, kind, name, ns string
	obj                        any
	err                        error
	// valid is false when the object is not valid JSON.
	valid bool
}

// parallelItems is the smallest List whose items are decoded on several
// cores: below it, starting goroutines costs more than it saves.
const parallelItems = 64

// preparedDoc is what the typed path makes of a document before adding
// it. Making it reads no Cluster, so documents are prepared on several
// cores, and only adding them (addPrepared) is done in order.
type preparedDoc struct {
	// decline is set when the typed path leaves the document to the map
	// path; js is then the YAML document's JSON when it was converted,
	// which the map path need not convert again.
	decline bool
	js      []byte
	// one is a single object; items and objs a List's.
	one   *typedObj
	items [][]byte
	objs  []typedObj
}

// prepareDoc decodes document d for the typed path (a List's items on
// every core), adding nothing: a YAML List by its items when
// prepareYAMLList cuts it, any other document whole.
func prepareDoc(d doc, s *share.Sharer) preparedDoc {
	if bytes.TrimSpace(d.data)[0] != '{' {
		if p, ok := prepareYAMLList(d.data, s); ok {
			return p
		}
	}
	return prepareWhole(d, s)
}

// prepareYAMLList prepares a YAML List converted by its items
// (yamlsplit.go); ok is false when convertYAMLList does not cut it, or it
// is a typed list (PodList): prepareWhole then takes it.
func prepareYAMLList(y []byte, s *share.Sharer) (p preparedDoc, ok bool) {
	rest, items, objs, ok := convertYAMLList(y, s)
	if !ok {
		return p, false
	}
	// The whole document would convert to rest with these items: read
	// it as prepareWhole does.
	if l, ok := peekList(rest); !ok || l.kind != "List" {
		return p, false
	}
	for _, it := range items {
		if it[0] != '{' {
			return preparedDoc{decline: true}, true
		}
	}
	return preparedDoc{items: items, objs: objs}, true
}

// prepareWhole prepares document d converted whole (YAML to JSON).
func prepareWhole(d doc, s *share.Sharer) preparedDoc {
	decline := preparedDoc{decline: true}
	js := bytes.TrimSpace(d.data)
	if js[0] != '{' {
		conv, err := yaml.YAMLToJSON(d.data)
		if err != nil {
			return decline
		}
		decline.js = conv
		js = bytes.TrimSpace(conv)
	}
	if len(js) == 0 || js[0] != '{' {
		return decline
	}
	l, ok := peekList(js)
	if !ok || l.kind == "" {
		return decline
	}
	if !strings.HasSuffix(l.kind, "List") {
		t := decodeTyped(js, s)
		if t.obj == nil {
			return decline
		}
		return preparedDoc{one: &t}
	}
	if l.kind != "List" || l.items == nil {
		// A typed list gives its kind to items without one, and items
		// that are not a list are none: the map path does both.
		return decline
	}
	for _, it := range l.items {
		if it[0] != '{' {
			// The map path says "items[3]: not an object" with the
			// List's name.
			return decline
		}
	}
	if !json.Valid(l.rest) {
		return decline
	}
	objs := decodeItems(l.items, s)
	for _, t := range objs {
		if !t.valid {
			// Malformed JSON: the map path says where.
			return decline
		}
	}
	return preparedDoc{items: l.items, objs: objs}
}

// prepareDocs prepares docs on every core (nil for comment-only ones);
// the pods and nodes decoded share their equal parts through s, if not
// nil.
func prepareDocs(docs []doc, s *share.Sharer) []preparedDoc {
	out := make([]preparedDoc, len(docs))
	onEveryCore(len(docs), 2, 1, nil, func(i int) {
		if !onlyComments(docs[i].data) {
			out[i] = prepareDoc(docs[i], s)
		}
	})
	return out
}

// onEveryCore calls do(i) for each i below n: in turn when n is below
// least or there is one core, else on every core, chunk at a time. When
// stop is not nil and says true, it stops early: after a do in turn, or
// before the next chunk.
func onEveryCore(n, least, chunk int, stop func() bool, do func(i int)) {
	workers := runtime.GOMAXPROCS(0)
	if n < least || workers < 2 {
		for i := range n {
			if do(i); stop != nil && stop() {
				return
			}
		}
		return
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(workers, n) {
		wg.Go(func() {
			for stop == nil || !stop() {
				lo := int(next.Add(int64(chunk))) - chunk
				if lo >= n {
					return
				}
				for i := lo; i < min(lo+chunk, n); i++ {
					do(i)
				}
			}
		})
	}
	wg.Wait()
}

// addPrepared adds a document the typed path took (addDoc).
func (c *Cluster) addPrepared(file string, d doc, p preparedDoc) error {
	if p.one != nil {
		return c.addTypedObj(file, d.line, "", *p.one)
	}
	for i, t := range p.objs {
		if c.OnProgress != nil {
			c.OnProgress(file, i, len(p.objs))
		}
		where := fmt.Sprintf("items[%d]", i)
		var err error
		if t.obj != nil {
			err = c.addTypedObj(file, d.line, where, t)
		} else {
			var m map[string]any
			if err := json.Unmarshal(p.items[i], &m); err != nil {
				// Valid JSON (the List decoded) into a map cannot fail.
				return &LoadError{File: file, Line: d.line, Msg: where + ": " + err.Error()}
			}
			err = c.addObject(file, d.line, where, m)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// decodeItems decodes a List's items, on every core when there are many.
func decodeItems(items [][]byte, s *share.Sharer) []typedObj {
	out := make([]typedObj, len(items))
	onEveryCore(len(items), parallelItems, itemChunk, nil, func(i int) {
		out[i] = decodeTyped(items[i], s)
	})
	return out
}

// itemChunk is how many items a core takes at a time.
const itemChunk = 16

// decodeTyped decodes one object's JSON into its type, defaulted and
// checked (decodeDefaulted), its parts shared through s when it is a pod
// or node that passed (s may be nil); obj is nil when the typed path
// leaves the object to the map path.
func decodeTyped(js []byte, s *share.Sharer) typedObj {
	h, plain, ok := peekHeader(js)
	if !ok {
		// Not JSON, or JSON the typed path does not take: json.Valid
		// says which.
		return typedObj{valid: json.Valid(js)}
	}
	t := decodeTypedOnly(js, h, plain)
	t.valid = true
	if t.obj == nil {
		return t
	}
	t.err = defaultObject(t.obj)
	if s != nil && t.err == nil {
		shareObject(s, t.obj)
	}
	return t
}

// decodeTypedOnly decodes js, valid JSON with header h, into its type
// (unmarshalTyped; plain is plainText(js)).
func decodeTypedOnly(js []byte, h header, plain bool) typedObj {
	if h.managedFields || h.name == "" {
		// managedFields hold raw JSON, which the map path re-marshals.
		return typedObj{}
	}
	group := ""
	if i := strings.Index(h.apiVersion, "/"); i >= 0 {
		group = h.apiVersion[:i]
	}
	t := typedObj{apiVersion: h.apiVersion, kind: h.kind, name: h.name, ns: h.ns}
	obj := newTyped(h.kind, group)
	if obj == nil {
		return t
	}
	if err := unmarshalText(js, obj, plain); err != nil {
		return t
	}
	if !quantitiesOK(obj) {
		return t
	}
	t.obj = obj
	return t
}

// quantitiesOK reports whether the quantities checkQuantities checks are
// ones it accepts: not negative (null, a zero Quantity without a format,
// is zero to both paths).
func quantitiesOK(obj any) bool {
	ok := func(l v1.ResourceList) bool {
		for _, q := range l {
			if q.Sign() < 0 {
				return false
			}
		}
		return true
	}
	switch o := obj.(type) {
	case *v1.Pod:
		for _, cs := range [][]v1.Container{o.Spec.Containers, o.Spec.InitContainers} {
			for i := range cs {
				if !ok(cs[i].Resources.Requests) || !ok(cs[i].Resources.Limits) {
					return false
				}
			}
		}
		if !ok(o.Spec.Overhead) {
			return false
		}
		if r := o.Spec.Resources; r != nil && (!ok(r.Requests) || !ok(r.Limits)) {
			return false
		}
	case *v1.Node:
		return ok(o.Status.Capacity) && ok(o.Status.Allocatable)
	}
	return true
}

// addTypedObj adds an object the typed path decoded (and defaulted), as
// addObject adds one from its map.
func (c *Cluster) addTypedObj(file string, line int, where string, t typedObj) error {
	ident := identOf(where, t.kind, t.name, t.ns)
	return c.addNamed(file, line, where, ident, t.apiVersion, t.kind, t.name, t.ns, source{typed: t.obj, typedErr: t.err})
}
