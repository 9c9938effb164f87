// Command completions writes the shell completion scripts under
// completions/ from the cobra command tree (`make completions`); the test in
// completions/ fails when they are out of date.
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubectl-sched/kubectl-sched/internal/cli"
)

func main() {
	dir := flag.String("dir", "completions", "directory to write the scripts into")
	flag.Parse()
	if err := write(*dir); err != nil {
		fmt.Fprintln(os.Stderr, "error:", err)
		os.Exit(1)
	}
}

func write(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	root := cli.NewRootCmd(genericiooptions.IOStreams{In: os.Stdin, Out: io.Discard, ErrOut: os.Stderr}, cli.Settings{})
	for _, sc := range cli.CompletionScripts {
		data, err := cli.GenCompletion(root, sc)
		if err != nil {
			return fmt.Errorf("%s: %w", sc.Name, err)
		}
		path := filepath.Join(dir, sc.Name)
		if err := os.WriteFile(path, data, os.FileMode(sc.Mode)); err != nil {
			return err
		}
		// WriteFile keeps the mode of an existing file.
		if err := os.Chmod(path, os.FileMode(sc.Mode)); err != nil {
			return err
		}
		fmt.Println("wrote", path)
	}
	return nil
}
