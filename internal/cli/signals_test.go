package cli

import (
	"context"
	"errors"
	"fmt"
	"syscall"
	"testing"
)

// TestASignalIsTheContextsCause: SIGTERM sent to the process ends the
// context notifyContext made, with the signal as its cause, and the error
// carrying it exits with 128 + the signal's number.
func TestASignalIsTheContextsCause(t *testing.T) {
	ctx, stop := notifyContext(context.Background())
	defer stop()
	if err := syscall.Kill(syscall.Getpid(), syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	<-ctx.Done()
	cause := context.Cause(ctx)
	var se signalError
	if !errors.As(cause, &se) || se.sig != syscall.SIGTERM {
		t.Fatalf("cause %v, want SIGTERM", cause)
	}
	if got := cause.Error(); got != "terminated (SIGTERM)" {
		t.Errorf("cause says %q", got)
	}
	if got := ExitCode(fmt.Errorf("run: %w", cause)); got != 143 {
		t.Errorf("exit code %d, want 143", got)
	}
	if got := ExitCode(signalError{syscall.SIGINT}); got != 130 {
		t.Errorf("exit code of SIGINT %d, want 130", got)
	}
}

// TestStoppingTheContextIsNoSignal: a context stopped by its caller has no
// signal as its cause.
func TestStoppingTheContextIsNoSignal(t *testing.T) {
	ctx, stop := notifyContext(context.Background())
	stop()
	<-ctx.Done()
	if errors.As(context.Cause(ctx), new(signalError)) {
		t.Errorf("cause %v, want no signal", context.Cause(ctx))
	}
}
