package replay

// WithoutRepeats is o running every retry's scheduling cycle, even those
// whose answer is known (repeat.go).
func WithoutRepeats(o Options) Options {
	o.noRepeat = true
	return o
}

// Repeated counts the attempts of res that were repeated rather than run.
func Repeated(res *Result) int { return res.repeated }
