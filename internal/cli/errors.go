package cli

import (
	"errors"
	"fmt"

	"github.com/kubectl-sched/kubectl-sched/internal/kube"
)

// Exit codes.
const (
	ExitOK      = 0
	ExitFailure = 1
	ExitUsage   = 2
	// ExitIncomplete is capacity's and drain's "no": some spec did not get
	// its --replicas, some pod of a drain would not find a node.
	ExitIncomplete = 3
)

// exitStatus ends a verb with an exit code and no error message: its
// report, already printed, says why.
type exitStatus struct{ code int }

func (e exitStatus) Error() string { return fmt.Sprintf("exit status %d", e.code) }

// Code is the exit code (tests and the docs' example runner read it).
func (e exitStatus) Code() int { return e.code }

// ErrUsage marks errors caused by bad usage or bad input: exit code 2
// (so does kube.ErrKubeconfig, a kubeconfig that cannot be loaded).
var ErrUsage = errors.New("bad usage or input")

type usageError struct{ err error }

func (u usageError) Error() string   { return u.err.Error() }
func (u usageError) Unwrap() []error { return []error{u.err, ErrUsage} }

// UsageErrorf returns an error that exits with code 2.
func UsageErrorf(format string, args ...any) error {
	return usageError{fmt.Errorf(format, args...)}
}

// AsUsage marks err as a usage/input error (nil stays nil).
func AsUsage(err error) error {
	if err == nil || errors.Is(err, ErrUsage) {
		return err
	}
	return usageError{err}
}

// ExitCode maps an error to the process exit code.
func ExitCode(err error) int {
	switch {
	case err == nil:
		return ExitOK
	case errors.Is(err, ErrUsage), errors.Is(err, kube.ErrKubeconfig):
		return ExitUsage
	case errors.As(err, new(exitStatus)):
		var es exitStatus
		errors.As(err, &es)
		return es.code
	case errors.As(err, new(signalError)):
		var se signalError
		errors.As(err, &se)
		return se.Code()
	default:
		return ExitFailure
	}
}
