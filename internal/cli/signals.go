package cli

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

// signalError is the cause of a context ended by SIGINT or SIGTERM. A verb
// that ends early because of it (run during its start-up) exits with the
// shell's convention for death by signal, 128 + its number: 130 for
// SIGINT, 143 for SIGTERM.
type signalError struct{ sig syscall.Signal }

func (e signalError) Error() string {
	switch e.sig {
	case syscall.SIGINT:
		return "interrupted (SIGINT)"
	case syscall.SIGTERM:
		return "terminated (SIGTERM)"
	}
	return fmt.Sprintf("stopped by signal %d", int(e.sig))
}

// Code is the exit code.
func (e signalError) Code() int { return 128 + int(e.sig) }

// notifyContext is signal.NotifyContext with the signal as the context's
// cause (context.Cause), so that what stops can say why and exit with the
// signal's code. After the first signal the handler is removed: a second
// Ctrl-C kills the process at once, as it would without one.
func notifyContext(parent context.Context) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancelCause(parent)
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, os.Interrupt, syscall.SIGTERM)
	go func() {
		select {
		case s := <-ch:
			signal.Stop(ch)
			sig, _ := s.(syscall.Signal)
			cancel(signalError{sig})
		case <-ctx.Done():
		}
	}()
	return ctx, func() {
		signal.Stop(ch)
		cancel(nil)
	}
}
