// Package sse splits an AG-UI event stream into the raw JSON text of each
// event, without parsing that text.
//
// It reads three framings: a WHATWG server-sent event stream
// (HTML Living Standard section 9.2.6 "Interpreting an event stream",
// https://html.spec.whatwg.org/multipage/server-sent-events.html#event-stream-interpretation),
// JSON Lines (one JSON value per
// line), and a single JSON array of events (RFC 8259). [FormatAuto] picks one
// from the first byte.
//
// Use [Read] to range over the payloads of an io.Reader.
//
// # Errors
//
// Framing failures are reported as an [*Error] naming the 1-based payload
// that failed; it wraps [ErrTooLarge], [ErrSyntax] or the reader's own error.
// Payload contents are never checked here except for [FormatJSONArray],
// whose framing depends on them.
//
// # Concurrency
//
// The iterator returned by [Read] reads from its io.Reader and must be used
// by one goroutine at a time; the payloads it yields are views into a buffer
// that is reused on the next step.
package sse
