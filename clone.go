// Clone: a second Consumer that goes on from where another stands.

package aguistate

// Clone returns a new Consumer that holds what c holds, with c's Options
// and no subscribers: the state, the messages, the diverged flag, the
// pending interrupts, the thread and run ids, where the run lifecycle
// stands, the open constructs and chunk streams, the run's scopes, the
// count of events and the stream's event id. Given the same events, it
// ends where c would end, as a Consumer restored from c's
// [Consumer.Checkpoint] would. From then on the two are independent: what
// one applies, the other does not see.
//
// It costs O(1) and allocates one Consumer: the two share c's current
// view, which is immutable, and a change to either copies only what it
// changes, as a change to c alone would. The text of a message (or a tool
// call's arguments) that streams in grows in place, in a buffer that only
// the Consumer that made it writes into, past the text it holds: the
// other copies the text the first time it appends to it, in O(its
// length), and then appends in place too.
//
// It takes no lock: it is safe to call while another goroutine applies
// events to c, and returns c as it was between two events.
func (c *Consumer) Clone() *Consumer {
	d := &Consumer{opts: c.opts}
	d.cur.Store(c.cur.Load())
	return d
}
