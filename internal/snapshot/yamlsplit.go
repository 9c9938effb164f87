package snapshot

// Splitting a YAML List into its items by lines, so that the items are
// converted to JSON on every core instead of the whole document on one
// (converting YAML was two thirds of loading a 5000-node YAML dump).
//
// The split is taken only where converting the parts gives what converting
// the whole document gives. A List written as kubectl and 'snapshot'
// write it is a mapping at column 0 whose "items:" is followed by a block
// sequence at column 0:
//
//	apiVersion: v1
//	items:
//	- apiVersion: v1      <- an item starts at each "- " in column 0
//	  kind: Node
//	  ...
//	kind: List            <- the first other line in column 0 ends the items
//
// Every token of an item is indented past column 0, except the tokens that
// span lines (quoted scalars, flow collections): such a token crossing an
// item's last line leaves it unterminated, and converting the item alone
// fails. Block scalars and plain scalars end at a line in column 0. So an
// item that converts alone converts as it does in the whole document; the
// head (the lines before "items:") and the tail (the lines after the
// items) are checked the same way, each alone. What converting parts
// cannot see is declined up front (unsafeYAML): aliases (the YAML decoder
// limits their expansion per document), document markers and directives,
// line breaks that are not "\n", tabs starting a line, control
// characters. TestYAMLSplitConvertsAsTheWhole compares both ways on
// random documents built from these cases.

import (
	"bytes"
	"sync/atomic"

	"sigs.k8s.io/yaml"

	"github.com/kubectl-sched/kubectl-sched/internal/share"
)

// yamlParts is a YAML List document cut into its head, its items and its
// tail, which tile it: head, the "items:" line, items, tail.
type yamlParts struct {
	head, tail []byte
	items      [][]byte
}

// splitYAMLList cuts a YAML document shaped as above; ok is false for
// any other document, or one unsafeYAML declines.
func splitYAMLList(y []byte) (p yamlParts, ok bool) {
	if !bytes.HasPrefix(y, []byte("items:")) && !bytes.Contains(y, []byte("\nitems:")) {
		// Not a List (most documents of a multi-document file): no
		// need to look at each byte.
		return p, false
	}
	if unsafeYAML(y) {
		return p, false
	}
	const (
		inHead = iota
		inItems
		inTail
	)
	state := inHead
	rooted := false // the document's first line that is not blank or a comment was seen
	itemFrom := -1  // where the current item began; -1 before the first
	regionFrom := 0
	for off := 0; off < len(y); {
		end := len(y)
		if i := bytes.IndexByte(y[off:], '\n'); i >= 0 {
			end = off + i
		}
		line := y[off:end]
		next := min(end+1, len(y))
		if len(line) > 0 {
			switch line[0] {
			case '\t', '%':
				// A tab cannot indent; a directive is only before "---".
				return p, false
			case '-', '.':
				if bytes.HasPrefix(line, []byte("---")) || bytes.HasPrefix(line, []byte("...")) {
					// A document marker: the decoder reads the first
					// document only.
					return p, false
				}
				if len(line) > 1 && line[0] == '-' && line[1] == '\t' {
					return p, false
				}
			}
		}
		switch state {
		case inHead:
			if !rooted {
				t := bytes.TrimLeft(line, " ")
				if len(t) == 0 || t[0] == '#' {
					break
				}
				rooted = true
				switch line[0] {
				case ' ', '-', '[', '{', '!', '&', '*', '|', '>', '?', '%', '@', '`':
					// The document may not be a block mapping in column
					// 0, which only the end of the document ends: the
					// decoder ignores what follows a document's node
					// ("&a {kind: List}" then "items:" is {kind: List}).
					// A tag, anchor or alias may put a flow node there,
					// and the rest are not a plain key.
					return p, false
				}
			}
			if isItemsLine(line) {
				p.head = y[:off]
				regionFrom = next
				state = inItems
			}
		case inItems:
			switch {
			case len(line) == 0 || line[0] == ' ' || line[0] == '#':
				// Indented, blank or a comment: the current item's.
				// Before the first item, only blank lines and
				// comments, which it is given.
				if itemFrom < 0 && len(bytes.Trim(line, " ")) > 0 && line[0] == ' ' {
					return p, false
				}
			case line[0] == '-' && (len(line) == 1 || line[1] == ' '):
				if itemFrom < 0 {
					// Blank and comment lines before the first item
					// are its own.
					itemFrom = regionFrom
				} else {
					p.items = append(p.items, y[itemFrom:off])
					itemFrom = off
				}
			default:
				if itemFrom < 0 {
					// "items:" is not followed by a sequence in column 0.
					return p, false
				}
				p.items = append(p.items, y[itemFrom:off])
				p.tail = y[off:]
				state = inTail
			}
		}
		off = next
	}
	switch state {
	case inHead:
		return p, false
	case inItems:
		if itemFrom < 0 {
			return p, false
		}
		p.items = append(p.items, y[itemFrom:])
		p.tail = nil
	}
	return p, true
}

