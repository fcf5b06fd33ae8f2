// Scan: reading a log page by page, with the position checks every store shares.

package relay

import (
	"context"
	"iter"
)

// scanPage is the most entries [Scan] asks a [Pager] for at once, and
// scanBytes about the most bytes of events it lets a page hold: a reader
// whose writes block (a viewer that does not read) keeps its page, so a
// page is sized by the largest event of the one before. The first asks
// for scanFirst entries, before any size is known.
const (
	scanPage  = 256
	scanBytes = 1 << 20
	scanFirst = 16
)

// nextPage returns how many entries to ask for after page, when n were
// asked for it: as many events of its largest size as scanBytes holds,
// from 1 to scanPage; n again after an empty page.
func nextPage(page []Entry, n int) int {
	if len(page) == 0 {
		return n
	}
	largest := 1
	for _, e := range page {
		largest = max(largest, len(e.Event))
	}
	return max(1, min(scanPage, scanBytes/largest))
}

// atEndKey is the key of a context value true when a read is expected to
// start at the log's end (see readAtEnd).
type atEndKey struct{}

// readAtEnd returns ctx telling [Scan] that its caller expects the log to
// end at the position its read starts after: the read then starts at that
// position, whose entry tells in one page a log that ends there from one
// that ends before it, rather than after it, which would take a second page
// to tell. A Store that does not read its log through Scan passes over it.
func readAtEnd(ctx context.Context) context.Context { return context.WithValue(ctx, atEndKey{}, true) }

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
		// The first page starts at after+1: an entry there tells that the
		// log holds it, without reading back the entry at after, which a
		// viewer's Last-Event-ID names and may be a large snapshot. When it
		// starts elsewhere or is empty, or when the caller expects the log to
		// end at after (see readAtEnd), the page starts at after itself: an
		// entry there, or the last entry (which Trim never removes) past it,
		// tells a log that holds after from one that ends before it.
		n := scanFirst
		var page []Entry
		var err error
		if atEnd, _ := ctx.Value(atEndKey{}).(bool); !atEnd || after == 0 {
			page, err = p.Page(ctx, after+1, n)
		}
		if err == nil && after > 0 && (len(page) == 0 || page[0].Pos != after+1) {
			n = scanFirst + 1
			page, err = p.Page(ctx, after, n)
		}
		if err != nil {
			fail(err)
			return
		}
		if after > 0 && len(page) == 0 {
			fail(&RangeError{Thread: thread, After: after})
			return
		}
		full := len(page) == n
		n = nextPage(page, scanFirst)
		if len(page) > 0 && page[0].Pos == after {
			page = page[1:]
		}
		// emit yields page, checking that it continues the log at after+1,
		// and lets go of each event once yielded.
		emit := func(page []Entry) bool {
			for i, e := range page {
				if e.Pos != after+1 {
					fail(&RangeError{Thread: thread, After: after, Trimmed: true})
					return false
				}
				page[i] = Entry{}
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
			if page, err = p.Page(ctx, after+1, n); err != nil {
				fail(err)
				return
			}
			full = len(page) == n
			n = nextPage(page, n)
		}
		for follow {
			page = nil // not held while waiting
			if page, err = p.Wait(ctx, after, n); err != nil {
				fail(err)
				return
			}
			n = nextPage(page, n)
			if !emit(page) {
				return
			}
		}
	}
}
