package snapshot

// Decoding an object's JSON into its type with json-iterator, which does
// in half the time what encoding/json does (its reflection was half of
// loading a 100,000-node dump), and gives the same object wherever the two
// can differ only in how they read text: the bytes are first checked to be
// JSON as encoding/json checks them, and an object whose text holds what
// the two decode differently (bytes that are not UTF-8, or a \u escape of
// a surrogate, which encoding/json replaces with U+FFFD) is decoded by
// encoding/json. A decoding error of either leaves the object to the map
// path, which words it.

import (
	"bytes"
	"encoding/json"
	"io"
	"unicode/utf8"

	jsoniter "github.com/json-iterator/go"
)

// fastJSON is json-iterator set up as encoding/json: map keys sorted, HTML
// escaped, field names matched case-insensitively, UseNumber off, and the
// types' own UnmarshalJSON (Quantity, Time, IntOrString) called.
var fastJSON = jsoniter.ConfigCompatibleWithStandardLibrary

// unmarshalTyped decodes js, a valid JSON object (json.Valid), into obj.
// It is json-iterator's Unmarshal but for the iterator it borrows, which
// goes back to the pool without js: the pool would keep the last item's
// slice, and with it the whole file it was read from (920 MB for a
// 100,000-node dump), until two collections had emptied it.
func unmarshalTyped(js []byte, obj any) error {
	return unmarshalText(js, obj, plainText(js))
}

// unmarshalText is unmarshalTyped when plainText(js) is known (plain).
func unmarshalText(js []byte, obj any, plain bool) error {
	if !plain {
		return json.Unmarshal(js, obj)
	}
	iter := fastJSON.BorrowIterator(js)
	defer func() {
		iter.ResetBytes(nil)
		fastJSON.ReturnIterator(iter)
	}()
	iter.ReadVal(obj)
	if c := iter.WhatIsNext(); c != jsoniter.InvalidValue {
		iter.ReportError("Unmarshal", "there are bytes left after unmarshal")
	}
	if iter.Error == io.EOF {
		return nil
	}
	return iter.Error
}

// plainText reports whether js is UTF-8 without \u escapes of surrogates
// (\uD800–\uDFFF): text both decoders turn into the same strings.
func plainText(js []byte) bool {
	if !utf8.Valid(js) {
		return false
	}
	for rest := js; ; {
		i := bytes.Index(rest, []byte(`\u`))
		if i < 0 {
			return true
		}
		rest = rest[i+2:]
		if len(rest) > 0 && (rest[0] == 'd' || rest[0] == 'D') {
			// \u escapes of an escaped backslash (\\u) are rare
			// enough to be sent to encoding/json with the surrogates.
			return false
		}
	}
}
