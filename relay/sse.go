// SSE: the writer of a viewer's event stream, its fields, deadlines and flushes.

package relay

import (
	"bytes"
	"errors"
	"net/http"
	"strconv"
	"time"
)

// sseWriter writes an SSE response: its headers and the reconnection time
// before the first event, then events and comments. Only an event ends
// with a blank line: a blank line dispatches, which sets a viewer's last
// event ID, and before a stream's first id field it would set it to "".
// Each write may block for timeout at most; after a failed write it writes
// nothing more.
type sseWriter struct {
	w        http.ResponseWriter
	rc       *http.ResponseController
	retry    time.Duration
	timeout  time.Duration
	started  bool
	deadline bool   // a write deadline is set on the connection
	dirty    bool   // written since the last flush
	err      error  // of the first write that failed
	first    func() // called before the first event is written, when not nil
	sentOne  bool   // an event was written and flushed
	buf      []byte
}

// begin writes the headers and the retry field, once.
func (s *sseWriter) begin() {
	if s.started {
		return
	}
	s.started = true
	h := s.w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no")
	s.w.WriteHeader(http.StatusOK)
	s.write(strconv.AppendInt(append(s.buf[:0], "retry: "...), s.retry.Milliseconds(), 10), "\n")
}

// event writes one event: an id field when hasID (with no value when id
// is ""), and data, an event's JSON text, on one line whatever the store
// returned (see oneLine): a line end in it would end the data field and
// let the rest forge fields and events. The first event of the response
// is flushed at once, so that a viewer who joins gets it while the next
// are made or read. It returns the error of a write that failed, now or
// before.
func (s *sseWriter) event(id string, hasID bool, data []byte) error {
	s.begin()
	if s.first != nil {
		s.first()
		s.first = nil
	}
	if bytes.IndexByte(data, '\n') >= 0 || bytes.IndexByte(data, '\r') >= 0 {
		data = oneLine(data)
	}
	b := s.buf[:0]
	switch {
	case hasID && id == "":
		b = append(b, "id:\n"...)
	case hasID:
		b = append(append(append(b, "id: "...), id...), '\n')
	}
	b = append(append(b, "data: "...), data...)
	s.write(b, "\n\n")
	if !s.sentOne {
		s.sentOne = true
		s.flush()
	}
	return s.err
}

// comment writes an SSE comment, which viewers pass over.
func (s *sseWriter) comment(text string) {
	s.begin()
	s.write(append(append(s.buf[:0], ": "...), text...), "\n")
}

func (s *sseWriter) write(b []byte, end string) {
	s.buf = append(b, end...)
	if s.err != nil {
		return
	}
	s.setDeadline()
	_, s.err = s.w.Write(s.buf)
	s.dirty = true
}

// setDeadline renews the connection's write deadline before a write: a
// viewer that reads nothing for s.timeout is cut off, rather than holding
// the relay's memory as long as its connection lasts.
func (s *sseWriter) setDeadline() {
	if s.rc.SetWriteDeadline(time.Now().Add(s.timeout)) == nil {
		s.deadline = true
	}
}

// flush sends what was written.
func (s *sseWriter) flush() {
	if s.dirty && s.err == nil {
		s.setDeadline()
		if err := s.rc.Flush(); !errors.Is(err, http.ErrNotSupported) {
			s.err = err
		}
		s.dirty = false
	}
}

// close clears the write deadline, which would otherwise outlive the
// response on a connection the server keeps for the next request.
func (s *sseWriter) close() {
	if s.deadline {
		_ = s.rc.SetWriteDeadline(time.Time{})
	}
}

// end ends the response: 204 No Content when nothing was written, which
// stops a browser's EventSource from reconnecting.
func (s *sseWriter) end() {
	if !s.started {
		s.w.WriteHeader(http.StatusNoContent)
		return
	}
	s.flush()
}
