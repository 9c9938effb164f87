package snapshot

import (
	"encoding/json"
	"reflect"
	"testing"
)

// The walk that reads an item's header checks it as JSON: it says ok only
// for what json.Valid accepts, so the typed path, which no longer runs
// json.Valid on an item whose walk passed, takes no malformed item.
func TestPeekHeaderChecksJSON(t *testing.T) {
	cases := []struct {
		name, js string
		ok       bool
	}{
		{"every kind of value", `{"kind":"Pod","metadata":{"name":"p"},"a":[1,-0.5e+3,0,2E-7,true,false,null,"\u00e9\n\"\\\/\b\f\r\t",{},[]],"b":{"c":[]}}`, true},
		{"whitespace everywhere", " \n{ \"kind\" : \"Pod\" ,\t\"a\" : [ 1 , { } ] }\r\n", true},
		{"a trailing comma in an object", `{"a":1,}`, false},
		{"a trailing comma in a list", `{"a":[1,]}`, false},
		{"a missing value in a list", `{"a":[1,,2]}`, false},
		{"a leading zero", `{"a":01}`, false},
		{"a point without digits", `{"a":1.}`, false},
		{"a fraction without its integer", `{"a":.5}`, false},
		{"a plus sign", `{"a":+1}`, false},
		{"a lone minus", `{"a":-}`, false},
		{"an exponent without digits", `{"a":1e+}`, false},
		{"NaN", `{"a":NaN}`, false},
		{"a truncated literal", `{"a":tru}`, false},
		{"a literal with more letters", `{"a":nulll}`, false},
		{"a literal in capitals", `{"a":True}`, false},
		{"a control character in a string", "{\"a\":\"x\x01y\"}", false},
		{"a newline in a string", "{\"a\":\"x\ny\"}", false},
		{"an unknown escape", `{"a":"\q"}`, false},
		{"a short \\u escape", `{"a":"\u12g4"}`, false},
		{"a \\u escape cut by the end", `{"a":"\u12`, false},
		{"a single-quoted string", `{"a":'x'}`, false},
		{"a missing value", `{"a":}`, false},
		{"a missing colon", `{"a" 1}`, false},
		{"a missing comma", `{"a":1 "b":2}`, false},
		{"values without a comma in a list", `{"a":[1 2]}`, false},
		{"an unclosed list", `{"a":[}`, false},
		{"an unclosed object", `{"a":{"b":1}`, false},
		{"something after the object", `{"a":1} x`, false},
		{"an unterminated string", `{"a":"x`, false},
		{"a key that is not a string", `{a:1}`, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if v := json.Valid([]byte(tc.js)); v != tc.ok {
				t.Fatalf("json.Valid = %v: the case is wrong", v)
			}
			if _, _, ok := peekHeader([]byte(tc.js)); ok != tc.ok {
				t.Errorf("peekHeader ok = %v, want %v", ok, tc.ok)
			}
		})
	}
}

// The walk says plain only for text both decoders read alike: UTF-8
// without \u escapes of surrogates (an escaped backslash before "ud800" is
// plain text).
func TestPeekHeaderPlain(t *testing.T) {
	cases := []struct {
		name, js string
		plain    bool
	}{
		{"ASCII", `{"a":"b"}`, true},
		{"UTF-8 and escapes of other characters", `{"a":"é\u00e9\u003c\u4e2d"}`, true},
		{"an escaped surrogate", `{"a":"\ud83d\ude00"}`, false},
		{"an escaped surrogate in capitals", `{"a":"\uD800"}`, false},
		{"a byte that is not UTF-8", "{\"a\":\"\xc3\"}", false},
		{"an escaped backslash before ud800", `{"a":"\\ud800"}`, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, plain, ok := peekHeader([]byte(tc.js))
			if !ok || plain != tc.plain {
				t.Errorf("peekHeader plain, ok = %v, %v, want %v, true", plain, ok, tc.plain)
			}
		})
	}
}

// FuzzPeekHeader: what the walk accepts, json.Valid accepts, and what it
// calls plain both decoders read alike.
func FuzzPeekHeader(f *testing.F) {
	f.Add([]byte(`{"kind":"Pod","metadata":{"name":"p"},"a":[1,-0.5e+3,true,null,"\u00e9\\ud800"]}`))
	f.Add([]byte(`{"a":[1,]}`))
	f.Add([]byte("{\"a\":\"\xc3\\ud83d\"}"))
	f.Add([]byte(`{"a":{"b":{"c":[[[[{}]]]]}}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		_, plain, ok := peekHeader(data)
		if !ok {
			return
		}
		if !json.Valid(data) {
			t.Fatalf("peekHeader accepts %q, which json.Valid rejects", data)
		}
		if !plain {
			return
		}
		var std, fast any
		errStd, errFast := json.Unmarshal(data, &std), fastJSON.Unmarshal(data, &fast)
		if (errStd == nil) != (errFast == nil) || !reflect.DeepEqual(std, fast) {
			t.Fatalf("plain text %q decodes as %#v (%v) and, fast, %#v (%v)", data, std, errStd, fast, errFast)
		}
	})
}
