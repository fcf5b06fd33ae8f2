// Tests of the bounds in total: the bytes of run inputs held at once, a body that trickles,
// and the viewers served at once.

package relay_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/aguistate/aguistate"
	"github.com/aguistate/aguistate/internal/agenttest"
	"github.com/aguistate/aguistate/relay"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// bigInput returns a run input of thread with a state of about size bytes.
func bigInput(thread string, size int) []byte {
	return []byte(fmt.Sprintf(`{"threadId":%q,"runId":"r","messages":[],"state":{"blob":%q}}`, thread, strings.Repeat("x", size)))
}

// chunked hides a reader's length, so that the request has none.
type chunked struct{ r io.Reader }

func (c chunked) Read(p []byte) (int, error) { return c.r.Read(p) }

// TestRelayInputBudget holds run inputs at the relay, its agent not
// answering yet: past MaxInputBytes in all a POST gets 503 with
// Retry-After, whether its length is known or not; past MaxInput, 413.
// Once the agent has the inputs, they are let go.
func TestRelayInputBudget(t *testing.T) {
	t.Parallel()
	answer := make(chan struct{})
	got := make(chan struct{}, 4)
	agent := serveFunc(t, func(w http.ResponseWriter, req *http.Request) {
		var in struct{ ThreadID string }
		_ = json.NewDecoder(req.Body).Decode(&in)
		_, _ = io.Copy(io.Discard, req.Body)
		got <- struct{}{}
		<-answer
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprintf(w, "data: {\"type\":\"RUN_STARTED\",\"threadId\":%q,\"runId\":\"r\"}\n\n"+
			"data: {\"type\":\"RUN_FINISHED\",\"threadId\":%q,\"runId\":\"r\"}\n\n", in.ThreadID, in.ThreadID)
	})
	r := relay.New(&aguistate.Agent{URL: agent}, &relay.Options{MaxInput: 1 << 20, MaxInputBytes: 1 << 20,
		Consumer: &aguistate.Options{MaxEventSize: 4 << 20}})
	base := serve(t, r)

	first := openSSE(t, http.MethodPost, base+"/agent", bigInput("t1", 600<<10), "", 1)
	<-got // the relay holds the first input until the agent answers
	status, header, body := send(t, http.MethodPost, base+"/agent", "", bigInput("t2", 600<<10))
	assert.Equal(t, http.StatusServiceUnavailable, status, body)
	assert.Equal(t, "1", header.Get("Retry-After"))
	assert.Contains(t, body, "MaxInputBytes")

	resp, err := http.Post(base+"/agent", "application/json", chunked{bytes.NewReader(bigInput("t3", 600<<10))})
	require.NoError(t, err)
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	assert.Equal(t, http.StatusServiceUnavailable, resp.StatusCode, "a body of unknown length: %s", b)

	status, _, body = send(t, http.MethodPost, base+"/agent", "", bigInput("t4", 2<<20))
	assert.Equal(t, http.StatusRequestEntityTooLarge, status)
	assert.Contains(t, body, "MaxInput")

	close(answer)
	first.wait(t)
	status, _, body = send(t, http.MethodPost, base+"/agent", "", bigInput("t5", 600<<10))
	assert.Equal(t, http.StatusOK, status, "the first input was let go: %s", body)
}

// TestRelayInputTimeout sends a run input a byte at a time: past
// InputTimeout the relay answers 408 rather than hold the connection.
func TestRelayInputTimeout(t *testing.T) {
	t.Parallel()
	a := newAgent(t, nil)
	_, base := newRelay(t, a, relay.Options{InputTimeout: 300 * time.Millisecond})
	conn, err := net.Dial("tcp", strings.TrimPrefix(base, "http://"))
	require.NoError(t, err)
	defer conn.Close()
	_, err = fmt.Fprint(conn, "POST /agent HTTP/1.1\r\nHost: relay\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{")
	require.NoError(t, err)
	go func() {
		for range 50 {
			time.Sleep(100 * time.Millisecond)
			if _, err := conn.Write([]byte(" ")); err != nil {
				return
			}
		}
	}()
	_ = conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	require.NoError(t, err, "the relay answers before the body ends")
	resp.Body.Close()
	assert.Equal(t, http.StatusRequestTimeout, resp.StatusCode)
	assert.Empty(t, a.Inputs())
}

// TestRelayViewerCaps opens event streams while runs wait: past
// MaxThreadViewers on one thread a viewer gets 429, past MaxViewers on the
// relay 503, each with Retry-After; a stream that ends frees its place.
func TestRelayViewerCaps(t *testing.T) {
	t.Parallel()
	a := agenttest.NewScript(t, agenttest.Echo([][]byte{
		[]byte(`{"type":"RUN_STARTED","threadId":"x","runId":"r"}`),
		[]byte(`{"type":"RUN_FINISHED","threadId":"x","runId":"r"}`),
	}))
	release := a.Hold(1)
	_, base := newRelay(t, a, relay.Options{MaxViewers: 3, MaxThreadViewers: 2})
	t1 := openSSE(t, http.MethodPost, base+"/agent", []byte(`{"threadId":"t1","runId":"r","messages":[]}`), "", 1)
	<-t1.first
	v1 := openSSE(t, http.MethodGet, base+"/threads/t1/events", nil, "", 1)
	<-v1.first
	status, header, body := send(t, http.MethodGet, base+"/threads/t1/events", "", nil)
	assert.Equal(t, http.StatusTooManyRequests, status, body)
	assert.Equal(t, "1", header.Get("Retry-After"))
	assert.Contains(t, body, "MaxThreadViewers")

	t2 := openSSE(t, http.MethodPost, base+"/agent", []byte(`{"threadId":"t2","runId":"r","messages":[]}`), "", 1)
	<-t2.first
	status, header, body = send(t, http.MethodGet, base+"/threads/t2/events", "", nil)
	assert.Equal(t, http.StatusServiceUnavailable, status, body)
	assert.Equal(t, "1", header.Get("Retry-After"))
	assert.Contains(t, body, "MaxViewers")

	release()
	t1.wait(t)
	v1.wait(t)
	t2.wait(t)
	code, _ := get(t, base+"/threads/t1/events", "")
	assert.Equal(t, http.StatusOK, code, "the places are free again")
}
