package memusage

import (
	"runtime"
	"testing"
)

func TestFormat(t *testing.T) {
	for _, c := range []struct {
		in   uint64
		want string
	}{
		{0, "0 MiB"},
		{512 << 20, "512 MiB"},
		{1023<<20 + 600<<10, "1024 MiB"},
		{1 << 30, "1.0 GiB"},
		{3<<30 + 400<<20, "3.4 GiB"},
	} {
		if got := Format(c.in); got != c.want {
			t.Errorf("Format(%d) = %q, want %q", c.in, got, c.want)
		}
	}
}

// TestResidentCountsAllocations holds 64 MiB, written to so it is resident,
// and checks that Resident and Peak (where the system tells it) count it.
func TestResidentCountsAllocations(t *testing.T) {
	before := Resident()
	buf := make([]byte, 64<<20)
	for i := range buf {
		buf[i] = byte(i)
	}
	after := Resident()
	if after < before+48<<20 {
		t.Errorf("Resident: %s before 64 MiB were written, %s after", Format(before), Format(after))
	}
	if p, ok := Peak(); ok && p < after {
		t.Errorf("Peak %s < Resident %s", Format(p), Format(after))
	}
	runtime.KeepAlive(buf)
}
