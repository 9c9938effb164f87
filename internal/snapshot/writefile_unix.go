//go:build unix

package snapshot

import (
	"os"
	"syscall"
)

// hardLinks is the file's link count (1 where it cannot be told).
func hardLinks(fi os.FileInfo) uint64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Nlink)
	}
	return 1
}

// keepOwner gives f the owner and group of old, where the process may
// (root may; others keep their own, as the shell's `>` over a new file
// would give): best effort, a failure leaves f as created.
func keepOwner(f *os.File, old os.FileInfo) {
	st, ok := old.Sys().(*syscall.Stat_t)
	if !ok || (int(st.Uid) == os.Geteuid() && int(st.Gid) == os.Getegid()) {
		return
	}
	_ = f.Chown(int(st.Uid), int(st.Gid))
}
