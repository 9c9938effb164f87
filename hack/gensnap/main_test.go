package main

import (
	"bytes"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

func TestRunWritesANamedWorkload(t *testing.T) {
	var stdout, stderr bytes.Buffer
	if code := run([]string{"-w", "SchedulingBasic/5Nodes"}, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	var l struct {
		Kind  string
		Items []struct{ Kind string }
	}
	if err := yaml.Unmarshal(stdout.Bytes(), &l); err != nil {
		t.Fatal(err)
	}
	if l.Kind != "List" || len(l.Items) != 2+5+5+10 {
		t.Errorf("got %s with %d items, want a List of 2 namespaces, 5 nodes and 15 pods", l.Kind, len(l.Items))
	}
	if got := stderr.String(); got != "gensnap: SchedulingBasic/5Nodes: 5 nodes, 5 running, 10 pending pods\n" {
		t.Errorf("stderr %q", got)
	}
}

func TestRunListsAndRejects(t *testing.T) {
	var stdout, stderr bytes.Buffer
	if code := run([]string{"-list"}, &stdout, &stderr); code != 0 || !strings.Contains(stdout.String(), "Mixed/5000Nodes\n") {
		t.Errorf("-list: exit %d, %q", code, stdout.String())
	}
	for _, args := range [][]string{{"-w", "Nope/5Nodes"}, {}, {"-w", "Mixed", "-nodes", "-3"}} {
		stdout.Reset()
		stderr.Reset()
		if code := run(args, &stdout, &stderr); code != 2 || stdout.Len() != 0 {
			t.Errorf("%q: exit %d, stdout %q, stderr %q; want 2 and nothing on stdout", args, code, stdout.String(), stderr.String())
		}
	}
}
