package v1list

import (
	"bufio"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/kubectl-sched/kubectl-sched/internal/snapshot"
)

// Format resolves a generator's -o against its -output-file, as the verbs
// do: "" is json for a .json file, else yaml; anything but yaml or json is
// an error, which for a file name points to -output-file.
func Format(o, file string) (string, error) {
	switch {
	case o == "" && strings.EqualFold(filepath.Ext(file), ".json"):
		return "json", nil
	case o == "":
		return "yaml", nil
	case o == "yaml" || o == "json":
		return o, nil
	case filepath.Ext(o) != "" || strings.ContainsAny(o, `/\`):
		return "", fmt.Errorf("-o: unknown format %q, want yaml or json (-o is the format; the file is -output-file %s)", o, o)
	default:
		return "", fmt.Errorf("-o: unknown format %q, want yaml or json", o)
	}
}

// WriteOutput writes b to stdout for file "" or "-", else to file as
// kubectl sched snapshot --output-file does (snapshot.WriteFile: atomic,
// links followed, devices written through).
func WriteOutput(file string, b []byte, stdout io.Writer) error {
	if file == "" || file == "-" {
		w := bufio.NewWriter(stdout)
		if _, err := w.Write(b); err != nil {
			return err
		}
		return w.Flush()
	}
	return snapshot.WriteFile(file, b, 0o644)
}
