// Package oracle runs the reference client, @ag-ui/client 1.0.0, over
// cases for tests: the shared oracle's apply.mjs, which the environment
// variable AGUISTATE_ORACLE names (.ci/run sets it). Tests that need it
// skip without it, and fail instead when the CI environment variable is
// set.
package oracle

import (
	"bytes"
	"context"
	_ "embed"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// Case is one run of the reference client: it starts from State and
// Messages (default {} and []) and applies Events.
type Case struct {
	State    json.RawMessage   `json:"state,omitempty"`
	Messages json.RawMessage   `json:"messages,omitempty"`
	Events   []json.RawMessage `json:"events"`
}

// Result is what the reference client holds after a case: its state and
// messages, one warning per console.warn call, and the error that stopped
// the events, if one did.
type Result struct {
	State    json.RawMessage `json:"state"`
	Messages json.RawMessage `json:"messages"`
	Warnings []string        `json:"warnings"`
	Error    string          `json:"error"`
}

//go:embed batch.mjs
var batch []byte

// Run runs every case through the reference client in one Node.js process
// and returns its results, in order. With pipeline, the events first go
// through the client's event checks and chunk expansion, as in a real run
// (apply.mjs --pipeline). It skips tb when AGUISTATE_ORACLE is unset, and
// fails it then when CI is set.
func Run(tb testing.TB, pipeline bool, cases []Case) []Result {
	tb.Helper()
	return run(tb, mode{Pipeline: pipeline}, cases)
}

// RunAgent is Run through the client's AbstractAgent.runAgent itself
// (apply.mjs --runagent): its whole middleware chain, the compatibility
// boundary for producers older than 1.0 included, then the pipeline. The
// case's events are the run's, from its RUN_STARTED.
func RunAgent(tb testing.TB, cases []Case) []Result {
	tb.Helper()
	return run(tb, mode{RunAgent: true}, cases)
}

// mode is how batch.mjs runs a case.
type mode struct {
	Pipeline bool `json:"pipeline"`
	RunAgent bool `json:"runagent"`
}

func run(tb testing.TB, m mode, cases []Case) []Result {
	tb.Helper()
	apply := os.Getenv("AGUISTATE_ORACLE")
	if apply == "" {
		if os.Getenv("CI") != "" {
			tb.Fatal("AGUISTATE_ORACLE is required in CI: the path of the shared oracle's apply.mjs, installed (see .ci/run)")
		}
		tb.Skip("AGUISTATE_ORACLE is unset: set it to the path of an installed copy of ../shared/oracle/apply.mjs to compare with the reference client")
	}
	script := filepath.Join(tb.TempDir(), "batch.mjs")
	if err := os.WriteFile(script, batch, 0o600); err != nil {
		tb.Fatal(err)
	}
	type item struct {
		Case Case `json:"case"`
		mode
	}
	items := make([]item, len(cases))
	for i, c := range cases {
		items[i] = item{c, m}
	}
	in, err := json.Marshal(items)
	if err != nil {
		tb.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "node", script, apply)
	cmd.Stdin = bytes.NewReader(in)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		tb.Fatalf("the oracle failed: %v\n%s", err, stderr.Bytes())
	}
	var results []Result
	if err := json.Unmarshal(out, &results); err != nil || len(results) != len(cases) {
		tb.Fatalf("the oracle's output is not %d results: %v\n%s", len(cases), err, out)
	}
	return results
}
