package docs

import (
	"bytes"
	"context"
	"image"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubectl-sched/kubectl-sched/app"
)

// screenshot is the picture of the HTML report docs/replay.md shows.
const screenshot = "images/replay-report.png"

// chromium finds Debian's Chromium (hack/install-chromium.sh installs it;
// make test-browser does, as root). Without it the test is skipped, saying
// so, unless KUBECTL_SCHED_BROWSER=1 (make test-browser sets it once
// chromium is installed) makes that a failure.
func chromium(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("KUBECTL_SCHED_BROWSER") != "" {
		t.Fatal("chromium is not installed: run hack/install-chromium.sh")
	}
	t.Skip("skipping the HTML report check in a browser: no chromium, chromium-browser or google-chrome on PATH (as root, hack/install-chromium.sh installs Debian's)")
	return ""
}

// headless runs Chromium on a page with the flags this machine needs (no
// sandbox as root, no network of its own) and returns what it printed.
func headless(t *testing.T, bin string, args ...string) []byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	base := []string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync", "--disable-dev-shm-usage",
		"--user-data-dir=" + t.TempDir(), "--hide-scrollbars"}
	cmd := exec.CommandContext(ctx, bin, append(base, args...)...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s %s: %v\n%s", bin, strings.Join(args, " "), err, lastLines(stderr.String(), 20))
	}
	return stdout.Bytes()
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

var (
	drawnAttr = regexp.MustCompile(`<body[^>]*data-charts-drawn="(\d+)"`)
	plotSVG   = regexp.MustCompile(`(?s)<svg id="(chart-[a-z]+)"[^>]*data-series="(\d+)"[^>]*>(.*?)</svg>`)
	seriesD   = regexp.MustCompile(`<path d="M([^"]*)"[^>]*class="series"`)
)

// TestGoldenReplayReportInChromium opens the HTML report of the shipped
// example replay in headless Chromium and checks, in the DOM the page's
// script built, that every chart was drawn with its curves; then it takes
// the screenshot docs/replay.md shows (rewritten with -update).
func TestGoldenReplayReportInChromium(t *testing.T) {
	bin := chromium(t)
	dir := t.TempDir()
	page := filepath.Join(dir, "report.html")
	var out, errOut bytes.Buffer
	cmd := app.NewCommand(genericiooptions.IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut})
	cmd.SetArgs([]string{"replay", "-f", "../examples/cluster.yaml", "-f", "../examples/trace.yaml", "--html", page})
	if err := cmd.Execute(); err != nil {
		t.Fatalf("replay: %v: %s", err, errOut.String())
	}
	if b, _ := os.ReadFile(page); bytes.Contains(b, []byte("http://")) && !bytes.Contains(b, []byte("http://www.w3.org/2000/svg")) {
		t.Error("the report refers to the network")
	}
	url := "file://" + page

	dom := string(headless(t, bin, "--dump-dom", url))
	m := drawnAttr.FindStringSubmatch(dom)
	if m == nil || m[1] != "6" {
		t.Fatalf("body data-charts-drawn = %v, want 6 (did the script run?)\n%s", m, lastLines(dom, 5))
	}
	charts := plotSVG.FindAllStringSubmatch(dom, -1)
	if len(charts) != 6 {
		t.Fatalf("found %d drawn charts in the DOM, want 6", len(charts))
	}
	for _, c := range charts {
		want, _ := strconv.Atoi(c[2])
		paths := seriesD.FindAllStringSubmatch(c[3], -1)
		if want == 0 || len(paths) != want {
			t.Errorf("%s: %d curves drawn, want %d (> 0)", c[1], len(paths), want)
			continue
		}
		for _, p := range paths {
			if pts := strings.Count(p[1], "L") + 1; pts < 100 {
				t.Errorf("%s: a curve of %d points, want one per slice of time", c[1], pts)
			}
		}
	}

	shot := filepath.Join(dir, "shot.png")
	headless(t, bin, "--window-size=1200,1500", "--screenshot="+shot, url)
	b, err := os.ReadFile(shot)
	if err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	if sz := img.Bounds().Size(); sz != (image.Point{X: 1200, Y: 1500}) {
		t.Errorf("screenshot is %v, want 1200x1500", sz)
	}
	if n := colours(img); n < 8 {
		t.Errorf("the screenshot has %d colours: nothing was drawn", n)
	}
	if *update {
		if err := os.WriteFile(screenshot, b, 0o644); err != nil {
			t.Fatal(err)
		}
	} else if _, err := os.Stat(screenshot); err != nil {
		t.Errorf("docs/%s is missing: run make docs", screenshot)
	}
}

// colours counts the distinct colours of a sample of pixels.
func colours(img image.Image) int {
	seen := map[[4]uint32]bool{}
	r := img.Bounds()
	for y := r.Min.Y; y < r.Max.Y; y += 7 {
		for x := r.Min.X; x < r.Max.X; x += 7 {
			c1, c2, c3, c4 := img.At(x, y).RGBA()
			seen[[4]uint32{c1, c2, c3, c4}] = true
		}
	}
	return len(seen)
}
