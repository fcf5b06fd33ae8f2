// Tests of the relay process's drain on SIGTERM, and of the flags that bound and expire its
// threads.

package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/aguistate/aguistate/internal/agenttest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// buildRelay builds the command into a temporary directory and returns
// the binary's path.
func buildRelay(t *testing.T) string {
	bin := filepath.Join(t.TempDir(), "relay")
	build := exec.Command("go", "build", "-o", bin, ".")
	build.Stderr = os.Stderr
	require.NoError(t, build.Run())
	return bin
}

// startProcess starts the binary bin with args on a free loopback port,
// waits until it listens, and returns its base URL, the process and its
// standard error; it kills it when t ends, if it still runs.
func startProcess(t *testing.T, bin string, args ...string) (string, *exec.Cmd, *lockedBuffer) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	require.NoError(t, ln.Close())
	cmd := exec.Command(bin, append(args, "-listen", addr)...)
	var stderr lockedBuffer
	cmd.Stderr = &stderr
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	for deadline := time.Now().Add(10 * time.Second); !strings.Contains(stderr.String(), "relay: http://"); time.Sleep(10 * time.Millisecond) {
		require.True(t, time.Now().Before(deadline), "the relay starts: %s", stderr.String())
	}
	return "http://" + addr, cmd, &stderr
}

// sseLines reads an SSE answer's data lines into a channel, which is
// closed when the answer ends.
func sseLines(t *testing.T, resp *http.Response) <-chan string {
	out := make(chan string, 100)
	go func() {
		defer close(out)
		defer resp.Body.Close()
		for sc := bufio.NewScanner(resp.Body); sc.Scan(); {
			if data, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
				out <- data
			}
		}
	}()
	return out
}

// until reads lines until one contains want, and fails t when the stream
// ends first or after 30 s.
func until(t *testing.T, lines <-chan string, want string) {
	t.Helper()
	timeout := time.After(30 * time.Second)
	for {
		select {
		case line, ok := <-lines:
			require.True(t, ok, "the stream ended before %s", want)
			if strings.Contains(line, want) {
				return
			}
		case <-timeout:
			t.Fatalf("waited 30 s in vain for %s", want)
		}
	}
}

// TestDrain sends SIGTERM to a relay process in the middle of a slow run:
// while it drains, /healthz answers 503 and a new run 503 with
// Retry-After; the run goes on to its end, which its client and a viewer
// get, and the process then exits with status 0.
func TestDrain(t *testing.T) {
	bin := buildRelay(t)
	agent := agenttest.NewScript(t, script)
	release := agent.Hold(3) // in the middle of the text message
	defer release()
	thread := newThread(t)
	base, cmd, stderr := startProcess(t, bin, "-agent", agent.URL, "-drain", "1m")
	resp, err := http.Get(base + "/healthz")
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	input := fmt.Sprintf(`{"threadId":%q,"runId":"r1","messages":[]}`, thread)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, base+"/agent", strings.NewReader(input))
	require.NoError(t, err)
	resp, err = http.DefaultClient.Do(req)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	client := sseLines(t, resp)
	until(t, client, "TEXT_MESSAGE_START")
	req, err = http.NewRequestWithContext(ctx, http.MethodGet, base+"/threads/"+thread+"/events", nil)
	require.NoError(t, err)
	resp, err = http.DefaultClient.Do(req)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	viewer := sseLines(t, resp)
	until(t, viewer, "RUN_STARTED") // the prelude

	require.NoError(t, cmd.Process.Signal(syscall.SIGTERM))
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		require.True(t, time.Now().Before(deadline), "/healthz answers 503 while the relay drains")
		resp, err := http.Get(base + "/healthz")
		require.NoError(t, err)
		resp.Body.Close()
		if resp.StatusCode == http.StatusServiceUnavailable {
			break
		}
	}
	resp, err = http.Post(base+"/agent", "application/json", strings.NewReader(fmt.Sprintf(`{"threadId":%q,"runId":"r1","messages":[]}`, thread+"-new")))
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusServiceUnavailable, resp.StatusCode, "a new run during the drain")
	assert.Equal(t, "1", resp.Header.Get("Retry-After"))
	assert.Contains(t, stderr.String(), "relay: draining (at most 1m0s)")

	release()
	until(t, client, "RUN_FINISHED")
	until(t, viewer, "RUN_FINISHED")
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	select {
	case err := <-exited:
		assert.NoError(t, err, "exit status 0: %s", stderr.String())
	case <-time.After(30 * time.Second):
		t.Fatalf("the relay did not exit after its run ended: %s", stderr.String())
	}
	assert.Len(t, agent.Inputs(), 1, "the new run never reached the agent")
	assert.NotContains(t, stderr.String(), "runs in progress")
	assert.True(t, strings.HasSuffix(stderr.String(), "relay: stopped\n"), "its last line: %s", stderr.String())
}

// listed returns the ids of GET /threads at base.
func listed(t *testing.T, base string) []string {
	resp, err := http.Get(base + "/threads")
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	var page struct {
		Threads []struct{ ThreadID string }
	}
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&page))
	ids := []string{}
	for _, th := range page.Threads {
		ids = append(ids, th.ThreadID)
	}
	return ids
}

