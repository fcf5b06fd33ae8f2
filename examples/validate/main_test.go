// Tests of the validate command.

package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// writeFile writes text to a file in a fresh temporary folder and returns
// its path.
func writeFile(t *testing.T, name, text string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	require.NoError(t, os.WriteFile(path, []byte(text), 0o600))
	return path
}

// lines splits output into lines, dropping the final newline.
func lines(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(strings.TrimSuffix(s, "\n"), "\n")
}

const (
	bundledInput  = "testdata/pasta-e-ceci.input.json"
	bundledStream = "testdata/pasta-e-ceci.sse"
)

// TestRun runs the program on the bundled stream and on small streams that
// exercise each way a state is rendered or rejected.
func TestRun(t *testing.T) {
	t.Parallel()
	// A recipe whose prep time passes the schema's "integer" (1e1 is 10)
	// and decodes into an int.
	exponentStream := writeFile(t, "exponent.json", `[
		{"type":"STATE_SNAPSHOT","snapshot":{"recipe":{"title":"Toast","cuisine":"","ingredients":["bread"],"steps":["Toast it."],"prep_time_minutes":1e1,"cook_time_minutes":2,"skill_level":""}}}
	]`)
	strictTitle := writeFile(t, "title.schema.json", `{"properties":{"recipe":{"properties":{"title":{"minLength":20}}}}}`)
	cases := []struct {
		name, reason string
		args         []string
		status       int
		stdout       []string
		stderr       []string
	}{
		{
			name:   "bundled stream",
			reason: "the snapshot and the first delta render, -5 and a string are rejected, a failed patch is a warning, the fix renders again",
			args:   []string{"-input", bundledInput, bundledStream},
			stdout: []string{
				"render: Pasta e Ceci (4 ingredients, 3 steps)",
				"render: Pasta e Ceci (5 ingredients, 3 steps)",
				"render: Pasta e Ceci (5 ingredients, 4 steps)",
				`final: Pasta e Ceci, Italian, 5 ingredients, 4 steps, prep 15 min, cook 25 min, skill "beginner"`,
			},
			stderr: []string{
				"rejected: event 4: /recipe/prep_time_minutes: minimum: got -5, want 0",
				"rejected: event 8: /recipe/prep_time_minutes: got string, want integer",
				`warning: aguistate: event 9 (STATE_DELTA): operation 0 (remove "/recipe/garnish"): patch failed to apply: no member "garnish" (at "/recipe/garnish")`,
			},
		},
		{
			name:   "an integer spelled with an exponent",
			reason: "the schema and the decode agree: 1e1 is the integer 10 (Value.Decode's number rule)",
			args:   []string{exponentStream},
			stdout: []string{
				"render: Toast (1 ingredients, 1 steps)",
				`final: Toast, , 1 ingredients, 1 steps, prep 10 min, cook 2 min, skill ""`,
			},
		},
		{
			name:   "schema flag",
			reason: "-schema replaces the bundled schema; nothing passes a 20-character title minimum",
			args:   []string{"-schema", strictTitle, "-input", bundledInput, bundledStream},
			status: 1,
			stderr: []string{
				"rejected: event 2: /recipe/title: minLength: got 12, want 20",
				"rejected: event 3: /recipe/title: minLength: got 12, want 20",
				"rejected: event 4: /recipe/title: minLength: got 12, want 20",
				"rejected: event 8: /recipe/title: minLength: got 12, want 20",
				`warning: aguistate: event 9 (STATE_DELTA): operation 0 (remove "/recipe/garnish"): patch failed to apply: no member "garnish" (at "/recipe/garnish")`,
				"rejected: event 10: /recipe/title: minLength: got 12, want 20",
				"rejected: final state: /recipe/title: minLength: got 12, want 20",
			},
		},
		{
			name:   "starting state only",
			reason: "an empty stream changes nothing, so only the final check runs, on the run input's state",
			args:   []string{"-input", bundledInput, writeFile(t, "empty.jsonl", "")},
			stdout: []string{`final: , , 0 ingredients, 0 steps, prep 0 min, cook 0 min, skill ""`},
		},
		{
			name:   "no recipe",
			reason: "a new Consumer's state {} lacks the required recipe",
			args:   []string{writeFile(t, "empty.jsonl", "")},
			status: 1,
			stderr: []string{"rejected: final state: the whole state: missing property 'recipe'"},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var stdout, stderr bytes.Buffer
			status := run(tc.args, &stdout, &stderr)
			assert.Equal(t, tc.status, status, tc.reason)
			assert.Equal(t, tc.stdout, lines(stdout.String()), tc.reason)
			assert.Equal(t, tc.stderr, lines(stderr.String()), tc.reason)
		})
	}
}

