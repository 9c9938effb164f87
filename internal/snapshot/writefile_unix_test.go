//go:build unix

package snapshot

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// TestWriteFileWritesThroughSpecialFiles: devices and FIFOs are written to
// as `>` would and stay what they are; a full device is an error, as with
// the shell.
func TestWriteFileWritesThroughSpecialFiles(t *testing.T) {
	t.Run("a FIFO gets the data and stays a FIFO", func(t *testing.T) {
		fifo := filepath.Join(t.TempDir(), "pipe")
		if err := syscall.Mkfifo(fifo, 0o600); err != nil {
			t.Skipf("mkfifo: %v", err)
		}
		// Held open for reading (and writing, so opening never blocks),
		// non-blocking and outside Go's poller: a write that never
		// reaches the pipe fails the test instead of hanging it.
		fd, err := syscall.Open(fifo, syscall.O_RDWR|syscall.O_NONBLOCK, 0)
		if err != nil {
			t.Skipf("opening the FIFO: %v", err)
		}
		defer syscall.Close(fd)
		if err := WriteFile(fifo, []byte("data"), 0o600); err != nil {
			t.Fatal(err)
		}
		buf := make([]byte, 16)
		n, err := syscall.Read(fd, buf)
		if n < 0 || string(buf[:n]) != "data" {
			t.Errorf("the reader got %q (%v), want \"data\"", buf[:max(n, 0)], err)
		}
		if fi, err := os.Lstat(fifo); err != nil || fi.Mode()&os.ModeNamedPipe == 0 {
			t.Errorf("%s is no longer a FIFO: %v %v", fifo, fi.Mode(), err)
		}
	})
	t.Run("/dev/null through a link stays a device", func(t *testing.T) {
		link := filepath.Join(t.TempDir(), "null")
		symlink(t, "/dev/null", link)
		if err := WriteFile(link, []byte("data"), 0o600); err != nil {
			t.Fatal(err)
		}
		if fi, err := os.Stat("/dev/null"); err != nil || fi.Mode()&os.ModeCharDevice == 0 {
			t.Fatalf("/dev/null is not a character device any more: %v %v", fi.Mode(), err)
		}
		wantLink(t, link, "/dev/null")
	})
	t.Run("a full device is an error and stays a device", func(t *testing.T) {
		full := fullDevice(t)
		err := WriteFile(full, []byte("data"), 0o600)
		if !errors.Is(err, syscall.ENOSPC) || err.Error() != "no space left on device" {
			t.Errorf("error %v, want ENOSPC: no space left on device", err)
		}
		if fi, err := os.Stat(full); err != nil || fi.Mode()&os.ModeCharDevice == 0 {
			t.Fatalf("%s is not a character device any more: %v %v", full, fi.Mode(), err)
		}
	})
}

// TestWriteFileKeepsHardLinks: a file with another name is written in
// place, so both names see the new data, as with `>`.
func TestWriteFileKeepsHardLinks(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.yaml"), filepath.Join(dir, "b.yaml")
	mustWrite(t, a, "old", 0o644)
	if err := os.Link(a, b); err != nil {
		t.Skipf("no hard links here: %v", err)
	}
	if err := WriteFile(b, []byte("data"), 0o600); err != nil {
		t.Fatal(err)
	}
	wantFile(t, a, "data", 0o644)
	wantFile(t, b, "data", 0o644)
}

// TestWriteFileKeepsTheOwner: root replacing another user's file leaves it
// theirs.
func TestWriteFileKeepsTheOwner(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("only root can give a file away")
	}
	p := filepath.Join(t.TempDir(), "theirs.yaml")
	mustWrite(t, p, "old", 0o600)
	if err := os.Chown(p, 4242, 4343); err != nil {
		t.Skipf("chown: %v", err)
	}
	if err := WriteFile(p, []byte("data"), 0o600); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	if st := fi.Sys().(*syscall.Stat_t); st.Uid != 4242 || st.Gid != 4343 {
		t.Errorf("owner %d:%d, want 4242:4343", st.Uid, st.Gid)
	}
}

// fullDevice returns a device that fails every write with ENOSPC, as
// /dev/full: as root a private copy of it (a regression must not replace
// the machine's /dev/full), else /dev/full itself (which only root could
// replace).
func fullDevice(t *testing.T) string {
	t.Helper()
	if os.Geteuid() != 0 {
		if _, err := os.Stat("/dev/full"); err != nil {
			t.Skip("no /dev/full")
		}
		return "/dev/full"
	}
	fi, err := os.Stat("/dev/full")
	if err != nil {
		t.Skip("no /dev/full")
	}
	p := filepath.Join(t.TempDir(), "full")
	if err := syscall.Mknod(p, syscall.S_IFCHR|0o666, int(fi.Sys().(*syscall.Stat_t).Rdev)); err != nil {
		t.Skipf("mknod: %v", err)
	}
	return p
}
