package snapshot

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
)

// maxLinks bounds how many symbolic links WriteFile follows, as the
// kernel's ELOOP does.
const maxLinks = 40

// WriteFile writes data to path as the shell's `>` would, but atomically
// where it can:
//   - a symbolic link is followed (even a dangling one, whose target is
//     created), so the link stays and its target gets the data;
//   - a regular file, or a new one, is replaced atomically: data goes to a
//     temporary file in the same directory, synced, then renamed over it,
//     so a failure leaves no half-written file and the old one intact. An
//     existing file keeps its permissions (and, where the process may
//     set it, its owner); a new one gets perm;
//   - anything else (a device such as /dev/null or /dev/stdout, a FIFO)
//     and a regular file with other hard links are written through, as `>`
//     does, never replaced by a regular file;
//   - a directory is an error.
//
// Errors name no temporary file: they say what failed on the path given
// (the caller names it) or on its directory.
func WriteFile(path string, data []byte, perm os.FileMode) error {
	target, err := followLinks(path)
	if err != nil {
		return err
	}
	fi, err := os.Stat(target)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		fi = nil
	case err != nil:
		return pathErr(err)
	case fi.IsDir():
		return errors.New("is a directory")
	case !fi.Mode().IsRegular() || hardLinks(fi) > 1:
		return writeThrough(target, data)
	default:
		perm = fi.Mode() & (fs.ModePerm | fs.ModeSetuid | fs.ModeSetgid | fs.ModeSticky)
	}
	return replace(target, data, perm, fi)
}

// followLinks resolves path's symbolic links to the file they name, which
// need not exist.
func followLinks(path string) (string, error) {
	for range maxLinks {
		fi, err := os.Lstat(path)
		if err != nil || fi.Mode()&fs.ModeSymlink == 0 {
			return path, nil
		}
		dest, err := os.Readlink(path)
		if err != nil {
			return "", pathErr(err)
		}
		if !filepath.IsAbs(dest) {
			dir := filepath.Dir(path)
			if real, err := filepath.EvalSymlinks(dir); err == nil {
				dir = real
			}
			dest = filepath.Join(dir, dest)
		}
		path = dest
	}
	return "", errors.New("too many levels of symbolic links")
}

// writeThrough opens the existing file for writing, truncated, as `>` does.
func writeThrough(target string, data []byte) error {
	f, err := os.OpenFile(target, os.O_WRONLY|os.O_TRUNC, 0)
	if err != nil {
		return pathErr(err)
	}
	if _, err := f.Write(data); err != nil {
		_ = f.Close()
		return pathErr(err)
	}
	return pathErr(f.Close())
}

// replace writes a temporary file beside target and renames it over it.
// old is the file replaced (nil if none): its owner is kept.
func replace(target string, data []byte, perm os.FileMode, old os.FileInfo) (err error) {
	dir, base := filepath.Split(target)
	if dir == "" {
		dir = "."
	}
	tmp, err := os.CreateTemp(dir, "."+base+".tmp-*")
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("directory %s does not exist", filepath.Clean(dir))
		}
		return fmt.Errorf("creating a temporary file in %s: %w", filepath.Clean(dir), pathErr(err))
	}
	defer func() {
		if err != nil {
			_ = tmp.Close()
			_ = os.Remove(tmp.Name())
		}
	}()
	if _, err = tmp.Write(data); err != nil {
		return pathErr(err)
	}
	if old != nil {
		keepOwner(tmp, old) // before Chmod: a chown clears setuid bits
	}
	if err = tmp.Chmod(perm); err != nil {
		return pathErr(err)
	}
	if err = tmp.Sync(); err != nil {
		return pathErr(err)
	}
	if err = tmp.Close(); err != nil {
		return pathErr(err)
	}
	if err = os.Rename(tmp.Name(), target); err != nil {
		return pathErr(err)
	}
	return nil
}

// pathErr drops the path from an *fs.PathError or *os.LinkError (it may
// be a temporary file's), keeping the cause: "no space left on device".
func pathErr(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	var le *os.LinkError
	if errors.As(err, &le) {
		return le.Err
	}
	return err
}

// CheckWritable reports, before long work, what would make WriteFile
// fail for want of a place to write: path (its links followed) is a
// directory, or its directory does not exist or is not one. It does not
// create anything.
func CheckWritable(path string) error {
	target, err := followLinks(path)
	if err != nil {
		return err
	}
	fi, err := os.Stat(target)
	switch {
	case err == nil && fi.IsDir():
		return errors.New("is a directory")
	case err == nil:
		return nil
	case !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, syscall.ENOTDIR):
		return pathErr(err)
	}
	dir := filepath.Dir(target)
	di, err := os.Stat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("directory %s does not exist", filepath.Clean(dir))
	case err != nil:
		return pathErr(err)
	case !di.IsDir():
		return fmt.Errorf("%s is not a directory", filepath.Clean(dir))
	}
	return nil
}
