// Package framing splits an AG-UI event stream into the JSON text of each
// event, without parsing that text.
//
// It reads three framings: server-sent events (sse.go; HTML Living Standard
// section 9.2.6,
// https://html.spec.whatwg.org/multipage/server-sent-events.html#event-stream-interpretation),
// JSON Lines (jsonl.go), and one JSON array of events (array.go, RFC 8259).
// [Auto] picks one from the first byte. Use [Read] to range over the events
// of an io.Reader.
//
// # Errors
//
// A failure is an [*Error] naming the event that failed. It wraps
// [ErrTooLarge], [ErrGap], [ErrSyntax], io.ErrUnexpectedEOF (a stream cut short inside
// an event) or the reader's own error. Messages have no package prefix: the
// caller adds its own.
//
// # Concurrency
//
// The iterator that [Read] returns reads its io.Reader and must be used by
// one goroutine at a time. The events it yields are views into a buffer
// that the next step reuses.
package framing
