// Package aguistate consumes an AG-UI agent's event stream and keeps, for one
// thread, the agent state and the ordered list of messages, exactly as the
// AG-UI state/messages draft spec says.
//
//	c := aguistate.New(nil)
//	if err := c.Run(ctx, resp.Body); err != nil { // an SSE body, JSON Lines or a JSON array
//		return err // a fatal error: the Consumer holds the value from before it
//	}
//	fmt.Println(c.State(), c.Diverged())
//
// The spec is the AG-UI "State and messages" draft (events STATE_SNAPSHOT,
// STATE_DELTA and MESSAGES_SNAPSHOT); deltas are RFC 6902 JSON Patch
// documents (https://www.rfc-editor.org/rfc/rfc6902) addressed by RFC 6901
// JSON Pointers.
//
// Use [New] to make a [Consumer] for a thread, [Consumer.StartRun] to load a
// run's RunAgentInput, [Consumer.Run] to apply a whole stream from an
// io.Reader, [Consumer.RunAgent] to POST a run's input to an agent and
// apply its response (AG-UI HTTP transport), or [Consumer.Apply] to apply
// one event. Use [Consumer.State], [Consumer.Messages] and
// [Consumer.Diverged] to read, [Consumer.Subscribe] to be told what each
// event changed, [Consumer.NextInput] to build the next run's
// [RunAgentInput], [Consumer.Checkpoint] and [Restore] to carry a thread
// across a restart, and [ReadEvents] to split a stream into events without
// applying them. The examples show each in use.
//
// # State and messages
//
// The state is any JSON value, not only an object; a new Consumer starts
// from {}. A STATE_SNAPSHOT replaces it wholesale. A STATE_DELTA applies an
// RFC 6902 patch atomically: all operations or none. Numbers keep their
// exact digits, object members keep their order, and an event with a
// duplicate member name anywhere is malformed. A MESSAGES_SNAPSHOT
// reconciles by message id: it replaces held messages in place, appends
// unseen ones in snapshot order and drops absent ones, except activity and
// reasoning messages while the snapshot carries none of that role. Messages
// keep every field the producer sent. The other AG-UI 1.0 events that build
// messages (text, tool calls, activities, reasoning, and their chunk forms)
// apply as the reference client @ag-ui/client 1.0.0 applies them, except
// where the spec decides otherwise; the README lists each difference.
//
// State is remote input: validate what you read out of it before acting on
// it, as the spec's Security Considerations require. Use [Value.Decode] to
// read a part of it, named by a JSON Pointer, into a Go value strictly: a
// missing member, a member that names no field, a value of the wrong type or
// a number that a float would round is an error wrapping [errDecode]. For
// rules a Go type cannot express, validate against a JSON Schema as
// examples/validate does, or install [Options].ValidateState to check every
// candidate state before it is committed.
//
// # Errors
//
// A fatal error stops the stream and leaves the Consumer exactly as it was
// before the bad event: an event that is not valid JSON or has no string
// type ([ErrMalformedEvent]), a structurally malformed patch
// ([errMalformedPatch]), malformed messages ([errMalformedMessages]), or an
// event that would take the Consumer past one of the limits in [Options]
// ([ErrLimit]): the size of an event, nesting depth, operations in a patch,
// the size of the state, the number of messages, the size of a message.
// Errors are *[EventError] values
// that name the event's position and type and wrap a *[PatchError] that
// names the operation where there is one; use [errors.Is] and [errors.As].
//
// A warning skips one event and the stream goes on: a well-formed patch that
// fails to apply ([ErrPatchFailed], which also marks the state as diverged
// until the next STATE_SNAPSHOT), a candidate state that
// [Options].ValidateState refused ([ErrStateRejected], which does too), or
// an event naming a message it cannot apply to ([ErrNoTarget]). Warnings
// reach subscribers in [Change].Warning and [Options].Logger.
//
// # Concurrency
//
// A Consumer is safe for concurrent use: any number of goroutines may read
// while one stream is applied, and every read sees the Consumer as it was
// between two events. Values and messages it returns are immutable and
// shared, never copied in full.
package aguistate
