package aguistate

import "github.com/aguistate/aguistate/internal/jsonv"

// view is everything a reader can see. It is never changed once published:
// each event makes a new one that shares what the event did not touch.
type view struct {
	state    *jsonv.Node
	messages []Message
	index    map[string]int // message id → position; messages without an id are not in it
	diverged bool
	events   int // events given to Apply so far, rejected ones included

	threadID, runID string        // of the last run started, "" before one
	interrupts      []*jsonv.Node // pending interrupts of the last run; never edited
	chunks          []chunkStream // open chunk streams, one per lane; never edited
}

// nextPosition is the position of the next event given to the Consumer
// (see [Event].Position): one more than the events it has been given.
func (v *view) nextPosition() int { return v.events + 1 }
