package version

import (
	"runtime/debug"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestFromBuildInfo(t *testing.T) {
	tests := []struct {
		name    string
		ldflags [3]string
		info    *debug.BuildInfo
		want    [3]string
	}{
		{"go install pkg@version records the module version", [3]string{"dev", "unknown", "unknown"},
			&debug.BuildInfo{Main: debug.Module{Version: "v0.3.1"}}, [3]string{"v0.3.1", "unknown", "unknown"}},
		{"go build in a checkout records the revision and time", [3]string{"dev", "unknown", "unknown"},
			&debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: []debug.BuildSetting{
				{Key: "vcs.revision", Value: "1a2b3c4d5e6f7a8b9c0d"}, {Key: "vcs.time", Value: "2026-12-01T10:00:00Z"}}},
			[3]string{"dev", "1a2b3c4d5e6f", "2026-12-01T10:00:00Z"}},
		{"ldflags win", [3]string{"v1.0.0", "abc", "today"},
			&debug.BuildInfo{Main: debug.Module{Version: "v0.3.1"}, Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: "fff"}}},
			[3]string{"v1.0.0", "abc", "today"}},
		{"no build info", [3]string{"dev", "unknown", "unknown"}, nil, [3]string{"dev", "unknown", "unknown"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			old := [3]string{Version, Commit, Date}
			defer func() { Version, Commit, Date = old[0], old[1], old[2] }()
			Version, Commit, Date = tt.ldflags[0], tt.ldflags[1], tt.ldflags[2]
			fromBuildInfo(func() (*debug.BuildInfo, bool) { return tt.info, tt.info != nil })
			if d := cmp.Diff(tt.want, [3]string{Version, Commit, Date}); d != "" {
				t.Errorf("(-want +got):\n%s", d)
			}
		})
	}
}
