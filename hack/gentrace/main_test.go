package main

import (
	"bytes"
	"os"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestShippedTraceIsWhatGentraceWrites keeps examples/trace.yaml in step
// with this generator.
func TestShippedTraceIsWhatGentraceWrites(t *testing.T) {
	var b bytes.Buffer
	if err := write(&b); err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile("../../examples/trace.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(string(want), b.String()); diff != "" {
		t.Errorf("examples/trace.yaml drifted: run go run ./hack/gentrace > examples/trace.yaml (-shipped +generated):\n%s", diff)
	}
}
