package report

import (
	"encoding/json"
	"testing"
)

// A node decoded from explain's JSON reads its scores and detail as fields
// even when the JSON has none of them (the embedded pointers are not nil),
// and keeps those it has.
func TestDecodedNodesReadTheirFields(t *testing.T) {
	cases := []struct {
		name, json string
		gaps       int
		total      int64
		hasTotal   bool
	}{
		{"rejected, not detailed", `{"node":"a","feasible":false,"failures":[{"plugin":"NodeResourcesFit","reason":"Insufficient cpu","code":"Unschedulable","first":true}]}`, 0, 0, false},
		{"rejected, detailed", `{"node":"b","feasible":false,"gaps":[{"plugin":"NodeResourcesFit","gap":"1 more cpu"}],"free":{"cpu":500}}`, 1, 0, false},
		{"feasible", `{"node":"c","feasible":true,"scores":{"ImageLocality":3},"total":3,"rank":1}`, 0, 3, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var e Explanation
			if err := json.Unmarshal([]byte(`{"nodes":[`+c.json+`]}`), &e); err != nil {
				t.Fatal(err)
			}
			n := e.Nodes[0]
			if n.NodeScores == nil || n.NodeDetail == nil {
				t.Fatalf("decoded node has nil scores %v or detail %v", n.NodeScores == nil, n.NodeDetail == nil)
			}
			if len(n.Gaps) != c.gaps || (n.Total != nil) != c.hasTotal || (c.hasTotal && *n.Total != c.total) {
				t.Errorf("gaps %d total %v; want %d %v", len(n.Gaps), n.Total, c.gaps, c.total)
			}
			b, err := json.Marshal(&n)
			if err != nil {
				t.Fatal(err)
			}
			var again ExplainNode
			if err := json.Unmarshal(b, &again); err != nil || again.Node != n.Node || len(again.Gaps) != c.gaps {
				t.Errorf("round trip %s: %v %+v", b, err, again)
			}
		})
	}
}
