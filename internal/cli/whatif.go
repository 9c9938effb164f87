package cli

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"

	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubectl-sched/kubectl-sched/internal/capacity"
	"github.com/kubectl-sched/kubectl-sched/internal/engine"
	"github.com/kubectl-sched/kubectl-sched/internal/snapshot"
)

// What capacity and drain share besides engineFlags: how the answer is
// printed (exit status 3 for "no").

// pendingNote says, for capacity and drain, that the cluster's pending
// pods are left out of the answer (how), where a dry-run of the same dump
// places them first; "" when there are none.
func pendingNote(cl *snapshot.Cluster, how string) string {
	n := 0
	for _, p := range cl.Pods {
		if engine.Pending(p) {
			n++
		}
	}
	switch n {
	case 0:
		return ""
	case 1:
		return fmt.Sprintf("note: the cluster's pending pod is %s (kubectl sched dryrun places it)", how)
	}
	return fmt.Sprintf("note: the cluster's %d pending pods are %s (kubectl sched dryrun places them)", n, how)
}

// printWhatIf renders the report into a buffer (a failure leaves stdout
// empty), prints the cluster's warnings on stderr and the report on
// stdout, and ends with exit status 3 when the answer is no.
func printWhatIf(streams genericiooptions.IOStreams, warnings []string, render func(io.Writer) error, complete bool) error {
	var buf bytes.Buffer
	if err := render(&buf); err != nil {
		return err
	}
	for _, w := range warnings {
		fmt.Fprintln(streams.ErrOut, w)
	}
	if _, err := streams.Out.Write(buf.Bytes()); err != nil {
		return err
	}
	if !complete {
		return exitStatus{ExitIncomplete}
	}
	return nil
}

// asInputError marks the errors of bad input files as usage errors (exit
// code 2).
func asInputError(err error) error {
	if errors.Is(err, snapshot.ErrInvalid) || errors.Is(err, capacity.ErrNotASpec) {
		return AsUsage(err)
	}
	return err
}

// oneStdin fails when more than one flag reads standard input.
func oneStdin(lists ...[]string) error {
	n := 0
	for _, l := range lists {
		for _, p := range l {
			if p == "-" {
				n++
			}
		}
	}
	if n > 1 {
		return UsageErrorf("only one file may be '-' (standard input)")
	}
	return nil
}

func clusterWhere(snapshots []string) string {
	if len(snapshots) > 0 {
		return strings.Join(snapshots, ", ")
	}
	return "the cluster"
}
