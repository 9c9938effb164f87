package snapshot

// Reading an object's apiVersion, kind, name and namespace from its JSON
// without decoding the rest: the typed path needs them to pick the type.

import (
	"bytes"
	"encoding/json"
	"sync"
	"unicode/utf8"
)

// header is what peekHeader reads of an object.
type header struct {
	apiVersion, kind, name, ns string
	// managedFields is set when metadata has managedFields.
	managedFields bool
}

// peekHeader reads the header of the JSON object js. Keys are matched
// exactly, as the map path's lookups match them. ok is false when js is
// not an object, a header field is not a string, or an object in js gives
// a key twice (see uniqueObject): the map path takes those. The walk that
// reads the header looks at every key and value of js, so the check costs
// no second pass, and it checks them as JSON (validjson.go): ok also says
// that js is valid JSON (json.Valid), and plain that both decoders read its
// text alike (plainText).
func peekHeader(js []byte) (h header, plain, ok bool) {
	s := scanner{b: js, check: true}
	kp := keysPool.Get().(*[][]byte)
	keys := (*kp)[:0]
	defer func() {
		// The pool keeps no slice of js.
		clear(keys[:cap(keys)])
		*kp = keys[:0]
		keysPool.Put(kp)
	}()
	ok = s.uniqueObject(&keys, func(key []byte) bool {
		switch string(key) {
		case "apiVersion":
			return s.str(&h.apiVersion)
		case "kind":
			return s.str(&h.kind)
		case "metadata":
			return s.uniqueObject(&keys, func(key []byte) bool {
				switch string(key) {
				case "name":
					return s.str(&h.name)
				case "namespace":
					return s.str(&h.ns)
				case "managedFields":
					h.managedFields = true
				}
				return s.uniqueValue(&keys)
			})
		}
		return s.uniqueValue(&keys)
	})
	if !ok {
		return h, false, false
	}
	if s.ws(); s.i != len(s.b) {
		return h, false, false
	}
	return h, !s.surrogate && (!s.nonASCII || utf8.Valid(js)), true
}

// keysPool holds the key stacks of peekHeader's walks: one per object
// would be a tenth of what loading a dump allocates.
var keysPool = sync.Pool{New: func() any {
	k := make([][]byte, 0, 64)
	return &k
}}

// list is what peekList reads of a document.
type list struct {
	kind string
	// items are the items' JSON, nil when items is absent or not a list.
	items [][]byte
	// rest is the document with items' elements left out ("items": []),
	// for validating what the items' decoding does not.
	rest []byte
}

// peekList reads a document's kind and, without copying or validating
// them, its items. ok is false when js is not an object, kind is not a
// string, or items is given twice.
func peekList(js []byte) (l list, ok bool) {
	s := scanner{b: js}
	var from, to int
	seen := false
	ok = s.object(func(key []byte) bool {
		switch string(key) {
		case "kind":
			return s.str(&l.kind)
		case "items":
			if seen {
				return false
			}
			seen = true
			if s.i >= len(s.b) || s.b[s.i] != '[' {
				return s.skip()
			}
			s.i++
			from = s.i
			l.items = [][]byte{}
			s.ws()
			if s.i < len(s.b) && s.b[s.i] == ']' {
				to = s.i
				s.i++
				return true
			}
			for {
				s.ws()
				start := s.i
				if !s.skip() || s.i == start {
					return false
				}
				l.items = append(l.items, s.b[start:s.i])
				more, ok := s.next(']')
				if !ok || !more {
					to = s.i - 1
					return ok
				}
			}
		}
		return s.skip()
	})
	if !ok {
		return l, false
	}
	s.ws()
	if s.i != len(s.b) {
		// Something after the object: the map path's decoder rejects it.
		return l, false
	}
	if l.items != nil {
		l.rest = append(append(append([]byte(nil), js[:from]...), ']'), js[to+1:]...)
	} else {
		l.rest = js
	}
	return l, true
}

// scanner walks JSON. Its methods return false on anything unexpected,
// malformed or not.
type scanner struct {
	b []byte
	i int
	// check: strings and the values uniqueValue walks are checked as
	// JSON (checkString, checkScalar), nesting up to maxCheckedDepth.
	check bool
	depth int
	// nonASCII and surrogate: a checked string had a byte above 0x7f, a
	// \u escape of a surrogate.
	nonASCII, surrogate bool
}

func (s *scanner) ws() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

// object walks an object, calling field with each key, positioned at its
// value, which field must consume.
func (s *scanner) object(field func(key []byte) bool) bool {
	s.ws()
	if s.i >= len(s.b) || s.b[s.i] != '{' {
		return false
	}
	s.i++
	s.ws()
	if s.i < len(s.b) && s.b[s.i] == '}' {
		s.i++
		return true
	}
	for {
		s.ws()
		start := s.i
		if !s.skipString() {
			return false
		}
		key := s.b[start+1 : s.i-1]
		for _, c := range key {
			if c == '\\' {
				// An escaped key: rare, left to the map path.
				return false
			}
		}
		s.ws()
		if s.i >= len(s.b) || s.b[s.i] != ':' {
			return false
		}
		s.i++
		s.ws()
		if !field(key) {
			return false
		}
		if more, ok := s.next('}'); !ok || !more {
			return ok
		}
	}
}

