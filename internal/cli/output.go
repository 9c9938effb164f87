package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/kubectl-sched/kubectl-sched/internal/snapshot"
)

// redirectHint is what -o FILE gets from verbs that print to stdout only.
const redirectHint = "-o is the output format, as in kubectl; to save the output, redirect it: > %s"

// checkFormat validates -o/--output against formats, as every verb does:
// -o is the output format, as in kubectl. A value that looks like a file
// name (cluster.yaml, ./out, /tmp/x) gets hint, formatted with the value,
// since -o FILE is a common habit from other tools; a hint without %s is
// given whatever the value.
func checkFormat(value string, formats []string, hint string) error {
	if slices.Contains(formats, value) {
		return nil
	}
	msg := fmt.Sprintf("--output: unknown format %q (want %s)", value, oneOf(formats))
	switch {
	case hint != "" && !strings.Contains(hint, "%s"):
		msg += "; " + hint
	case hint != "" && looksLikeFile(value):
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

// checkOutputFile checks, before long work, that the file a flag names
// can be written: not a directory, in a directory that exists. "" is no
// file.
func checkOutputFile(flag, path string) error {
	if path == "" {
		return nil
	}
	if err := snapshot.CheckWritable(path); err != nil {
		return UsageErrorf("%s %s: %v", flag, path, err)
	}
	return nil
}

// writeOutputFile writes a file a flag names as the shell's > would, but
// atomically where it can (snapshot.WriteFile): links are followed,
// devices and FIFOs written through, a file's mode kept, and a failure
// leaves the old file as it was.
func writeOutputFile(flag, path string, data []byte, perm os.FileMode) error {
	if err := snapshot.WriteFile(path, data, perm); err != nil {
		return fmt.Errorf("writing %s %s: %w", flag, path, err)
	}
	return nil
}