// TestRunUsage checks the exit status 2 cases.
func TestRunUsage(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, reason string
		args         []string
		stderr       string // a line stderr must start with
	}{
		{name: "no stream", reason: "STREAM is required", stderr: "usage: validate"},
		{name: "two streams", reason: "one stream at a time", args: []string{bundledStream, bundledStream}, stderr: "usage: validate"},
		{name: "unknown flag", reason: "flags are checked", args: []string{"-nope", bundledStream}, stderr: "flag provided but not defined"},
		{name: "missing stream", reason: "an unreadable stream is a usage error", args: []string{"testdata/missing.sse"}, stderr: "error: open testdata/missing.sse"},
		{name: "missing input", reason: "an unreadable run input is a usage error", args: []string{"-input", "testdata/missing.json", bundledStream}, stderr: "error: open testdata/missing.json"},
		{name: "missing schema", reason: "an unreadable schema is a usage error", args: []string{"-schema", "testdata/missing.json", bundledStream}, stderr: "error: open testdata/missing.json"},
		{
			name: "schema not JSON", reason: "a schema must be JSON",
			args: []string{"-schema", writeFile(t, "bad.json", "{"), bundledStream}, stderr: "error: schema ",
		},
		{
			name: "schema does not compile", reason: "a schema must be valid against its metaschema",
			args: []string{"-schema", writeFile(t, "bad.json", `{"type":7}`), bundledStream}, stderr: "error: ",
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var stdout, stderr bytes.Buffer
			assert.Equal(t, 2, run(tc.args, &stdout, &stderr), tc.reason)
			assert.Empty(t, stdout.String(), tc.reason)
			assert.True(t, strings.HasPrefix(stderr.String(), tc.stderr), "%s: stderr %q", tc.reason, stderr.String())
		})
	}
}

// TestRunSharedStream runs the program on the recorded .NET Step05 state
// management stream, whose recipe state the bundled schema describes. It
// skips when ../shared is absent and fails then when CI is set.
func TestRunSharedStream(t *testing.T) {
	t.Parallel()
	dir := filepath.Join("..", "..", "..", "shared", "streams")
	if _, err := os.Stat(dir); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("%s is required in CI: %v", dir, err)
		}
		t.Skipf("%s not found (clone the repository next to shared/ to run this test): %v", dir, err)
	}
	var stdout, stderr bytes.Buffer
	status := run([]string{
		"-input", filepath.Join(dir, "dotnet-step05-state-management.input.json"),
		filepath.Join(dir, "dotnet-step05-state-management.jsonl"),
	}, &stdout, &stderr)
	assert.Equal(t, 0, status)
	assert.Empty(t, stderr.String())
	assert.Equal(t, []string{
		"render: Spaghetti alla Carbonara (Classic Italian Carbonara) (8 ingredients, 9 steps)",
		`final: Spaghetti alla Carbonara (Classic Italian Carbonara), Italian, 8 ingredients, 9 steps, prep 10 min, cook 15 min, skill "intermediate"`,
	}, lines(stdout.String()))
}
