// Interrupts and resume: the entries that answer pending interrupts, and
// the rule that a run starts only when every one is answered.

package aguistate

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/aguistate/aguistate/internal/jsonv"
)

// Resume returns AG-UI resume entries that answer every pending interrupt
// ([Consumer.Interrupts]), in order, as JSON text for [RunOptions].Resume.
// answer is called once for each interrupt. It returns resolve true and
// the payload to resolve it with (any value encoding/json marshals, a
// [Value] or json.RawMessage included; nil sends no payload), or resolve
// false to cancel it (AG-UI ResumeEntry status "resolved" or "cancelled").
//
// It returns nil when no interrupt is pending, and an error when a payload
// cannot be marshalled.
func (c *Consumer) Resume(answer func(interrupt Value) (payload any, resolve bool)) (json.RawMessage, error) {
	pending := c.cur.Load().interrupts
	if len(pending) == 0 {
		return nil, nil
	}
	type entry struct {
		InterruptID string `json:"interruptId"`
		Status      string `json:"status"`
		Payload     any    `json:"payload,omitempty"`
	}
	entries := make([]entry, len(pending))
	for i, in := range pending {
		id, _ := interruptID(in) // every pending interrupt has one: runFinished and Restore check it
		payload, resolve := answer(valueOf(in))
		entries[i] = entry{InterruptID: id, Status: "cancelled"}
		if resolve {
			entries[i].Status, entries[i].Payload = "resolved", payload
		}
	}
	out, err := json.Marshal(entries)
	if err != nil {
		return nil, apiError(fmt.Errorf("resume payload: %w", err))
	}
	return out, nil
}

// interruptID returns an interrupt's "id", when it is a non-empty string.
func interruptID(in *jsonv.Node) (string, bool) {
	id := in.Get("id")
	if id == nil || id.Kind() != jsonv.String || id.Text() == "" {
		return "", false
	}
	return id.Text(), true
}

// checkResume checks that resume (JSON text, nested at most maxDepth deep)
// answers every pending interrupt by its id, and cancels any whose
// "expiresAt" (RFC 3339) has passed, as the reference client's run start
// does. A resume that is not an array of objects, each with a string
// "interruptId" and a "status" of "resolved" or "cancelled", wraps
// ErrMalformedEvent.
func checkResume(pending []*jsonv.Node, resume json.RawMessage, maxDepth int) error {
	if len(pending) == 0 && resume == nil {
		return nil
	}
	status := make(map[string]string) // interruptId → status
	if resume != nil {
		n, err := parseJSON(resume, maxDepth)
		if err != nil {
			return fmt.Errorf("%w (in resume)", err)
		}
		if n.Kind() != jsonv.Array {
			return fmt.Errorf("%w: resume is %s, not an array", ErrMalformedEvent, n.Kind().Phrase())
		}
		for i := range n.Len() {
			e := n.Elem(i)
			if e.Kind() != jsonv.Object {
				return fmt.Errorf("%w: resume entry %d is %s, not an object", ErrMalformedEvent, i, e.Kind().Phrase())
			}
			f := eventFields(e)
			id, st := f.str("interruptId"), f.str("status")
			if f.err == nil && st != "resolved" && st != "cancelled" {
				f.fail("\"status\" is %s, not \"resolved\" or \"cancelled\"", jsonv.Quote(st))
			}
			if f.err != nil {
				return fmt.Errorf("%w (in resume entry %d)", f.err, i)
			}
			status[id] = st
		}
	}
	var missing []string
	for _, in := range pending {
		id, _ := interruptID(in)
		st, answered := status[id]
		if !answered {
			missing = append(missing, jsonv.Quote(id))
			continue
		}
		if st != "cancelled" && expired(in) {
			return fmt.Errorf("interrupt %s expired at %s and can no longer be resolved: cancel it", jsonv.Quote(id), in.Get("expiresAt").Text())
		}
	}
	if len(missing) > 0 {
		return errors.New("a run cannot start while interrupts are pending that resume does not answer: " + strings.Join(missing, ", "))
	}
	return nil
}

// expired reports whether an interrupt's "expiresAt" is an RFC 3339 time
// that has come. One that is absent or not such a time never expires, as
// in the reference client.
func expired(in *jsonv.Node) bool {
	at := in.Get("expiresAt")
	if at == nil || at.Kind() != jsonv.String {
		return false
	}
	t, err := time.Parse(time.RFC3339Nano, at.Text())
	return err == nil && !time.Now().Before(t)
}
