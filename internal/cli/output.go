package cli

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
)

// redirectHint is what -o FILE gets from verbs that print to stdout only.
const redirectHint = "-o is the output format, as in kubectl; to save the output, redirect it: > %s"

// checkFormat validates -o/--output against formats, as every verb does:
// -o is the output format, as in kubectl. A value that looks like a file
// name (cluster.yaml, ./out, /tmp/x) gets hint, formatted with the value,
// since -o FILE is a common habit from other tools.
func checkFormat(value string, formats []string, hint string) error {
	if slices.Contains(formats, value) {
		return nil
	}
	msg := fmt.Sprintf("--output: unknown format %q (want %s)", value, oneOf(formats))
	if looksLikeFile(value) && hint != "" {
		msg += "; " + fmt.Sprintf(hint, value)
	}
	return UsageErrorf("%s", msg)
}

// oneOf renders formats as "json or yaml" or "one of table, wide, json,
// yaml"; the empty format (a verb's default text) goes without saying.
func oneOf(formats []string) string {
	var q []string
	for _, f := range formats {
		if f != "" {
			q = append(q, f)
		}
	}
	if len(q) == 2 {
		return q[0] + " or " + q[1]
	}
	return "one of " + strings.Join(q, ", ")
}

// looksLikeFile reports whether a flag value reads as a path rather than
// a word: it has an extension or a path separator.
func looksLikeFile(v string) bool {
	return filepath.Ext(v) != "" || strings.ContainsAny(v, `/\`)
}
