// The states and events of BenchmarkCost as files, for the reference
// client's script (benchmarks/reference/delta.mjs).

package aguistate

import (
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/aguistate/aguistate/internal/jsonv"
	"github.com/stretchr/testify/require"
)

var costData = flag.String("cost-data", "", "write the states and events of BenchmarkCost to this directory, one ROW-SIZE.json each")

// TestWriteCostData writes, with -cost-data DIR, each case of
// BenchmarkCost as DIR/ROW-SIZE.json: {"name": "ROW/SIZE", "state": the
// state, "events": the STATE_DELTA events applied in turn}, so that the
// reference client's figures are of the same states and deltas.
func TestWriteCostData(t *testing.T) {
	if *costData == "" {
		t.Skip("no -cost-data directory")
	}
	require.NoError(t, os.MkdirAll(*costData, 0o755))
	for _, cc := range costCases {
		for _, sz := range costSizes {
			text := cc.state(sz.size)
			st, err := jsonv.Parse([]byte(text), 0)
			require.NoError(t, err)
			var events []json.RawMessage
			for _, d := range cc.events(st) {
				events = append(events, json.RawMessage(`{"type":"STATE_DELTA","delta":`+d+`}`))
			}
			out, err := json.Marshal(struct {
				Name   string            `json:"name"`
				State  json.RawMessage   `json:"state"`
				Events []json.RawMessage `json:"events"`
			}{cc.name + "/" + sz.name, json.RawMessage(text), events})
			require.NoError(t, err)
			require.NoError(t, os.WriteFile(filepath.Join(*costData, cc.name+"-"+sz.name+".json"), out, 0o644))
		}
	}
}
