//go:build !linux

package memusage

// resident is not read from the system here: Resident falls back to what
// the Go runtime holds.
func resident() (uint64, bool) { return 0, false }

// peak is unknown here.
func peak() (uint64, bool) { return 0, false }
