// Runnable examples: a viewer catching up from a checkpoint and the log, a
// Relay in front of an agent, a run stopped from Go, an Authorize hook, and
// a viewer that follows a thread across runs.

package relay_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"time"

	"github.com/aguistate/aguistate"
	"github.com/aguistate/aguistate/relay"
)

// A Store holds a thread's log and checkpoint. A writer applies a thread's
// events, appends each at its position and checkpoints the Consumer; a
// viewer who saw only the first event joins again after the log was
// trimmed, from the checkpoint and the rest of the log.
func ExampleStore() {
	ctx := context.Background()
	store := relay.NewMemory(nil)
	stream := []string{
		`{"type":"RUN_STARTED","threadId":"t1","runId":"r1"}`,
		`{"type":"STATE_SNAPSHOT","snapshot":{"count":0}}`,
		`{"type":"STATE_DELTA","delta":[{"op":"replace","path":"/count","value":1}]}`,
		`{"type":"STATE_DELTA","delta":[{"op":"replace","path":"/count","value":2}]}`,
		`{"type":"RUN_FINISHED","threadId":"t1","runId":"r1"}`,
	}
	writer := aguistate.New(nil)
	for i, e := range stream {
		pos := int64(i + 1)
		if err := writer.Apply([]byte(e)); err != nil {
			fmt.Println(err)
			return
		}
		if err := store.Append(ctx, "t1", pos, []byte(e)); err != nil {
			fmt.Println(err) // a *relay.ConflictError: another writer has the thread
			return
		}
		if pos == 3 {
			_ = store.SaveCheckpoint(ctx, "t1", pos, writer.Checkpoint())
			_ = store.Trim(ctx, "t1", pos)
		}
	}

	// The viewer saw the first event: it reads on from there or, when the
	// log no longer holds what follows, from the checkpoint.
	viewer := aguistate.New(nil)
	_ = viewer.Apply([]byte(stream[0]))
	err := catchUp(ctx, store, viewer, 1)
	if errors.Is(err, relay.ErrOutOfRange) {
		fmt.Println("trimmed: start from the checkpoint")
		var pos int64
		var data []byte
		if pos, data, err = store.LoadCheckpoint(ctx, "t1"); err == nil {
			if viewer, err = aguistate.Restore(data, nil); err == nil {
				err = catchUp(ctx, store, viewer, pos)
			}
		}
	}
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(viewer.State())
	// Output:
	// trimmed: start from the checkpoint
	// apply event 4
	// apply event 5
	// {"count":2}
}

// catchUp applies to c the events of thread t1 after position after.
func catchUp(ctx context.Context, store relay.Store, c *aguistate.Consumer, after int64) error {
	for e, err := range store.Read(ctx, "t1", after) {
		if err != nil {
			return err
		}
		fmt.Println("apply event", e.Pos)
		if err := c.Apply(e.Event); err != nil {
			return err
		}
	}
	return nil
}

// A relay in front of an agent: a client runs the thread through it, and a
// viewer who joins afterwards gets the thread by prelude.
func ExampleNew() {
	agent := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		for _, ev := range []string{
			`{"type":"RUN_STARTED","threadId":"t1","runId":"r1"}`,
			`{"type":"STATE_SNAPSHOT","snapshot":{"city":"Rome"}}`,
			`{"type":"RUN_FINISHED","threadId":"t1","runId":"r1"}`,
		} {
			fmt.Fprintf(w, "data: %s\n\n", ev)
		}
	}))
	defer agent.Close()
	r := relay.New(&aguistate.Agent{URL: agent.URL}, nil) // threads in memory
	defer r.Close()
	srv := httptest.NewServer(r)
	defer srv.Close()

	client := aguistate.New(nil)
	_ = client.StartRun(aguistate.RunAgentInput{ThreadID: "t1"})
	res, err := client.RunAgent(context.Background(), &aguistate.Agent{URL: srv.URL + "/agent", Reconnects: 3},
		&aguistate.RunOptions{RunID: "r1"})
	fmt.Println(res.Outcome, err)

	viewer := aguistate.New(nil)
	res, err = viewer.Follow(context.Background(), &aguistate.Agent{}, srv.URL+"/threads/t1/events")
	fmt.Println(res.Outcome, err, viewer.State())
	// Output:
	// success <nil>
	// success <nil> {"city":"Rome"}
}

// A Go client stops the run it started through a relay (the user pressed
// stop): the relay cancels its request to the agent and ends the run with
// RUN_FINISHED, outcome "cancelled", which RunAgent returns.
func ExampleStop() {
	started := make(chan struct{})
	agent := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(w, "data: {\"type\":\"RUN_STARTED\",\"threadId\":\"t1\",\"runId\":\"r1\"}\n\n")
		w.(http.Flusher).Flush()
		close(started)
		<-req.Context().Done() // an agent that works on until stopped
	}))
	defer agent.Close()
	r := relay.New(&aguistate.Agent{URL: agent.URL}, nil)
	defer r.Close()
	srv := httptest.NewServer(r)
	defer srv.Close()

	client := &aguistate.Agent{URL: srv.URL + "/agent"}
	go func() {
		<-started
		if err := relay.Stop(context.Background(), client, "t1"); err != nil {
			fmt.Println(err)
		}
	}()
	c := aguistate.New(nil)
	_ = c.StartRun(aguistate.RunAgentInput{ThreadID: "t1"})
	res, err := c.RunAgent(context.Background(), client, &aguistate.RunOptions{RunID: "r1"})
	fmt.Println(res.Outcome, err)
	// Output:
	// cancelled <nil>
}