// TestThreadBounds runs threads through relays on the memory store with
// -max-threads and -ttl: the least recently used thread goes past the
// bound, and a thread not changed for the TTL goes; DELETE removes one.
func TestThreadBounds(t *testing.T) {
	agent := agenttest.NewScript(t, script)
	for _, tc := range []struct {
		name, reason string
		args         []string
		wait         time.Duration
		want         []string
	}{
		{"max-threads", "three threads in a store of two: the first is evicted", []string{"-max-threads", "2"}, 0, []string{"c", "b"}},
		{"ttl", "threads not changed for the TTL expire", []string{"-ttl", "100ms"}, 500 * time.Millisecond, []string{}},
		{"none", "the defaults keep them", nil, 0, []string{"c", "b", "a"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			base := start(t, append([]string{"-agent", agent.URL}, tc.args...)...)
			for _, id := range []string{"a", "b", "c"} {
				runThread(t, base, id)
			}
			time.Sleep(tc.wait)
			assert.Equal(t, tc.want, listed(t, base), tc.reason)
		})
	}
	base := start(t, "-agent", agent.URL)
	runThread(t, base, "a")
	req, err := http.NewRequest(http.MethodDelete, base+"/threads/a", nil)
	require.NoError(t, err)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusNoContent, resp.StatusCode)
	assert.Equal(t, []string{}, listed(t, base), "DELETE removes the thread")
}

// rssMiB returns the resident memory of process pid, in MiB (VmRSS of
// /proc/PID/status, Linux).
func rssMiB(t *testing.T, pid int) float64 {
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	require.NoError(t, err)
	for line := range strings.Lines(string(status)) {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			var kib float64
			_, err := fmt.Sscanf(strings.TrimSpace(v), "%f kB", &kib)
			require.NoError(t, err)
			return kib / 1024
		}
	}
	t.Fatal("no VmRSS")
	return 0
}

// TestChurnRSS runs 100,000 threads through a relay process on the memory
// store, 8 at a time, and checks that its resident memory stays flat:
// after the last 20,000 it is at most 25% (and 16 MiB) above what it was
// after the first 20,000. "max-threads" keeps every thread (the default
// bound of 10,000 evicts), "ttl" lets them expire after 1 s (with no bound),
// "delete" deletes each with DELETE /threads/{threadId} (with no bound);
// "unbounded", which keeps them all, shows that the measure sees a relay
// that grows: it must grow by 50 MiB at least. It takes minutes: it runs
// when AGUISTATE_CHURN is set, to the modes it names ("all", or a
// comma-separated list).
func TestChurnRSS(t *testing.T) {
	which := os.Getenv("AGUISTATE_CHURN")
	if which == "" {
		t.Skip("set AGUISTATE_CHURN=all (or max-threads,ttl,delete,unbounded) to run 100,000 threads through the relay")
	}
	bin := buildRelay(t)
	agent := agenttest.NewScript(t, script)
	for _, tc := range []struct {
		name   string
		args   []string
		delete bool
		grows  bool
	}{
		{"max-threads", nil, false, false},
		{"ttl", []string{"-ttl", "1s", "-max-threads", "1000000000"}, false, false},
		{"delete", []string{"-max-threads", "1000000000"}, true, false},
		{"unbounded", []string{"-max-threads", "1000000000"}, false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if which != "all" && !strings.Contains(","+which+",", ","+tc.name+",") {
				t.Skip("not named in AGUISTATE_CHURN")
			}
			base, cmd, _ := startProcess(t, bin, append([]string{"-agent", agent.URL}, tc.args...)...)
			client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 8}}
			defer client.CloseIdleConnections()
			one := func(id string) error {
				input := fmt.Sprintf(`{"threadId":%q,"runId":"r1","messages":[{"id":"u1","role":"user","content":"hello"}]}`, id)
				resp, err := client.Post(base+"/agent", "application/json", strings.NewReader(input))
				if err != nil {
					return err
				}
				body, err := io.ReadAll(resp.Body)
				resp.Body.Close()
				if err != nil || resp.StatusCode != http.StatusOK || !strings.Contains(string(body), "RUN_FINISHED") {
					return fmt.Errorf("POST %s: %v %s: %s", id, err, resp.Status, body)
				}
				if !tc.delete {
					return nil
				}
				req, _ := http.NewRequest(http.MethodDelete, base+"/threads/"+id, nil)
				resp, err = client.Do(req)
				if err != nil {
					return err
				}
				resp.Body.Close()
				if resp.StatusCode != http.StatusNoContent {
					return fmt.Errorf("DELETE %s: %s", id, resp.Status)
				}
				return nil
			}
			const threads, round, workers = 100_000, 20_000, 8
			var rss []float64
			start := time.Now()
			for r := range threads / round {
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
				ids := make(chan int)
				errs := make(chan error, workers)
				var wg sync.WaitGroup
				for range workers {
					wg.Go(func() {
						for i := range ids {
							if err := one(fmt.Sprintf("churn-%s-%06d", tc.name, i)); err != nil {
								errs <- err
								return
							}
						}
					})
				}
			feed:
				for i := r * round; i < (r+1)*round; i++ {
					select {
					case ids <- i:
					case err := <-errs:
						require.NoError(t, err)
					case <-ctx.Done():
						break feed
					}
				}
				close(ids)
				wg.Wait()
				late := ctx.Err()
				cancel()
				close(errs)
				require.NoError(t, <-errs)
				require.NoError(t, late, "round %d within 10 minutes", r+1)
				rss = append(rss, rssMiB(t, cmd.Process.Pid))
			}
			t.Logf("%s: %d threads in %s; VmRSS after each %d: %.1f MiB", tc.name, threads, time.Since(start).Round(time.Second), round, rss)
			if tc.grows {
				assert.Greater(t, rss[len(rss)-1], rss[0]+50, "resident memory grows with the threads kept")
				return
			}
			assert.LessOrEqual(t, rss[len(rss)-1], max(rss[0]*1.25, rss[0]+16), "resident memory stays flat")
		})
	}
}
