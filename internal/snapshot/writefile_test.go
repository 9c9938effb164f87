package snapshot

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// files lists dir's entries but the ones a test made on purpose, so a
// temporary file left behind shows.
func files(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	sort.Strings(names)
	return names
}

func TestWriteFile(t *testing.T) {
	tests := []struct {
		name string
		// setup prepares dir and returns the path to write.
		setup func(t *testing.T, dir string) string
		// wantErr is the error's text; "" for success.
		wantErr string
		// check looks at the result (after a success or a failure).
		check func(t *testing.T, dir string)
	}{
		{
			name:  "a new file is created with the given mode",
			setup: func(t *testing.T, dir string) string { return filepath.Join(dir, "new.yaml") },
			check: func(t *testing.T, dir string) {
				wantFile(t, filepath.Join(dir, "new.yaml"), "data", 0o600)
			},
		},
		{
			name: "an existing file is replaced and keeps its mode",
			setup: func(t *testing.T, dir string) string {
				p := filepath.Join(dir, "old.yaml")
				mustWrite(t, p, "old", 0o640)
				return p
			},
			check: func(t *testing.T, dir string) {
				wantFile(t, filepath.Join(dir, "old.yaml"), "data", 0o640)
			},
		},
		{
			name: "a symbolic link is followed: the link stays, its target gets the data",
			setup: func(t *testing.T, dir string) string {
				mustWrite(t, filepath.Join(dir, "target.yaml"), "old", 0o644)
				return symlink(t, "target.yaml", filepath.Join(dir, "link.yaml"))
			},
			check: func(t *testing.T, dir string) {
				wantLink(t, filepath.Join(dir, "link.yaml"), "target.yaml")
				wantFile(t, filepath.Join(dir, "target.yaml"), "data", 0o644)
			},
		},
		{
			name: "a chain of links into another directory is followed to the end",
			setup: func(t *testing.T, dir string) string {
				sub := filepath.Join(dir, "sub")
				if err := os.Mkdir(sub, 0o755); err != nil {
					t.Fatal(err)
				}
				mustWrite(t, filepath.Join(sub, "real.yaml"), "old", 0o600)
				symlink(t, filepath.Join(sub, "real.yaml"), filepath.Join(dir, "abs.yaml"))
				return symlink(t, "abs.yaml", filepath.Join(dir, "rel.yaml"))
			},
			check: func(t *testing.T, dir string) {
				wantLink(t, filepath.Join(dir, "rel.yaml"), "abs.yaml")
				wantFile(t, filepath.Join(dir, "sub", "real.yaml"), "data", 0o600)
				if d := cmp.Diff([]string{"real.yaml"}, files(t, filepath.Join(dir, "sub"))); d != "" {
					t.Errorf("files in sub (-want +got):\n%s", d)
				}
			},
		},
		{
			name: "a dangling link gets its target created",
			setup: func(t *testing.T, dir string) string {
				return symlink(t, "later.yaml", filepath.Join(dir, "link.yaml"))
			},
			check: func(t *testing.T, dir string) {
				wantLink(t, filepath.Join(dir, "link.yaml"), "later.yaml")
				wantFile(t, filepath.Join(dir, "later.yaml"), "data", 0o600)
			},
		},
		{
			name: "a loop of links is an error",
			setup: func(t *testing.T, dir string) string {
				symlink(t, "b", filepath.Join(dir, "a"))
				return symlink(t, "a", filepath.Join(dir, "b"))
			},
			wantErr: "too many levels of symbolic links",
		},
		{
			name:    "a missing directory is named, not a temporary file",
			setup:   func(t *testing.T, dir string) string { return filepath.Join(dir, "missing", "x.yaml") },
			wantErr: "directory {dir}/missing does not exist",
		},
		{
			name: "a directory is refused and left alone",
			setup: func(t *testing.T, dir string) string {
				p := filepath.Join(dir, "adir")
				if err := os.MkdirAll(filepath.Join(p, "x"), 0o755); err != nil {
					t.Fatal(err)
				}
				return p
			},
			wantErr: "is a directory",
			check: func(t *testing.T, dir string) {
				if d := cmp.Diff([]string{"x"}, files(t, filepath.Join(dir, "adir"))); d != "" {
					t.Errorf("directory changed (-want +got):\n%s", d)
				}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			path := tt.setup(t, dir)
			before := files(t, dir)
			err := WriteFile(path, []byte("data"), 0o600)
			want := strings.ReplaceAll(tt.wantErr, "{dir}", dir)
			switch {
			case want == "" && err != nil:
				t.Fatalf("WriteFile: %v", err)
			case want != "" && (err == nil || err.Error() != want):
				t.Fatalf("WriteFile: error %v, want %q", err, want)
			}
			if err != nil && strings.Contains(err.Error(), ".tmp-") {
				t.Errorf("the error names a temporary file: %v", err)
			}
			after := files(t, dir)
			if err != nil {
				if d := cmp.Diff(before, after); d != "" {
					t.Errorf("a failed write changed the directory (-before +after):\n%s", d)
				}
			}
			for _, name := range after {
				if strings.Contains(name, ".tmp-") {
					t.Errorf("temporary file %s left behind", name)
				}
			}
			if tt.check != nil {
				tt.check(t, dir)
			}
		})
	}
}

