package schedcore

import (
	"encoding/binary"
	"sort"
	"sync"

	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/sets"
)

// MemoKey is the key under which a plugin remembers per-node values across
// cycles (NodeMemo, VerdictMemo, term indexes): the memo checks the node's
// generation, the key must capture every other input the remembered value
// depends on (the selector, the pod's namespace, the namespaces' labels
// generation, ...). It is the one way memo keys are built: each part is
// written length-prefixed and tagged with its kind, so two different
// sequences of parts never give the same key.
type MemoKey struct{ b []byte }

const (
	memoString byte = iota + 1
	memoInt
	memoSelector
	memoMap
	memoSet
)

func (k *MemoKey) tag(t byte) { k.b = append(k.b, t) }

func (k *MemoKey) str(s string) {
	k.b = binary.AppendUvarint(k.b, uint64(len(s)))
	k.b = append(k.b, s...)
}

// String writes a string.
func (k *MemoKey) String(s string) *MemoKey {
	k.tag(memoString)
	k.str(s)
	return k
}

// Int writes an integer.
func (k *MemoKey) Int(v int64) *MemoKey {
	k.tag(memoInt)
	k.b = binary.AppendVarint(k.b, v)
	return k
}

// Bytes writes a marshalled object (an API object's protobuf: a node
// selector, a toleration), as String(string(b)) would, without making the
// string.
func (k *MemoKey) Bytes(b []byte) *MemoKey {
	k.tag(memoString)
	k.b = binary.AppendUvarint(k.b, uint64(len(b)))
	k.b = append(k.b, b...)
	return k
}

// Selector writes a label selector; nil, Everything and Nothing (which all
// print as "") are told apart.
func (k *MemoKey) Selector(s labels.Selector) *MemoKey {
	k.tag(memoSelector)
	switch {
	case s == nil:
		k.str("nil")
	case s.Empty():
		k.str("all")
	default:
		if _, ok := s.Requirements(); !ok {
			k.str("none")
		} else {
			k.str("sel:" + s.String())
		}
	}
	return k
}

// Map writes a string map, in key order.
func (k *MemoKey) Map(m map[string]string) *MemoKey {
	k.tag(memoMap)
	keys := make([]string, 0, len(m))
	for key := range m {
		keys = append(keys, key)
	}
	sort.Strings(keys)
	k.b = binary.AppendUvarint(k.b, uint64(len(keys)))
	for _, key := range keys {
		k.str(key)
		k.str(m[key])
	}
	return k
}

// Set writes a set of strings, in order.
func (k *MemoKey) Set(s sets.Set[string]) *MemoKey {
	k.tag(memoSet)
	keys := sets.List(s)
	k.b = binary.AppendUvarint(k.b, uint64(len(keys)))
	for _, key := range keys {
		k.str(key)
	}
	return k
}

// AffinityTerm writes a parsed affinity term: its selectors, namespaces
// and topology key.
func (k *MemoKey) AffinityTerm(t *AffinityTerm) *MemoKey {
	return k.String(t.TopologyKey).Selector(t.Selector).Selector(t.NamespaceSelector).Set(t.Namespaces)
}

// Key is the key built so far.
func (k *MemoKey) Key() string { return string(k.b) }

// scratchKeys are the keys the framework builds each cycle for its memos'
// views (filterViews, scoreViews): a key is read only while its view is
// looked up (a new table copies it, Key), so one buffer serves every key
// of a cycle, and the next cycles, instead of a few growing appends each.
var scratchKeys = sync.Pool{New: func() any { return new(MemoKey) }}

// getScratchKey returns an empty key; putScratchKey gives it back, when
// nothing reads it any more.
func getScratchKey() *MemoKey {
	k := scratchKeys.Get().(*MemoKey)
	k.b = k.b[:0]
	return k
}

func putScratchKey(k *MemoKey) {
	if cap(k.b) <= 4<<10 {
		scratchKeys.Put(k)
	}
}

// GetScratchKey returns an empty key from a pool, for a key read only
// while a view is looked up; PutScratchKey gives it back, when nothing
// reads it any more. The runtime builds its memos' keys with them.
func GetScratchKey() *MemoKey { return getScratchKey() }

// PutScratchKey gives back a key GetScratchKey returned.
func PutScratchKey(k *MemoKey) { putScratchKey(k) }

// Reset empties k for another key, keeping its room.
func (k *MemoKey) Reset() { k.b = k.b[:0] }