// isItemsLine reports whether line is "items:" in column 0, with nothing
// after it but spaces.
func isItemsLine(line []byte) bool {
	rest, ok := bytes.CutPrefix(line, []byte("items:"))
	return ok && len(bytes.Trim(rest, " ")) == 0
}

// unsafeYAML reports whether y holds what converting parts of it cannot
// be trusted to convert as the whole: an alias (or a '*' that may start
// one), a control character, a line break other than "\n" (a lone "\r",
// NEL, LS, PS), or a byte order mark.
func unsafeYAML(y []byte) bool {
	for i, c := range y {
		switch {
		case c == '*':
			// '*' inside a word ("a*", "*.example.com" quoted) does not
			// start an alias; anywhere else it may.
			if i == 0 {
				return true
			}
			p := y[i-1]
			if !(p >= 'a' && p <= 'z' || p >= 'A' && p <= 'Z' || p >= '0' && p <= '9' || p == '"' || p == '\'' || p == '.' || p == '/' || p == '_') {
				return true
			}
		case c < 0x20 && c != '\n' && c != '\t', c == 0x7f:
			return true
		case c == 0xc2:
			if i+1 < len(y) && y[i+1] == 0x85 {
				return true
			}
		case c == 0xe2:
			if i+2 < len(y) && y[i+1] == 0x80 && (y[i+2] == 0xa8 || y[i+2] == 0xa9) {
				return true
			}
		case c == 0xef:
			if i+2 < len(y) && y[i+1] == 0xbb && y[i+2] == 0xbf {
				return true
			}
		}
	}
	return false
}

// convertYAMLList converts a YAML List document by its parts: the List
// without its items ("items: []", as JSON) and each item's JSON. ok is
// false when the document is not one splitYAMLList cuts, a part does not
// convert, or the head or tail has items of its own: the whole document
// is then converted as before. Items that are objects are also decoded
// (decodeTyped, sharing through s), by the goroutine that converted them.
func convertYAMLList(y []byte, s *share.Sharer) (rest []byte, items [][]byte, objs []typedObj, ok bool) {
	p, ok := splitYAMLList(y)
	if !ok {
		return nil, nil, nil, false
	}
	for _, part := range [][]byte{p.head, p.tail} {
		js, err := yaml.YAMLToJSON(part)
		if err != nil {
			return nil, nil, nil, false
		}
		if string(js) == "null" {
			continue
		}
		if len(js) == 0 || js[0] != '{' || hasKey(js, "items") {
			return nil, nil, nil, false
		}
	}
	whole := make([]byte, 0, len(p.head)+len(p.tail)+10)
	whole = append(append(append(whole, p.head...), "items: []\n"...), p.tail...)
	rest, err := yaml.YAMLToJSON(whole)
	if err != nil {
		return nil, nil, nil, false
	}
	items = make([][]byte, len(p.items))
	objs = make([]typedObj, len(p.items))
	var failed atomic.Bool
	convert := func(i int) {
		js, err := yaml.YAMLToJSON(p.items[i])
		item, ok := onlyElement(js)
		if err != nil || !ok {
			failed.Store(true)
			return
		}
		items[i] = item
		if item[0] == '{' {
			objs[i] = decodeTyped(item, s)
		}
	}
	onEveryCore(len(items), parallelItems, itemChunk, failed.Load, convert)
	if failed.Load() {
		return nil, nil, nil, false
	}
	return rest, items, objs, true
}

// onlyElement returns the element of the JSON array js when it has
// exactly one.
func onlyElement(js []byte) ([]byte, bool) {
	if len(js) < 2 || js[0] != '[' || js[len(js)-1] != ']' {
		return nil, false
	}
	s := scanner{b: js, i: 1}
	s.ws()
	start := s.i
	if !s.skip() || s.i == start {
		return nil, false
	}
	end := s.i
	s.ws()
	if s.i != len(js)-1 {
		return nil, false
	}
	return js[start:end], true
}

// hasKey reports whether the JSON object js has key at its top level; it
// says true when it cannot tell.
func hasKey(js []byte, key string) bool {
	s := scanner{b: js}
	found := false
	ok := s.object(func(k []byte) bool {
		if string(k) == key {
			found = true
		}
		return s.skip()
	})
	return found || !ok
}
