// Package aguistate consumes an AG-UI agent's event stream. It keeps, for
// one thread, the agent state (any JSON value) and the ordered list of
// messages, as the AG-UI state/messages draft spec says. Deltas are RFC
// 6902 JSON Patch documents (https://www.rfc-editor.org/rfc/rfc6902).
//
// Use [New] to make a [Consumer] for a thread, [Consumer.AddMessages] with
// [UserMessage] to add the user's turn, and [Consumer.RunAgent] to run an
// [Agent] over HTTP and apply its stream. Use [Consumer.Run] to apply a
// stream from an io.Reader. Use [Consumer.State], [Consumer.Messages] and
// [Consumer.Subscribe] to follow the thread, [Change].Pieces to print text
// as it streams, [Consumer.Message] to read a message a change names, and
// [Message] methods to read messages typed. Use [Consumer.RunTools] to
// answer from Go the tools the agent leaves to the client
// ([Consumer.PendingToolCalls]). Use [Value.Decode] to validate state
// before acting on it, [Consumer.Resume] to answer interrupts, and
// [Consumer.Checkpoint] and
// [Restore] to keep a thread across restarts, and [Consumer.Clone] to try
// events on a copy of a thread that costs nothing. Use [Consumer.Prelude] to
// bring a viewer who joins mid-thread to where the Consumer stands, and
// [Consumer.Follow] and [Agent].Reconnects to follow a relay's thread
// (package github.com/aguistate/aguistate/relay) across dropped
// connections, and [Consumer.FollowThread] to stay on it across runs.
// Package github.com/aguistate/aguistate/agenttest serves a scripted agent
// to a frontend's tests.
//
// Each of these has a runnable example, which pkg.go.dev and go doc -http
// show beside it: [Change].Pieces with [Consumer.Subscribe], and
// [Consumer.Follow] and [Agent].Reconnects with package relay's New. The
// repository's guides start from a task: a Go
// frontend (docs/frontend.md), a server and the relay (docs/server.md),
// tests (docs/testing.md). docs/semantics.md states every rule, and where
// this package differs from the reference client.
//
// # Errors
//
// A fatal event stops the stream and leaves the Consumer as it was. Its
// error is an *[EventError] wrapping [ErrMalformedEvent] or [ErrLimit],
// naming the event by [Event].Position. A warning skips one event and the
// stream goes on. It wraps [ErrPatchFailed], [ErrStateRejected] or
// [ErrNoTarget], and reaches subscribers in [Change].Warning; a warning
// wrapping [ErrProtocolVersion] (an event of another AG-UI version) does
// not skip its event. A run the
// agent failed is a *[RunError]; an answer that is no event stream, an
// *[HTTPError]; a stream cut short wraps [io.ErrUnexpectedEOF].
// After RUN_FINISHED only RUN_STARTED or RUN_ERROR may come, and after
// RUN_ERROR only RUN_STARTED.
//
// # Concurrency
//
// A Consumer is safe for concurrent use. Readers see it as it was between
// two events. The values it returns are immutable and shared, not copies.
// One RunAgent, Follow or FollowThread streams into a Consumer at a time:
// another call returns [ErrRunInProgress] and sends nothing.
package aguistate
