// Tests of the httpagent command against httptest agents.

package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// agent answers a run with a short SSE stream built from the input it got:
// the state it was sent under "sent", then the events of the row. It
// checks that each request carries the headers in want.
func agent(t *testing.T, status int, want http.Header, events ...string) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		for name := range want {
			assert.Equal(t, want[name], r.Header[name], name)
		}
		var in struct {
			ThreadID string          `json:"threadId"`
			RunID    string          `json:"runId"`
			State    json.RawMessage `json:"state"`
		}
		assert.NoError(t, json.NewDecoder(r.Body).Decode(&in))
		assert.NotEmpty(t, in.ThreadID, "a threadId is always sent")
		assert.NotEmpty(t, in.RunID, "a runId is always sent")
		if status != http.StatusOK {
			http.Error(w, "agent is down", status)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprintf(w, "data: {\"type\":\"STATE_SNAPSHOT\",\"snapshot\":{\"sent\":%s}}\n\n", in.State)
		for _, ev := range events {
			fmt.Fprintf(w, "data: %s\n\n", ev)
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

func TestRun(t *testing.T) {
	input := filepath.Join(t.TempDir(), "input.json")
	require.NoError(t, os.WriteFile(input, []byte(`{"threadId":"t1","runId":"r1","state":{"n":12345678901234567890,"html":"<b>"},`+
		`"messages":[{"id":"u1","role":"user","content":"hi"}],"tools":[],"context":[],"forwardedProps":{}}`), 0o600))
	finished := `{"type":"RUN_FINISHED","threadId":"t1","runId":"r1"}`

	cases := []struct {
		name, reason string
		status       int      // the agent's status
		events       []string // after the STATE_SNAPSHOT
		args         []string // after -url
		wantStatus   int
		wantStdout   string // "" means not checked
		wantStderr   string
		wantHeader   http.Header // request headers the agent must get
	}{{
		name:       "input file",
		reason:     "the file's state and messages are sent exactly and are the starting value",
		status:     http.StatusOK,
		events:     []string{`{"type":"STATE_DELTA","delta":[{"op":"add","path":"/done","value":true}]}`, finished},
		args:       []string{"-input", input},
		wantStatus: 0,
		wantStdout: `{
  "state": {
    "sent": {
      "n": 12345678901234567890,
      "html": "<b>"
    },
    "done": true
  },
  "messages": [
    {
      "id": "u1",
      "role": "user",
      "content": "hi"
    }
  ]
}
`,
	}, {
		name:       "minimal input",
		reason:     "without -input the state {} and generated ids are sent",
		status:     http.StatusOK,
		events:     []string{finished},
		wantStatus: 0,
		wantStdout: "{\n  \"state\": {\n    \"sent\": {}\n  },\n  \"messages\": []\n}\n",
	}, {
		name:       "warning",
		reason:     "a skipped event is reported on standard error and the run goes on",
		status:     http.StatusOK,
		events:     []string{`{"type":"STATE_DELTA","delta":[{"op":"remove","path":"/missing"}]}`, finished},
		wantStatus: 0,
		wantStderr: "warning: aguistate: event 2 (STATE_DELTA): operation 0 (remove \"/missing\"): patch failed to apply: ",
	}, {
		name:       "RUN_ERROR",
		reason:     "a run the agent ends with RUN_ERROR is reported and fails the command",
		status:     http.StatusOK,
		events:     []string{`{"type":"RUN_ERROR","message":"boom","code":"E42"}`},
		wantStatus: 1,
		wantStderr: "error: run failed: boom (code E42)\n",
	}, {
		name:       "header",
		reason:     "-H sets a request header, and may repeat",
		status:     http.StatusOK,
		events:     []string{`{"type":"RUN_FINISHED","threadId":"t","runId":"r"}`},
		args:       []string{"-H", "Authorization: Bearer t0k", "-H", "X-Tenant: a", "-H", "x-tenant: b"},
		wantStatus: 0,
		wantHeader: http.Header{"Authorization": {"Bearer t0k"}, "X-Tenant": {"a", "b"}},
	}, {
		name:       "bad header",
		reason:     "a -H without a colon is bad usage",
		status:     http.StatusOK,
		args:       []string{"-H", "Authorization"},
		wantStatus: 2,
	}, {
		name:       "unfinished stream",
		reason:     "a stream that ends without RUN_FINISHED fails, and the state so far is printed",
		status:     http.StatusOK,
		wantStatus: 1,
		wantStdout: "{\n  \"state\": {\n    \"sent\": {}\n  },\n  \"messages\": []\n}\n",
		wantStderr: "error: aguistate: the stream ended before RUN_FINISHED or RUN_ERROR\n",
	}, {
		name:       "HTTP error",
		reason:     "a non-2xx answer is reported with its body",
		status:     http.StatusInternalServerError,
		wantStatus: 1,
		wantStdout: "{\n  \"state\": {},\n  \"messages\": []\n}\n",
		wantStderr: "error: aguistate: agent answered 500 Internal Server Error: agent is down\n",
	}, {
		name:       "unreadable input",
		reason:     "a missing input file is a usage error",
		status:     http.StatusOK,
		args:       []string{"-input", filepath.Join(t.TempDir(), "absent.json")},
		wantStatus: 2,
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := agent(t, tc.status, tc.wantHeader, tc.events...)
			var stdout, stderr bytes.Buffer
			got := run(append([]string{"-url", srv.URL, "-timeout", "10s"}, tc.args...), &stdout, &stderr)
			assert.Equal(t, tc.wantStatus, got, "exit status; %s; stderr: %s", tc.reason, stderr.String())
			if tc.wantStdout != "" {
				assert.Equal(t, tc.wantStdout, stdout.String(), tc.reason)
			}
			if tc.wantStderr != "" {
				assert.Contains(t, stderr.String(), tc.wantStderr, tc.reason)
			}
		})
	}
}

func TestRunUsage(t *testing.T) {
	cases := []struct {
		name, reason string
		args         []string
	}{
		{name: "no url", reason: "-url is required", args: nil},
		{name: "extra argument", reason: "the command takes no arguments", args: []string{"-url", "http://127.0.0.1:1", "x"}},
		{name: "bad flag", reason: "unknown flags are usage errors", args: []string{"-nope"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var stderr bytes.Buffer
			assert.Equal(t, 2, run(tc.args, io.Discard, &stderr), tc.reason)
			assert.Contains(t, stderr.String(), "usage: httpagent", tc.reason)
		})
	}
}
