package fgd

import (
	"encoding/xml"
	"io"
	"math"
	"strings"
	"testing"
)

func TestMeanSD(t *testing.T) {
	for _, tc := range []struct {
		name     string
		vs       []float64
		mean, sd float64
	}{
		{"none", nil, math.NaN(), 0},
		{"one", []float64{3}, 3, 0},
		{"two", []float64{1, 3}, 2, math.Sqrt2},
		// seaborn's errorbar="sd" is the sample deviation (ddof 1).
		{"four", []float64{2, 4, 4, 6}, 4, math.Sqrt(8.0 / 3)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, sd := MeanSD(tc.vs)
			if !(m == tc.mean || math.IsNaN(m) && math.IsNaN(tc.mean)) || math.Abs(sd-tc.sd) > 1e-12 {
				t.Errorf("MeanSD(%v) = %v, %v; want %v, %v", tc.vs, m, sd, tc.mean, tc.sd)
			}
		})
	}
}

// The artifact's seeds at 100% arrived average to its mean curve there.
func TestExpectedAtAgreesWithTheMeanCurves(t *testing.T) {
	for _, fig := range BarFigures {
		for _, wl := range fig.Workloads {
			seeds, err := ExpectedAt(wl, 100)
			if err != nil {
				t.Fatal(err)
			}
			pc, err := LoadExpected(wl)
			if err != nil {
				t.Fatal(err)
			}
			for _, pol := range BarPolicies {
				if len(seeds[pol]) != 10 {
					t.Errorf("%s %s: %d seeds, want the artifact's 10", wl, pol, len(seeds[pol]))
				}
				if m, _ := MeanSD(seeds[pol]); math.Abs(m-pc.Alloc[pol][100]) > 1e-9 {
					t.Errorf("%s %s: seeds' mean %v, the mean curve %v", wl, pol, m, pc.Alloc[pol][100])
				}
			}
		}
	}
	if _, err := ExpectedAt("openb_pod_list_nonesuch", 100); err == nil {
		t.Error("ExpectedAt of an unknown workload: no error")
	}
}

// A chart has a bar per workload, policy and side with a value, a hatched
// overlay per artifact bar and a whisker per bar whose seeds differ; a
// missing value leaves its bar out.
func TestWriteBarsSVG(t *testing.T) {
	fig := BarFigures[1]
	data := map[string]map[string]Unallocated{}
	for _, wl := range fig.Workloads[:2] {
		data[wl] = map[string]Unallocated{}
		for _, pol := range BarPolicies {
			data[wl][pol] = Unallocated{Ours: []float64{10, 12}, Paper: []float64{11, 11}}
		}
	}
	data[fig.Workloads[0]]["FGD"] = Unallocated{Ours: []float64{5}}
	var b strings.Builder
	if err := WriteBarsSVG(&b, fig, data); err != nil {
		t.Fatal(err)
	}
	rects, lines := 0, 0
	dec := xml.NewDecoder(strings.NewReader(b.String()))
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("not well-formed XML: %v", err)
		}
		if se, ok := tok.(xml.StartElement); ok {
			switch se.Name.Local {
			case "rect":
				rects++
			case "line":
				lines++
			}
		}
	}
	// Bars: 2 workloads x 6 policies x 2 sides, less FGD's artifact bar
	// in the first = 23, plus 11 hatch overlays; frame and background 2,
	// the hatch pattern's 1, legend 6 + 3.
	if want := 23 + 11 + 2 + 1 + 9; rects != want {
		t.Errorf("%d rects, want %d", rects, want)
	}
	// Whiskers: our 11 bars of two different seeds (not FGD's single
	// one); the artifact's seeds are equal. Grid lines: 5 (0..20 by 5),
	// and the pattern's stroke.
	if want := 11 + 5 + 1; lines != want {
		t.Errorf("%d lines, want %d", lines, want)
	}
}
