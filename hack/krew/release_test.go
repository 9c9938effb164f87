package main

import (
	"bytes"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"text/template"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/yaml"
)

// repo is the repository root, relative to this package.
const repo = "../.."

// goreleaser is the part of .goreleaser.yaml (schema version 2) the release
// depends on. Decoding is strict, so a misspelt key fails the test here
// rather than being ignored by goreleaser at release time.
type goreleaser struct {
	Version     int    `json:"version"`
	ProjectName string `json:"project_name"`
	Before      struct {
		Hooks []string `json:"hooks"`
	} `json:"before"`
	Builds []struct {
		ID           string   `json:"id"`
		Main         string   `json:"main"`
		Binary       string   `json:"binary"`
		Env          []string `json:"env"`
		Flags        []string `json:"flags"`
		Ldflags      []string `json:"ldflags"`
		ModTimestamp string   `json:"mod_timestamp"`
		Goos         []string `json:"goos"`
		Goarch       []string `json:"goarch"`
	} `json:"builds"`
	Archives []struct {
		ID              string   `json:"id"`
		IDs             []string `json:"ids"`
		NameTemplate    string   `json:"name_template"`
		Formats         []string `json:"formats"`
		FormatOverrides []struct {
			Goos    string   `json:"goos"`
			Formats []string `json:"formats"`
		} `json:"format_overrides"`
		Files []string `json:"files"`
	} `json:"archives"`
	Checksum struct {
		NameTemplate string `json:"name_template"`
		Algorithm    string `json:"algorithm"`
	} `json:"checksum"`
	Snapshot struct {
		VersionTemplate string `json:"version_template"`
	} `json:"snapshot"`
	Changelog map[string]any `json:"changelog"`
	Release   struct {
		GitHub struct {
			Owner string `json:"owner"`
			Name  string `json:"name"`
		} `json:"github"`
		Footer string `json:"footer"`
	} `json:"release"`
}

// krewPlugin is a krew.googlecontainertools.github.com/v1alpha2 Plugin.
type krewPlugin struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Metadata   struct {
		Name string `json:"name"`
	} `json:"metadata"`
	Spec struct {
		Version          string         `json:"version"`
		Homepage         string         `json:"homepage"`
		ShortDescription string         `json:"shortDescription"`
		Description      string         `json:"description"`
		Caveats          string         `json:"caveats"`
		Platforms        []krewPlatform `json:"platforms"`
	} `json:"spec"`
}

type krewPlatform struct {
	Selector struct {
		MatchLabels map[string]string `json:"matchLabels"`
	} `json:"selector"`
	URI    string `json:"uri"`
	SHA256 string `json:"sha256"`
	Bin    string `json:"bin"`
	Files  []struct {
		From string `json:"from"`
		To   string `json:"to"`
	} `json:"files"`
}

