// Scan: reading a log page by page, with the position checks every store shares.

package relay

import (
	"context"
	"iter"
)

// scanPage is the number of entries [Scan] asks a [Pager] for at once.
const scanPage = 256

// Pager reads one thread's log for [Scan]. A [Store] implementation provides
// one to get Read and Follow with the checks the Store interface promises;
// Scan relies on [Store.Trim] never removing the last entry. The Pager's
// errors reach the caller of Read or Follow as they are.
type Pager interface {
	// Page returns the entries at positions from on, in order: n of them,
	// or fewer when the log ends.
	Page(ctx context.Context, from int64, n int) ([]Entry, error)

	// Wait returns up to n entries after position after, in order, waiting
	// until there is one. It may return none when it has waited a while. It
	// returns an error when ctx ends.
	Wait(ctx context.Context, after int64, n int) ([]Entry, error)
}

// Scan returns the entries of thread after position after, read from p, as
// [Store.Read] returns them, or as [Store.Follow] does when follow is true:
// it yields a [*RangeError] where the log skips a position or does not hold
// after.
func Scan(ctx context.Context, thread string, after int64, p Pager, follow bool) iter.Seq2[Entry, error] {
	return func(yield func(Entry, error) bool) {
		fail := func(err error) { yield(Entry{}, err) }
		if after < 0 {
			fail(&RangeError{Thread: thread, After: after})
			return
		}
		// The first page starts at after itself: an entry there, or the
		// last entry (which Trim never removes) past it, tells a log that
		// holds after from one that ends before it.
		page, err := p.Page(ctx, after, scanPage+1)
		if err != nil {
			fail(err)
			return
		}
		if after > 0 && len(page) == 0 {
			fail(&RangeError{Thread: thread, After: after})
			return
		}
		full := len(page) == scanPage+1
		if len(page) > 0 && page[0].Pos == after {
			page = page[1:]
		}
		// emit yields page, checking that it continues the log at after+1.
		emit := func(page []Entry) bool {
			for _, e := range page {
				if e.Pos != after+1 {
					fail(&RangeError{Thread: thread, After: after, Trimmed: true})
					return false
				}
				if !yield(e, nil) {
					return false
				}
				after = e.Pos
			}
			return true
		}
		for {
			if !emit(page) {
				return
			}
			if !full {
				break
			}
			page = nil
			if page, err = p.Page(ctx, after+1, scanPage); err != nil {
				fail(err)
				return
			}
			full = len(page) == scanPage
		}
		for follow {
			page = nil // not held while waiting
			if page, err = p.Wait(ctx, after, scanPage); err != nil {
				fail(err)
				return
			}
			if !emit(page) {
				return
			}
		}
	}
}