// An Authorize hook names each request's tenant from its bearer token and
// refuses a request without one. Each tenant sees only its own threads: a
// thread of another tenant is answered as one that does not exist. The
// grant's Header goes on the run's request to the agent.
func ExampleAuthorize() {
	agent := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		var in aguistate.RunAgentInput
		_ = json.NewDecoder(req.Body).Decode(&in)
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprintf(w, "data: {\"type\":\"RUN_STARTED\",\"threadId\":%q,\"runId\":%q}\n\n", in.ThreadID, in.RunID)
		fmt.Fprintf(w, "data: {\"type\":\"STATE_SNAPSHOT\",\"snapshot\":{\"for\":%q}}\n\n", req.Header.Get("X-Tenant"))
		fmt.Fprintf(w, "data: {\"type\":\"RUN_FINISHED\",\"threadId\":%q,\"runId\":%q}\n\n", in.ThreadID, in.RunID)
	}))
	defer agent.Close()
	tenants := map[string]string{"alice-token": "alice", "bob-token": "bob"}
	hook := func(req *http.Request, action relay.Action, thread string) (relay.Grant, error) {
		tenant, ok := tenants[strings.TrimPrefix(req.Header.Get("Authorization"), "Bearer ")]
		if !ok {
			return relay.Grant{}, relay.ErrUnauthenticated // 401
		}
		return relay.Grant{Tenant: tenant, Header: http.Header{"X-Tenant": {tenant}}}, nil
	}
	r := relay.New(&aguistate.Agent{URL: agent.URL}, &relay.Options{Authorize: hook})
	defer r.Close()
	srv := httptest.NewServer(r)
	defer srv.Close()

	alice := &aguistate.Agent{URL: srv.URL + "/agent", Header: http.Header{"Authorization": {"Bearer alice-token"}}}
	c := aguistate.New(nil)
	_, err := c.RunAgent(context.Background(), alice, &aguistate.RunOptions{ThreadID: "t1"})
	fmt.Println(c.State(), err)

	for _, token := range []string{"alice-token", "bob-token", ""} {
		req, _ := http.NewRequest("GET", srv.URL+"/threads/t1", nil)
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			fmt.Println(err)
			return
		}
		resp.Body.Close()
		fmt.Printf("%q: %d\n", token, resp.StatusCode)
	}
	// Output:
	// {"for":"alice"} <nil>
	// "alice-token": 200
	// "bob-token": 404
	// "": 401
}

// A viewer follows a thread across runs (FollowThread, ?follow=thread): it
// joins after the first run, gets each later run, whoever starts it, and
// returns nil once the thread is deleted.
func ExampleRelay_followThread() {
	agent := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		var in aguistate.RunAgentInput
		body, _ := io.ReadAll(req.Body)
		_ = in.UnmarshalJSON(body)
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprintf(w, "data: {\"type\":\"RUN_STARTED\",\"threadId\":\"t1\",\"runId\":%q}\n\n", in.RunID)
		fmt.Fprintf(w, "data: {\"type\":\"STATE_SNAPSHOT\",\"snapshot\":{\"last\":%q}}\n\n", in.RunID)
		fmt.Fprintf(w, "data: {\"type\":\"RUN_FINISHED\",\"threadId\":\"t1\",\"runId\":%q}\n\n", in.RunID)
	}))
	defer agent.Close()
	store := relay.NewMemory(nil)
	r := relay.New(&aguistate.Agent{URL: agent.URL}, &relay.Options{Store: store})
	defer r.Close()
	srv := httptest.NewServer(r)
	defer srv.Close()
	run := func(id string) {
		client := aguistate.New(nil)
		_ = client.StartRun(aguistate.RunAgentInput{ThreadID: "t1"})
		_, _ = client.RunAgent(context.Background(), &aguistate.Agent{URL: srv.URL + "/agent"}, &aguistate.RunOptions{RunID: id})
	}
	run("r1")

	viewer := aguistate.New(nil)
	finished := make(chan string, 3)
	viewer.Subscribe(func(ch aguistate.Change) {
		if ch.Event.Type == "RUN_FINISHED" {
			finished <- viewer.RunID() + " " + viewer.State().String()
		}
	})
	done := make(chan error)
	go func() {
		done <- viewer.FollowThread(context.Background(), &aguistate.Agent{}, srv.URL+"/threads/t1/events")
	}()
	for viewer.RunID() != "r1" { // joined: the prelude brought it to r1's end
		time.Sleep(time.Millisecond)
	}
	run("r2")
	fmt.Println(<-finished)
	run("r3")
	fmt.Println(<-finished)
	_ = store.Delete(context.Background(), "t1")
	fmt.Println("deleted:", <-done)
	// Output:
	// r2 {"last":"r2"}
	// r3 {"last":"r3"}
	// deleted: <nil>
}