func loadGoreleaser(t *testing.T) goreleaser {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(repo, ".goreleaser.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var g goreleaser
	if err := yaml.UnmarshalStrict(data, &g); err != nil {
		t.Fatalf(".goreleaser.yaml: %v", err)
	}
	return g
}

var platforms = []string{"darwin/amd64", "darwin/arm64", "linux/amd64", "linux/arm64", "windows/amd64", "windows/arm64"}

// archive is one release archive as goreleaser names it.
type archive struct {
	os, arch, name string // name with extension
	binary         string
	files          []string // besides the binary
}

// archives expands the goreleaser archive section for tag.
func archives(t *testing.T, g goreleaser, tag string) []archive {
	t.Helper()
	a := g.Archives[0]
	nt, err := template.New("name").Option("missingkey=error").Parse(a.NameTemplate)
	if err != nil {
		t.Fatalf("archives[0].name_template: %v", err)
	}
	var out []archive
	for _, p := range platforms {
		goos, goarch, _ := strings.Cut(p, "/")
		var name bytes.Buffer
		data := map[string]string{"ProjectName": g.ProjectName, "Tag": tag, "Version": strings.TrimPrefix(tag, "v"), "Os": goos, "Arch": goarch}
		if err := nt.Execute(&name, data); err != nil {
			t.Fatalf("archives[0].name_template: %v", err)
		}
		format := a.Formats[0]
		for _, o := range a.FormatOverrides {
			if o.Goos == goos {
				format = o.Formats[0]
			}
		}
		bin := g.Builds[0].Binary
		if goos == "windows" {
			bin += ".exe"
		}
		out = append(out, archive{os: goos, arch: goarch, name: name.String() + "." + format, binary: bin, files: a.Files})
	}
	return out
}

func TestGoreleaserConfig(t *testing.T) {
	g := loadGoreleaser(t)
	if g.Version != 2 {
		t.Errorf("version = %d, want 2 (goreleaser v2 schema)", g.Version)
	}
	if g.ProjectName != "kubectl-sched" {
		t.Errorf("project_name = %q", g.ProjectName)
	}
	if len(g.Builds) != 1 {
		t.Fatalf("%d builds, want 1", len(g.Builds))
	}
	b := g.Builds[0]
	if b.Binary != "kubectl-sched" {
		t.Errorf("builds[0].binary = %q, want kubectl-sched (kubectl finds plugins by this name)", b.Binary)
	}
	if st, err := os.Stat(filepath.Join(repo, b.Main)); err != nil || !st.IsDir() {
		t.Errorf("builds[0].main %q is not a package directory: %v", b.Main, err)
	}
	if !contains(b.Env, "CGO_ENABLED=0") {
		t.Errorf("builds[0].env = %v, want CGO_ENABLED=0 (static binaries)", b.Env)
	}
	var got []string
	for _, goos := range b.Goos {
		for _, goarch := range b.Goarch {
			got = append(got, goos+"/"+goarch)
		}
	}
	sort.Strings(got)
	if d := cmp.Diff(platforms, got); d != "" {
		t.Errorf("build platforms (-want +got):\n%s", d)
	}

	// Every -X names a variable of internal/version, and they are the
	// Makefile's.
	vars := versionVars(t)
	xs := ldflagVars(strings.Join(b.Ldflags, " "))
	for _, x := range xs {
		if !vars[x] {
			t.Errorf("builds[0].ldflags sets %s, which is not a string variable of internal/version", x)
		}
	}
	mk, err := os.ReadFile(filepath.Join(repo, "Makefile"))
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(ldflagVars(string(mk)), xs); d != "" {
		t.Errorf("goreleaser's and the Makefile's -X variables differ (-Makefile +goreleaser):\n%s", d)
	}
	for _, v := range []string{"Version", "Commit", "Date"} {
		if !contains(xs, "github.com/kubectl-sched/kubectl-sched/internal/version."+v) {
			t.Errorf("builds[0].ldflags does not set version.%s", v)
		}
	}

	if len(g.Archives) != 1 {
		t.Fatalf("%d archives, want 1", len(g.Archives))
	}
	a := g.Archives[0]
	if !contains(a.IDs, b.ID) {
		t.Errorf("archives[0].ids = %v, want the build %q", a.IDs, b.ID)
	}
	for _, f := range []string{"LICENSE", "README.md"} {
		if !contains(a.Files, f) {
			t.Errorf("archives[0].files lacks %s", f)
		}
	}
	for _, f := range a.Files {
		m, err := filepath.Glob(filepath.Join(repo, f))
		if err != nil || len(m) == 0 {
			t.Errorf("archives[0].files: %s matches no file", f)
		}
	}
	for _, ar := range archives(t, g, "v1.2.3") {
		want := map[string]string{"windows": ".zip"}[ar.os]
		if want == "" {
			want = ".tar.gz"
		}
		if !strings.HasSuffix(ar.name, want) {
			t.Errorf("%s/%s archive %s, want a %s (krew reads tar.gz and zip)", ar.os, ar.arch, ar.name, want)
		}
	}
	if g.Checksum.NameTemplate != "checksums.txt" || g.Checksum.Algorithm != "sha256" {
		t.Errorf("checksum = %+v, want checksums.txt with sha256 (what hack/krew reads)", g.Checksum)
	}
	if g.Release.GitHub.Owner != "kubectl-sched" || g.Release.GitHub.Name != "kubectl-sched" {
		t.Errorf("release.github = %+v", g.Release.GitHub)
	}
}

// versionVars returns the package-level string variables of
// internal/version, by import path.
func versionVars(t *testing.T) map[string]bool {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), filepath.Join(repo, "internal/version/version.go"), nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	vars := map[string]bool{}
	for _, d := range f.Decls {
		gd, ok := d.(*ast.GenDecl)
		if !ok || gd.Tok != token.VAR {
			continue
		}
		for _, s := range gd.Specs {
			for _, n := range s.(*ast.ValueSpec).Names {
				vars["github.com/kubectl-sched/kubectl-sched/internal/version."+n.Name] = true
			}
		}
	}
	return vars
}

var xflag = regexp.MustCompile(`-X ([\w./-]+)=`)

func ldflagVars(s string) []string {
	var out []string
	for _, m := range xflag.FindAllStringSubmatch(s, -1) {
		out = append(out, m[1])
	}
	sort.Strings(out)
	return out
}

func contains(l []string, s string) bool {
	for _, x := range l {
		if x == s {
			return true
		}
	}
	return false
}

