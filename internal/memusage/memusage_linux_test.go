package memusage

import "testing"

func TestParseStatus(t *testing.T) {
	status := []byte("Name:\tfgd\nVmHWM:\t 2111640 kB\nVmRSS:\t  123456 kB\nThreads:\t9\n")
	for _, c := range []struct {
		field string
		want  uint64
		ok    bool
	}{
		{"VmHWM:", 2111640 << 10, true},
		{"VmRSS:", 123456 << 10, true},
		{"VmSwap:", 0, false},
	} {
		got, ok := parseStatus(status, c.field)
		if got != c.want || ok != c.ok {
			t.Errorf("parseStatus(%s) = %d, %v; want %d, %v", c.field, got, ok, c.want, c.ok)
		}
	}
}
