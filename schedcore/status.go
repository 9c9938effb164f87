package schedcore

import (
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
)

// Code is the outcome class of a plugin call. The values and their meaning
// follow kube-scheduler v1.37 so that queue behaviour and messages match.
type Code int

const (
	// Success means the plugin ran correctly and found the pod schedulable.
	// A nil *Status also means Success.
	Success Code = iota
	// Error is an internal plugin or scheduler error, unrelated to the pod's fit.
	// The pod is requeued with backoff and without rejector plugins.
	Error
	// Unschedulable means the pod does not fit, but preemption may help.
	Unschedulable
	// UnschedulableAndUnresolvable means the pod does not fit and removing
	// pods from the node would not change that; preemption skips the node.
	UnschedulableAndUnresolvable
	// Wait is returned by Permit plugins to hold a pod before binding.
	Wait
	// Skip tells the framework to skip the coupled Filter/Score of a
	// PreFilter/PreScore plugin, or a Bind plugin defers to the next binder.
	Skip
	// Pending means the pod is waiting for something outside the scheduler;
	// it goes back to activeQ without backoff when a registered event comes.
	Pending
)

var codeNames = [...]string{"Success", "Error", "Unschedulable", "UnschedulableAndUnresolvable", "Wait", "Skip", "Pending"}

// String returns the kube-scheduler name of the code.
func (c Code) String() string {
	if int(c) < len(codeNames) && c >= 0 {
		return codeNames[c]
	}
	return fmt.Sprintf("Code(%d)", int(c))
}

// Status is the result of a plugin call. A nil *Status is Success and every
// method is nil-safe, so plugins return nil on the hot path.
type Status struct {
	code    Code
	reasons []string
	err     error
	plugin  string
	// forGroup marks a rejection for the sake of the pod's group rather
	// than its own fit (ForGroup).
	forGroup bool
	// shared marks a status from NewSharedStatus; stamped is its copy
	// carrying the plugin name.
	shared  bool
	stamped atomic.Pointer[Status]
}

// NewSharedStatus makes a rejection a plugin may return from any number of
// calls, concurrently, instead of allocating one per node: WithPlugin
// returns a copy carrying the plugin's name (made once) and never changes
// the shared status itself. Only for statuses no one appends to.
func NewSharedStatus(code Code, reasons ...string) *Status {
	s := NewStatus(code, reasons...)
	s.shared = true
	return s
}

// skipped is the status Skipped returns.
var skipped = NewSharedStatus(Skip)

// Skipped returns a Skip status without reasons shared by every caller,
// as NewSharedStatus makes them (WithPlugin stamps a copy; never append to
// it): what a PreFilter, PreScore or PreBindPreFlight with nothing to do
// returns, once per cycle, without allocating.
func Skipped() *Status { return skipped }

// NewStatus makes a Status with the given code and reasons.
func NewStatus(code Code, reasons ...string) *Status {
	s := &Status{code: code, reasons: reasons}
	if code == Error && len(reasons) > 0 {
		s.err = errors.New(s.Message())
	}
	return s
}

// AsStatus wraps an error into a Status with code Error. A nil error gives nil.
func AsStatus(err error) *Status {
	if err == nil {
		return nil
	}
	return &Status{code: Error, reasons: []string{err.Error()}, err: err}
}

// Code returns the code; Success for nil.
func (s *Status) Code() Code {
	if s == nil {
		return Success
	}
	return s.code
}

// Reasons returns the reasons; nil for nil.
func (s *Status) Reasons() []string {
	if s == nil {
		return nil
	}
	if s.err != nil && len(s.reasons) == 0 {
		return []string{s.err.Error()}
	}
	return s.reasons
}

// AppendReason adds a reason to the status.
func (s *Status) AppendReason(reason string) {
	s.reasons = append(s.reasons, reason)
}

// Message joins the reasons with ", " as kube-scheduler does.
func (s *Status) Message() string {
	if s == nil {
		return ""
	}
	return strings.Join(s.Reasons(), ", ")
}

// Plugin returns the name of the plugin that produced the status, stamped by
// the framework runner.
func (s *Status) Plugin() string {
	if s == nil {
		return ""
	}
	return s.plugin
}

// WithPlugin stamps the plugin name and returns the status for chaining.
func (s *Status) WithPlugin(name string) *Status {
	if s == nil {
		return nil
	}
	if s.shared {
		if c := s.stamped.Load(); c != nil && c.plugin == name {
			return c
		}
		c := &Status{code: s.code, reasons: s.reasons, err: s.err, plugin: name, forGroup: s.forGroup}
		s.stamped.Store(c)
		return c
	}
	s.plugin = name
	return s
}

// ForGroup marks a rejection as one for the sake of the pod's group (a
// sibling failed, the group timed out or backs off) rather than the pod's
// own fit, and returns the status for chaining. Group plugins mark their
// statuses; a pod waiting at Permit that is rejected or times out is
// marked by the framework. Drivers read it with RejectedForGroup.
func (s *Status) ForGroup() *Status {
	if s != nil {
		s.forGroup = true
	}
	return s
}

// IsForGroup reports whether the status is marked ForGroup.
func (s *Status) IsForGroup() bool { return s != nil && s.forGroup }

// WithError attaches an underlying error.
func (s *Status) WithError(err error) *Status {
	if s != nil {
		s.err = err
	}
	return s
}

// IsSuccess reports whether the status is nil or Success.
func (s *Status) IsSuccess() bool { return s.Code() == Success }

// IsWait reports whether the code is Wait.
func (s *Status) IsWait() bool { return s.Code() == Wait }

// IsError reports whether the status is an Error (kube's IsError).
func (s *Status) IsError() bool { return s.Code() == Error }

// IsSkip reports whether the code is Skip.
func (s *Status) IsSkip() bool { return s.Code() == Skip }

// IsRejected reports whether the pod was rejected: Unschedulable,
// UnschedulableAndUnresolvable or Pending.
func (s *Status) IsRejected() bool {
	c := s.Code()
	return c == Unschedulable || c == UnschedulableAndUnresolvable || c == Pending
}

// AsError returns nil for success and rejection-free codes, else an error
// carrying the message.
func (s *Status) AsError() error {
	if s.IsSuccess() || s.IsWait() || s.IsSkip() {
		return nil
	}
	if s.err != nil {
		return s.err
	}
	return errors.New(s.Message())
}

// Err returns the underlying error, if any.
func (s *Status) Err() error {
	if s == nil {
		return nil
	}
	return s.err
}

// Equal compares code, reasons and plugin.
func (s *Status) Equal(o *Status) bool {
	if s == nil || o == nil {
		return s.IsSuccess() && o.IsSuccess()
	}
	if s.code != o.code || s.plugin != o.plugin || len(s.reasons) != len(o.reasons) {
		return false
	}
	for i := range s.reasons {
		if s.reasons[i] != o.reasons[i] {
			return false
		}
	}
	return true
}

// String renders the status for logs.
func (s *Status) String() string {
	if s == nil {
		return "Success"
	}
	if s.plugin != "" {
		return fmt.Sprintf("%s(%s): %s", s.code, s.plugin, s.Message())
	}
	return fmt.Sprintf("%s: %s", s.code, s.Message())
}

// IsShared reports whether s came from NewSharedStatus: the same status
// for every node it rejects, which a filter memo can remember once.
func (s *Status) IsShared() bool { return s != nil && s.shared }