// TestKrewManifestMatchesTheArchives renders hack/krew/sched.yaml for a tag
// with the checksums of the archives goreleaser would write, and checks the
// manifest krew would read.
func TestKrewManifestMatchesTheArchives(t *testing.T) {
	g := loadGoreleaser(t)
	const tag = "v1.2.3"
	ars := archives(t, g, tag)
	sums := map[string]string{}
	var checksums strings.Builder
	for i, a := range ars {
		sum := fmt.Sprintf("%064d", i+1) // only digits: the manifest must still read them as strings
		sums[a.name] = sum
		fmt.Fprintf(&checksums, "%s  %s\n", sum, a.name)
	}
	parsed, err := ParseChecksums([]byte(checksums.String()))
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(sums, parsed); d != "" {
		t.Fatalf("ParseChecksums (-want +got):\n%s", d)
	}

	tmpl, err := os.ReadFile(filepath.Join(repo, "hack/krew/sched.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	out, err := Render(tmpl, tag, sums)
	if err != nil {
		t.Fatalf("rendering hack/krew/sched.yaml: %v", err)
	}
	var m krewPlugin
	if err := yaml.UnmarshalStrict(out, &m); err != nil {
		t.Fatalf("rendered manifest: %v\n%s", err, out)
	}
	if m.APIVersion != "krew.googlecontainertools.github.com/v1alpha2" || m.Kind != "Plugin" {
		t.Errorf("apiVersion/kind = %s/%s", m.APIVersion, m.Kind)
	}
	if m.Metadata.Name != "sched" {
		t.Errorf("metadata.name = %q, want sched (kubectl sched)", m.Metadata.Name)
	}
	if m.Spec.Version != tag {
		t.Errorf("spec.version = %q, want %q", m.Spec.Version, tag)
	}
	if m.Spec.ShortDescription == "" || m.Spec.Description == "" || m.Spec.Homepage == "" {
		t.Error("spec.shortDescription, description and homepage are required by krew-index")
	}

	byPlatform := map[string]archive{}
	for _, a := range ars {
		byPlatform[a.os+"/"+a.arch] = a
	}
	var got []string
	for i, p := range m.Spec.Platforms {
		ml := p.Selector.MatchLabels
		key := ml["os"] + "/" + ml["arch"]
		got = append(got, key)
		a, ok := byPlatform[key]
		if !ok || len(ml) != 2 {
			t.Errorf("platforms[%d].selector %v is not one of the archives' platforms", i, ml)
			continue
		}
		wantURI := "https://github.com/kubectl-sched/kubectl-sched/releases/download/" + tag + "/" + a.name
		if p.URI != wantURI {
			t.Errorf("platforms[%d] (%s).uri = %s, want %s", i, key, p.URI, wantURI)
		}
		if p.SHA256 != sums[a.name] {
			t.Errorf("platforms[%d] (%s).sha256 = %s, want %s", i, key, p.SHA256, sums[a.name])
		}
		if p.Bin != a.binary {
			t.Errorf("platforms[%d] (%s).bin = %q, want %q", i, key, p.Bin, a.binary)
		}
		inArchive := map[string]bool{a.binary: true}
		for _, f := range a.files {
			inArchive[f] = true
		}
		var from []string
		for _, f := range p.Files {
			from = append(from, f.From)
			if !inArchive[f.From] {
				t.Errorf("platforms[%d] (%s).files: %s is not in the archive", i, key, f.From)
			}
		}
		if !contains(from, a.binary) || !contains(from, "LICENSE") {
			t.Errorf("platforms[%d] (%s).files = %v, want the binary and LICENSE", i, key, from)
		}
	}
	sort.Strings(got)
	if d := cmp.Diff(platforms, got); d != "" {
		t.Errorf("manifest platforms (-archives +manifest):\n%s", d)
	}
}

func TestRenderNeedsEveryChecksum(t *testing.T) {
	tmpl, err := os.ReadFile(filepath.Join(repo, "hack/krew/sched.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	_, err = Render(tmpl, "v1.2.3", map[string]string{})
	if err == nil || !strings.Contains(err.Error(), "no checksum for kubectl-sched_v1.2.3_linux_amd64.tar.gz") {
		t.Errorf("err = %v, want the missing archive named", err)
	}
	if _, err := ParseChecksums([]byte("not a checksum line\n")); err == nil {
		t.Error("ParseChecksums accepted a bad line")
	}
}

// TestGoInstallable checks what `go install
// github.com/kubectl-sched/kubectl-sched/cmd/kubectl-sched@latest` needs of
// the main go.mod: no replace or exclude directives (go install @version
// refuses them) and no Go newer than 1.26.
func TestGoInstallable(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(repo, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	inBlock := ""
	for n, line := range strings.Split(string(data), "\n") {
		f := strings.Fields(line)
		if len(f) == 0 || strings.HasPrefix(f[0], "//") {
			continue
		}
		if f[0] == ")" {
			inBlock = ""
			continue
		}
		word := f[0]
		if inBlock != "" {
			word = inBlock
		} else if len(f) > 1 && f[1] == "(" {
			inBlock = word
		}
		switch word {
		case "replace", "exclude":
			t.Errorf("go.mod:%d: %s directive: go install ...@latest refuses a module with one", n+1, word)
		case "go":
			if inBlock == "" {
				if v := f[1]; v != "1.26" && !strings.HasPrefix(v, "1.26.") && !older(v, "1.26") {
					t.Errorf("go.mod:%d: go %s, want at most 1.26", n+1, v)
				}
			}
		case "module":
			if f[1] != "github.com/kubectl-sched/kubectl-sched" {
				t.Errorf("go.mod:%d: module %s", n+1, f[1])
			}
		}
	}
}

// older reports whether Go version a (1.N or 1.N.M) is below b (1.N).
func older(a, b string) bool {
	var am, bm int
	fmt.Sscanf(strings.TrimPrefix(a, "1."), "%d", &am)
	fmt.Sscanf(strings.TrimPrefix(b, "1."), "%d", &bm)
	return am < bm
}
