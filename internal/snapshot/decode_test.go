package snapshot

import (
	"bytes"
	"testing"
)

// onlyComments skips a document exactly when keeping its non-blank lines
// that do not start with '#' (the copy it replaced) left nothing.
func TestOnlyComments(t *testing.T) {
	kept := func(b []byte) bool {
		var out bytes.Buffer
		for _, l := range bytes.Split(b, []byte("\n")) {
			if t := bytes.TrimSpace(l); len(t) > 0 && t[0] != '#' {
				out.Write(l)
				out.WriteByte('\n')
			}
		}
		return len(bytes.TrimSpace(out.Bytes())) == 0
	}
	for _, tc := range []struct {
		name, doc string
		want      bool
	}{
		{"empty", "", true},
		{"blank lines", "\n  \n\t\n", true},
		{"comments", "# a\n  # b\n#c", true},
		{"comments and CRLF", "# a\r\n\r\n", true},
		{"object after comments", "# a\n\napiVersion: v1\n", false},
		{"object on the last line, no newline", "# a\n{}", false},
		{"JSON", "{\n  \"kind\": \"List\"\n}\n", false},
		{"hash inside a line", "kind: Pod # a pod\n", false},
		{"unicode space then a comment", "\u00a0# a\n", true},
		{"only a newline", "\n", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := onlyComments([]byte(tc.doc)); got != tc.want {
				t.Errorf("onlyComments(%q) = %v, want %v", tc.doc, got, tc.want)
			}
			if got := kept([]byte(tc.doc)); got != tc.want {
				t.Errorf("the copying check says %v for %q, want %v", got, tc.doc, tc.want)
			}
		})
	}
}
