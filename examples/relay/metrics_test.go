// Tests of -metrics: a scrape after a few runs holds the relay's metrics, named for Prometheus, with their counts.

package main

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aguistate/aguistate/internal/agenttest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// scrape returns the samples of the Prometheus text exposition at url, by
// name with labels as written (`name{label="value"}`), and the type of
// each metric family.
func scrape(t *testing.T, url string) (samples map[string]float64, types map[string]string) {
	t.Helper()
	resp, err := http.Get(url)
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Contains(t, resp.Header.Get("Content-Type"), "text/plain")
	samples, types = make(map[string]float64), make(map[string]string)
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		line := sc.Text()
		if f := strings.Fields(line); len(f) == 4 && f[0] == "#" && f[1] == "TYPE" {
			types[f[2]] = f[3]
		}
		if line == "" || line[0] == '#' {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		require.Positive(t, i, "a sample: %q", line)
		v, err := strconv.ParseFloat(line[i+1:], 64)
		require.NoError(t, err, line)
		samples[line[:i]] = v
	}
	require.NoError(t, sc.Err())
	return samples, types
}

// postRun POSTs a run of thread id to the relay at base, and returns the
// number of events its stream carried.
func postRun(t *testing.T, base, id, run string) int {
	t.Helper()
	input := fmt.Sprintf(`{"threadId":%q,"runId":%q,"state":{},"messages":[],"tools":[],"context":[]}`, id, run)
	resp, err := http.Post(base+"/agent", "application/json", strings.NewReader(input))
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return bytes.Count(body, []byte("\ndata: ")) // each event is a data line after the retry field or an id
}

// TestMetrics runs three runs through a relay with -metrics, and a viewer
// who joins one thread by prelude: a scrape of /metrics, on its own
// listener, counts them under the aguistate_relay_ names, with the
// Prometheus suffixes of their units and types.
func TestMetrics(t *testing.T) {
	agent := agenttest.NewScript(t, script)
	base, stderr := startLogged(t, "-agent", agent.URL, "-metrics", "127.0.0.1:0")
	m := regexp.MustCompile(`relay: metrics at (http://127\.0\.0\.1:\d+/metrics)`).FindStringSubmatch(stderr.String())
	require.NotNil(t, m, "the line of the metrics' address; stderr:\n%s", stderr)
	metrics := m[1]

	events := 0
	var ids []string
	for i := range 3 {
		id := newThread(t)
		ids = append(ids, id)
		events += postRun(t, base, id, fmt.Sprintf("r%d", i))
	}
	resp, err := http.Get(base + "/threads/" + ids[0] + "/events")
	require.NoError(t, err)
	prelude, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, resp.StatusCode)

	var samples map[string]float64
	var types map[string]string
	require.Eventually(t, func() bool {
		samples, types = scrape(t, metrics)
		return samples["aguistate_relay_viewers"] == 0 && samples[`aguistate_relay_runs_ended_total{outcome="success"}`] == 3
	}, 10*time.Second, 20*time.Millisecond, "the runs have ended and the viewers left")
	want := map[string]float64{
		"aguistate_relay_runs_started_total":                             3,
		`aguistate_relay_runs_ended_total{outcome="success"}`:            3,
		"aguistate_relay_events_appended_total":                          float64(events),
		"aguistate_relay_viewers":                                        0,
		`aguistate_relay_join_first_event_seconds_count{kind="run"}`:     3,
		`aguistate_relay_join_first_event_seconds_count{kind="prelude"}`: 1,
		"aguistate_relay_prelude_size_bytes_count":                       1,
	}
	for name, v := range want {
		assert.Equal(t, v, samples[name], name)
	}
	assert.Positive(t, samples[`aguistate_relay_store_duration_seconds_count{operation="append"}`], "the store's appends")
	assert.Positive(t, samples["aguistate_relay_prelude_size_bytes_sum"], "the prelude's bytes")
	assert.LessOrEqual(t, samples["aguistate_relay_prelude_size_bytes_sum"], float64(len(prelude)), "the events' JSON text, without SSE's fields")
	assert.Equal(t, map[string]string{
		"aguistate_relay_runs_started_total":       "counter",
		"aguistate_relay_runs_ended_total":         "counter",
		"aguistate_relay_events_appended_total":    "counter",
		"aguistate_relay_viewers":                  "gauge",
		"aguistate_relay_join_first_event_seconds": "histogram",
		"aguistate_relay_prelude_size_bytes":       "histogram",
		"aguistate_relay_store_duration_seconds":   "histogram",
	}, relayTypes(types), "the families seen, with their types")
	for name := range samples {
		if !strings.HasPrefix(name, "target_info") {
			assert.True(t, strings.HasPrefix(name, "aguistate_relay_"), "%s: the relay's metrics alone", name)
			assert.NotContains(t, name, "otel_scope_", "no scope labels")
		}
	}
}

// relayTypes returns the types of the aguistate_relay_ families.
func relayTypes(types map[string]string) map[string]string {
	out := make(map[string]string)
	for name, typ := range types {
		if strings.HasPrefix(name, "aguistate_relay_") {
			out[name] = typ
		}
	}
	return out
}
