package v1list

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

func TestFormat(t *testing.T) {
	tests := []struct {
		name, o, file, want, wantErr string
	}{
		{name: "the default is yaml", want: "yaml"},
		{name: "a .json file is json", file: "x.JSON", want: "json"},
		{name: "-o wins over the extension", o: "yaml", file: "x.json", want: "yaml"},
		{name: "an unknown format", o: "xml", wantErr: `-o: unknown format "xml", want yaml or json`},
		{name: "a file for -o points to -output-file", o: "out.json", wantErr: `-o: unknown format "out.json", want yaml or json (-o is the format; the file is -output-file out.json)`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Format(tt.o, tt.file)
			if tt.wantErr != "" {
				if err == nil || err.Error() != tt.wantErr {
					t.Errorf("error %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Errorf("Format(%q, %q) = %q, %v; want %q", tt.o, tt.file, got, err, tt.want)
			}
		})
	}
}

func TestWriteOutput(t *testing.T) {
	var stdout bytes.Buffer
	if err := WriteOutput("-", []byte("x"), &stdout); err != nil || stdout.String() != "x" {
		t.Errorf("stdout %q, %v", stdout.String(), err)
	}
	dir := t.TempDir()
	if err := os.Symlink("real.yaml", filepath.Join(dir, "link.yaml")); err != nil {
		t.Skip(err)
	}
	if err := WriteOutput(filepath.Join(dir, "link.yaml"), []byte("y"), &stdout); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "real.yaml")); err != nil || string(b) != "y" {
		t.Errorf("the link's target holds %q (%v), want y", b, err)
	}
}