// next reads what follows a member of an object or an array: a comma
// (more) or the closing byte, consumed; ok is false for anything else.
func (s *scanner) next(closing byte) (more, ok bool) {
	s.ws()
	if s.i >= len(s.b) {
		return false, false
	}
	switch s.b[s.i] {
	case ',':
		s.i++
		return true, true
	case closing:
		s.i++
		return false, true
	}
	return false, false
}

// str reads a string value into *v.
func (s *scanner) str(v *string) bool {
	start := s.i
	if !s.skipString() {
		return false
	}
	raw := s.b[start:s.i]
	for _, c := range raw[1 : len(raw)-1] {
		if c == '\\' || c >= 0x80 || c < 0x20 {
			// Escapes and non-ASCII: decoded as the map path decodes them.
			return json.Unmarshal(raw, v) == nil
		}
	}
	*v = string(raw[1 : len(raw)-1])
	return true
}

// skipString moves past the string at s.i. It looks for quotes with
// IndexByte: long strings (annotations, images) are most of a dump.
func (s *scanner) skipString() bool {
	if s.check {
		return s.checkString()
	}
	if s.i >= len(s.b) || s.b[s.i] != '"' {
		return false
	}
	s.i++
	for {
		q := bytes.IndexByte(s.b[s.i:], '"')
		if q < 0 {
			return false
		}
		s.i += q + 1
		// The quote ends the string unless an odd number of
		// backslashes escapes it.
		n := 0
		for j := s.i - 2; j >= 0 && s.b[j] == '\\'; j-- {
			n++
		}
		if n%2 == 0 {
			return true
		}
	}
}

// skip moves past the value at s.i, not validating it: the typed decoder
// that follows does.
func (s *scanner) skip() bool {
	if s.i >= len(s.b) {
		return false
	}
	switch s.b[s.i] {
	case '"':
		return s.skipString()
	case '{', '[':
		depth := 0
		for s.i < len(s.b) {
			switch s.b[s.i] {
			case '"':
				if !s.skipString() {
					return false
				}
				continue
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					s.i++
					return true
				}
			}
			s.i++
		}
		return false
	}
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ',', '}', ']', ' ', '\t', '\n', '\r':
			return true
		}
		s.i++
	}
	return true
}

// bigObject is the number of keys above which uniqueObject looks for a
// repeated key in a set of folded keys instead of comparing with each.
const bigObject = 32

// uniqueValue moves past the value at s.i, false when an object in it
// repeats a key. keys holds the keys of the objects around it.
func (s *scanner) uniqueValue(keys *[][]byte) bool {
	if s.i >= len(s.b) {
		return false
	}
	switch s.b[s.i] {
	case '[':
		if s.depth++; s.depth > maxCheckedDepth {
			return false
		}
		s.i++
		s.ws()
		if s.i < len(s.b) && s.b[s.i] == ']' {
			s.i++
			s.depth--
			return true
		}
		for {
			s.ws()
			if !s.uniqueValue(keys) {
				return false
			}
			more, ok := s.next(']')
			if !ok || !more {
				s.depth--
				return ok
			}
		}
	case '{':
		if s.depth++; s.depth > maxCheckedDepth {
			return false
		}
		ok := s.uniqueObject(keys, func([]byte) bool { return s.uniqueValue(keys) })
		s.depth--
		return ok
	}
	if s.check {
		return s.checkScalar()
	}
	return s.skip()
}

// uniqueObject is object, false also when the object gives a key twice,
// comparing keys as encoding/json matches them to a struct's fields
// (bytes.EqualFold). A key given twice is where the typed path and the map
// path part: the map keeps the last value whole, while decoding into a
// type merges the two (an object's fields, a map's entries) or, for a
// field spelled in two cases, takes them in the document's order rather
// than the re-marshalled map's. An escaped or non-ASCII key counts as a
// duplicate (Unicode folding matches "ſ" to "s"): Kubernetes' keys are
// ASCII, and such objects are left to the map path. keys holds the keys of
// the objects around it; the object's own are appended while it is
// walked.
func (s *scanner) uniqueObject(keys *[][]byte, field func(key []byte) bool) bool {
	base := len(*keys)
	var folded map[string]struct{}
	ok := s.object(func(key []byte) bool {
		if !ascii(key) {
			return false
		}
		own := (*keys)[base:]
		switch {
		case folded != nil:
			f := string(bytes.ToLower(key))
			if _, dup := folded[f]; dup {
				return false
			}
			folded[f] = struct{}{}
		case len(own) == bigObject:
			folded = make(map[string]struct{}, 2*bigObject)
			for _, k := range append(own, key) {
				f := string(bytes.ToLower(k))
				if _, dup := folded[f]; dup {
					return false
				}
				folded[f] = struct{}{}
			}
		default:
			for _, k := range own {
				if len(k) == len(key) && bytes.EqualFold(k, key) {
					return false
				}
			}
		}
		*keys = append(*keys, key)
		return field(key)
	})
	*keys = (*keys)[:base]
	return ok
}

func ascii(b []byte) bool {
	for _, c := range b {
		if c >= 0x80 {
			return false
		}
	}
	return true
}
