package schedcore

import (
	"slices"
	"sync"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
)

// SpecCache remembers what parsing a pod's spec object gave (a selector,
// an error), so that the pods of one template, which share their spec
// objects (the engine interns equal parts of pods), parse them once
// instead of once per scheduling cycle. An entry is found by the object's
// address K and used only if the object still equals the copy S taken
// when it was parsed: an object changed in place, or a new object at a
// reused address, is parsed again. At most max entries are kept (all are
// dropped when it is reached). Safe for concurrent use; the values handed
// out are shared and must be read-only.
type SpecCache[K comparable, S, V any] struct {
	mu      sync.Mutex
	entries map[K]*specEntry[S, V]
	max     int
}

type specEntry[S, V any] struct {
	spec S
	val  V
	err  error
}

// NewSpecCache returns a cache of at most max entries.
func NewSpecCache[K comparable, S, V any](max int) *SpecCache[K, S, V] {
	return &SpecCache[K, S, V]{entries: make(map[K]*specEntry[S, V]), max: max}
}

// Get returns the remembered result for key when same(copy) holds for the
// copy taken at parse time; otherwise it calls parse, which returns a
// copy of the object (one that later changes to the object do not reach),
// the value and the error, remembers them and returns them.
func (c *SpecCache[K, S, V]) Get(key K, same func(S) bool, parse func() (S, V, error)) (V, error) {
	c.mu.Lock()
	e := c.entries[key]
	c.mu.Unlock()
	if e != nil && same(e.spec) {
		return e.val, e.err
	}
	spec, v, err := parse()
	c.mu.Lock()
	if len(c.entries) >= c.max {
		clear(c.entries)
	}
	c.entries[key] = &specEntry[S, V]{spec: spec, val: v, err: err}
	c.mu.Unlock()
	return v, err
}

// specCacheSize bounds each spec cache: Mixed workloads interleave up to
// ~1000 templates.
const specCacheSize = 4096

var labelSelectors = NewSpecCache[*metav1.LabelSelector, *metav1.LabelSelector, labels.Selector](specCacheSize)

// LabelSelectorAsSelector is metav1.LabelSelectorAsSelector, selector and
// error alike, parsing each distinct selector object once (see SpecCache).
// The selector returned is shared: use it read-only (Add returns a copy).
func LabelSelectorAsSelector(ls *metav1.LabelSelector) (labels.Selector, error) {
	if ls == nil {
		return metav1.LabelSelectorAsSelector(ls)
	}
	return labelSelectors.Get(ls,
		func(old *metav1.LabelSelector) bool { return EqualLabelSelectors(old, ls) },
		func() (*metav1.LabelSelector, labels.Selector, error) {
			sel, err := metav1.LabelSelectorAsSelector(ls)
			return ls.DeepCopy(), sel, err
		})
}

// EqualLabelSelectors reports whether a and b are the same selector, field
// by field (nil and empty lists and maps alike, as they parse alike).
func EqualLabelSelectors(a, b *metav1.LabelSelector) bool {
	if a == nil || b == nil {
		return a == b
	}
	if !EqualStringMaps(a.MatchLabels, b.MatchLabels) || len(a.MatchExpressions) != len(b.MatchExpressions) {
		return false
	}
	for i := range a.MatchExpressions {
		x, y := &a.MatchExpressions[i], &b.MatchExpressions[i]
		if x.Key != y.Key || x.Operator != y.Operator || !slices.Equal(x.Values, y.Values) {
			return false
		}
	}
	return true
}

// EqualStringMaps reports whether a and b hold the same pairs.
func EqualStringMaps(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}