func mustWrite(t *testing.T, path, content string, perm os.FileMode) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), perm); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, perm); err != nil { // whatever the umask
		t.Fatal(err)
	}
}

func symlink(t *testing.T, dest, link string) string {
	t.Helper()
	if err := os.Symlink(dest, link); err != nil {
		t.Skipf("no symbolic links here: %v", err)
	}
	return link
}

func wantFile(t *testing.T, path, content string, perm os.FileMode) {
	t.Helper()
	fi, err := os.Lstat(path)
	if err != nil {
		t.Fatal(err)
	}
	if !fi.Mode().IsRegular() {
		t.Fatalf("%s is not a regular file: %v", path, fi.Mode())
	}
	if b, _ := os.ReadFile(path); string(b) != content {
		t.Errorf("%s holds %q, want %q", path, b, content)
	}
	if fi.Mode().Perm() != perm {
		t.Errorf("%s has mode %v, want %v", path, fi.Mode().Perm(), perm)
	}
}

func wantLink(t *testing.T, link, dest string) {
	t.Helper()
	got, err := os.Readlink(link)
	if err != nil || got != dest {
		t.Errorf("%s: link to %q (%v), want a link to %q", link, got, err, dest)
	}
}

// TestWriteFileErrorsKeepTheirCause: callers can still tell a full disk or
// a missing directory apart.
func TestWriteFileErrorsKeepTheirCause(t *testing.T) {
	err := WriteFile(filepath.Join(t.TempDir(), "a", "b"), nil, 0o600)
	if err == nil {
		t.Fatal("writing into a missing directory succeeded")
	}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		t.Errorf("error %v carries a path", err)
	}
}

func TestCheckWritable(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	mustWrite(t, file, "x", 0o600)
	if err := os.Symlink(dir, filepath.Join(dir, "todir")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(dir, "gone", "x"), filepath.Join(dir, "dangling")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(dir, "new"), filepath.Join(dir, "tonew")); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct{ path, want string }{
		{file, ""},
		{filepath.Join(dir, "new.html"), ""},
		{filepath.Join(dir, "tonew"), ""},
		{"/dev/null", ""},
		{dir, "is a directory"},
		{filepath.Join(dir, "todir"), "is a directory"},
		{filepath.Join(dir, "missing", "x.html"), "directory " + filepath.Join(dir, "missing") + " does not exist"},
		{filepath.Join(dir, "dangling"), "directory " + filepath.Join(dir, "gone") + " does not exist"},
		{filepath.Join(file, "x.html"), file + " is not a directory"},
	} {
		err := CheckWritable(tt.path)
		got := ""
		if err != nil {
			got = err.Error()
		}
		if got != tt.want {
			t.Errorf("CheckWritable(%s) = %q, want %q", tt.path, got, tt.want)
		}
	}
	if diff := cmp.Diff([]string{"dangling", "file", "todir", "tonew"}, files(t, dir)); diff != "" {
		t.Errorf("it created or removed files (-want +got):\n%s", diff)
	}
}
