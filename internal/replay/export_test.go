package replay

// WithoutRepeats is o running every retry's scheduling cycle, even those
// whose answer is known (repeat.go).
func WithoutRepeats(o Options) Options {
	o.noRepeat = true
	return o
}

// RepeatedAttempts counts the attempts repeated rather than run by the
// replays so far.
func RepeatedAttempts() int64 { return repeatedAttempts.Load() }

// BlindRepeats counts the repeated attempts made after other pods changed
// (a failure that read no pod but its own) by the replays so far.
func BlindRepeats() int64 { return blindRepeats.Load() }
