package memusage

import (
	"bufio"
	"bytes"
	"os"
	"strconv"
)

// resident is VmRSS of /proc/self/status.
func resident() (uint64, bool) { return statusField("VmRSS:") }

// peak is VmHWM of /proc/self/status, the resident set's high-water mark.
func peak() (uint64, bool) { return statusField("VmHWM:") }

// statusField reads a "Name:   1234 kB" line of /proc/self/status.
func statusField(name string) (uint64, bool) {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0, false
	}
	return parseStatus(data, name)
}

func parseStatus(data []byte, name string) (uint64, bool) {
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		f := bytes.Fields(sc.Bytes())
		if len(f) == 3 && string(f[0]) == name && string(f[2]) == "kB" {
			kb, err := strconv.ParseUint(string(f[1]), 10, 64)
			return kb << 10, err == nil
		}
	}
	return 0, false
}
