// Package memusage reads how much memory the process holds: its resident
// set now and at its peak, for the progress of long replays and the last
// line of hack/fgd.
package memusage

import (
	"fmt"
	"runtime/metrics"
)

// Resident returns the bytes of the process's resident set: the kernel's
// count where it is read (Linux), otherwise the memory the Go runtime
// holds from the system and has not released (which leaves out memory
// that is not Go's, and counts memory that is paged out).
func Resident() uint64 {
	if rss, ok := resident(); ok {
		return rss
	}
	return goHeld()
}

// Peak returns the most bytes the process's resident set has held, and
// false where the system does not say (then Resident is all there is).
func Peak() (uint64, bool) { return peak() }

// goHeld is the memory the Go runtime has mapped and not released.
func goHeld() uint64 {
	s := []metrics.Sample{{Name: "/memory/classes/total:bytes"}, {Name: "/memory/classes/heap/released:bytes"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 || s[1].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return s[0].Value.Uint64() - s[1].Value.Uint64()
}

// Format writes bytes in binary units with one decimal from a GiB up
// ("512 MiB", "3.4 GiB").
func Format(b uint64) string {
	const mib, gib = 1 << 20, 1 << 30
	if b >= gib {
		return fmt.Sprintf("%.1f GiB", float64(b)/gib)
	}
	return fmt.Sprintf("%d MiB", (b+mib/2)/mib)
}
