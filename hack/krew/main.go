// Command krew renders the krew manifest template hack/krew/sched.yaml for a
// release: the tag and, for each platform's archive, its download URI and
// SHA-256 from goreleaser's checksums.txt (`make krew-manifest TAG=vX.Y.Z`).
// The template language is krew-release-bot's ({{ .TagName }},
// {{ addURIAndSha "URL" .TagName }}), so that bot can read the same file.
package main

import (
	"bufio"
	"bytes"
	"flag"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strings"
	"text/template"
)

func main() {
	tag := flag.String("tag", "", "release tag, e.g. v0.1.0 (required)")
	tmpl := flag.String("template", "hack/krew/sched.yaml", "the manifest template")
	sums := flag.String("checksums", "dist/checksums.txt", "goreleaser's checksums file")
	out := flag.String("o", "dist/krew/sched.yaml", "where to write the manifest ('-' for stdout)")
	flag.Parse()
	if err := run(*tag, *tmpl, *sums, *out); err != nil {
		fmt.Fprintln(os.Stderr, "error:", err)
		os.Exit(1)
	}
}

func run(tag, tmplPath, sumsPath, out string) error {
	if tag == "" {
		return fmt.Errorf("-tag is required")
	}
	t, err := os.ReadFile(tmplPath)
	if err != nil {
		return err
	}
	s, err := os.ReadFile(sumsPath)
	if err != nil {
		return err
	}
	sums, err := ParseChecksums(s)
	if err != nil {
		return fmt.Errorf("%s: %w", sumsPath, err)
	}
	m, err := Render(t, tag, sums)
	if err != nil {
		return fmt.Errorf("%s: %w", tmplPath, err)
	}
	if out == "-" {
		_, err = os.Stdout.Write(m)
		return err
	}
	if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(out, m, 0o644); err != nil {
		return err
	}
	fmt.Fprintln(os.Stderr, "wrote", out)
	return nil
}

var sumLine = regexp.MustCompile(`^([0-9a-f]{64}) [ *]?(\S+)$`)

// ParseChecksums reads a sha256sum-style file (goreleaser's checksums.txt):
// archive name -> hex SHA-256.
func ParseChecksums(data []byte) (map[string]string, error) {
	sums := map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		m := sumLine.FindStringSubmatch(line)
		if m == nil {
			return nil, fmt.Errorf("line %d: not '<sha256>  <file>': %q", n, line)
		}
		sums[m[2]] = m[1]
	}
	return sums, sc.Err()
}

// Render executes the manifest template for tag. addURIAndSha renders its
// URL (itself a template over the same data), and writes the uri line and,
// indented as krew-release-bot does, the sha256 line of the archive the URL
// names; an archive missing from sums is an error.
func Render(tmpl []byte, tag string, sums map[string]string) ([]byte, error) {
	data := struct{ TagName string }{tag}
	funcs := template.FuncMap{
		"addURIAndSha": func(url, tag string) (string, error) {
			ut, err := template.New("url").Parse(url)
			if err != nil {
				return "", err
			}
			var u bytes.Buffer
			if err := ut.Execute(&u, struct{ TagName string }{tag}); err != nil {
				return "", err
			}
			name := path.Base(u.String())
			sum, ok := sums[name]
			if !ok {
				return "", fmt.Errorf("no checksum for %s", name)
			}
			// Quoted: a digest of only digits would read as a number.
			return fmt.Sprintf("uri: %s\n    sha256: %q", u.String(), sum), nil
		},
	}
	t, err := template.New("manifest").Funcs(funcs).Option("missingkey=error").Parse(string(tmpl))
	if err != nil {
		return nil, err
	}
	var out bytes.Buffer
	if err := t.Execute(&out, data); err != nil {
		return nil, err
	}
	return out.Bytes(), nil
}
