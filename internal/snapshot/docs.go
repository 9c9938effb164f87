package snapshot

// Reading a file's documents: splitting it on "---" lines, then adding
// each by one function (addDoc). Its fast path (typed.go) decodes objects
// straight into their types; what that path does not take, and every
// error, goes to the map decoding (decode.go, addObject), which words it.

import (
	"bytes"
)

type doc struct {
	line int
	data []byte
}

// splitDocs splits YAML on "---" lines (nothing but white space after the
// dashes), remembering each document's first line; JSON input is one
// document. Lines read as a line scanner reads them: each ends in "\n",
// the last one included, and a "\r" before the "\n" is dropped. Each
// document is a slice of data, without copying, unless data has a "\r" or
// does not end in a newline (the last document is then a copy).
func splitDocs(data []byte) []doc {
	trimmed := bytes.TrimSpace(data)
	if len(trimmed) > 0 && (trimmed[0] == '{' || trimmed[0] == '[') {
		return []doc{{line: 1, data: data}}
	}
	if bytes.IndexByte(data, '\r') >= 0 {
		data = dropLineCRs(data)
	}
	var docs []doc
	from, start, line := 0, 1, 0
	for off := 0; off < len(data); {
		end := len(data)
		if i := bytes.IndexByte(data[off:], '\n'); i >= 0 {
			end = off + i
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
	return append(docs, doc{line: start, data: last})
}

// dropLineCRs returns a copy of data without the "\r" that ends a line
// (before a "\n", or at the end of data), as bufio.ScanLines drops it,
// and with a "\n" after the last line ("\r" alone is an empty line).
func dropLineCRs(data []byte) []byte {
	out := make([]byte, 0, len(data)+1)
	for len(data) > 0 {
		line, rest, _ := bytes.Cut(data, []byte("\n"))
		out = append(append(out, bytes.TrimSuffix(line, []byte("\r"))...), '\n')
		data = rest
	}
	return out
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
		// Documents are prepared a batch at a time, on every core: a
		// bad document early in a file is reported without converting
		// the rest first.
		batch := docs[from:min(from+docBatch, len(docs))]
		prepared := prepareDocs(batch, c.Sharer)
		for i, d := range batch {
			if onlyComments(d.data) {
				continue
			}
			if err := c.addDoc(file, d, prepared[i]); err != nil {
				return err
			}
		}
	}
	return nil
}

// docBatch is how many documents of a file are prepared at a time.
const docBatch = 512

// addDoc adds document d, which prepareDoc prepared as p: by the fast
// path when it took the document, else by decoding it into a map
// (decodeDoc) and adding that (addObject), which words every error.
// The fast path takes only what it adds exactly as the map decoding would.
func (c *Cluster) addDoc(file string, d doc, p preparedDoc) error {
	if !p.decline {
		return c.addPrepared(file, d, p)
	}
	obj, err := decodeDoc(file, d, p.js)
	if err != nil {
		return err
	}
	if obj == nil {
		return nil
	}
	return c.addObject(file, d.line, "", obj)
}
