// Tests of Scan's page sizes: a page holds about scanBytes of events.

package relay

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// sizedPager serves a log of events whose sizes size gives by position,
// and records how many entries each Page asked for.
type sizedPager struct {
	first, last int64 // the log's first position (0 for 1) and its last
	size        func(pos int64) int
	asked       []int
	from        []int64 // where each Page started
}

func (p *sizedPager) Page(_ context.Context, from int64, n int) ([]Entry, error) {
	p.asked = append(p.asked, n)
	p.from = append(p.from, from)
	var page []Entry
	for pos := max(from, p.first, 1); pos <= p.last && len(page) < n; pos++ {
		page = append(page, Entry{Pos: pos, Event: make([]byte, p.size(pos))})
	}
	return page, nil
}

func (p *sizedPager) Wait(ctx context.Context, after int64, n int) ([]Entry, error) {
	return p.Page(ctx, after+1, n)
}

func TestScanPageBytes(t *testing.T) {
	tests := []struct {
		name  string
		size  func(pos int64) int
		after int64
		want  []int // the entries asked for by each Page
	}{
		{"small events: full pages", func(int64) int { return 100 }, 0,
			[]int{scanFirst, scanPage, scanPage, scanPage, scanPage}},
		{"events of 512 KiB: two a page", func(int64) int { return 512 << 10 }, 0,
			[]int{scanFirst, 2, 2, 2}},
		{"events of 4 MiB: one a page, from a position", func(int64) int { return 4 << 20 }, 900,
			[]int{scanFirst, 1, 1, 1}},
		{"small, then large: pages shrink", func(pos int64) int {
			if pos > scanFirst {
				return 1 << 20
			}
			return 10
		}, 0, []int{scanFirst, scanPage, 1, 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := &sizedPager{last: 1000, size: tt.size}
			read := 0
			for _, err := range Scan(context.Background(), "t", tt.after, p, false) {
				require.NoError(t, err)
				if read++; len(p.asked) == len(tt.want) {
					break
				}
			}
			assert.Positive(t, read)
			assert.Equal(t, tt.want, p.asked)
		})
	}
}

// TestScanFirstPage checks where Scan's first pages start: after+1, so
// that the entry at after (which a Last-Event-ID names) is not read back,
// unless that page does not start there or the caller expects the log to
// end at after (readAtEnd); and that it tells the log's end from a trimmed
// log or one that ends before after.
func TestScanFirstPage(t *testing.T) {
	t.Parallel()
	small := func(int64) int { return 10 }
	tests := []struct {
		name, reason string
		first, after int64 // the log runs from first to 1000
		atEnd        bool
		from         []int64 // where each Page started
		read         int
		err          *RangeError
	}{
		{name: "behind", reason: "the entry at after is not read back",
			after: 990, from: []int64{991}, read: 10},
		{name: "at the end", reason: "an empty page is read again from after, which tells the end of the log",
			after: 1000, from: []int64{1001, 1000}},
		{name: "at the end, expected", reason: "readAtEnd reads from after at once",
			after: 1000, atEnd: true, from: []int64{1000}},
		{name: "behind, at the end expected", reason: "readAtEnd reads from after, and goes on",
			after: 990, atEnd: true, from: []int64{990}, read: 10},
		{name: "past the end", reason: "a log that ends before after",
			after: 1001, from: []int64{1002, 1001}, err: &RangeError{Thread: "t", After: 1001}},
		{name: "trimmed", reason: "a page that starts past after+1 is read again from after, and fails",
			first: 995, after: 990, from: []int64{991, 990}, err: &RangeError{Thread: "t", After: 990, Trimmed: true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			p := &sizedPager{first: tt.first, last: 1000, size: small}
			ctx := context.Background()
			if tt.atEnd {
				ctx = readAtEnd(ctx)
			}
			read := 0
			var err error
			for _, err = range Scan(ctx, "t", tt.after, p, false) {
				if err == nil {
					read++
				}
			}
			assert.Equal(t, tt.from, p.from, tt.reason)
			assert.Equal(t, tt.read, read, tt.reason)
			if tt.err == nil {
				assert.NoError(t, err, tt.reason)
				return
			}
			var re *RangeError
			require.ErrorAs(t, err, &re, tt.reason)
			assert.Equal(t, tt.err, re, tt.reason)
		})
	}
}

// TestScanLetsGo checks that Scan keeps no event it has yielded: a reader
// blocked on one event does not keep the ones before it reachable.
func TestScanLetsGo(t *testing.T) {
	var page []Entry
	p := &sizedPager{last: 10, size: func(int64) int { return 8 }}
	pager := pagerFunc(func(ctx context.Context, from int64, n int) ([]Entry, error) {
		var err error
		page, err = p.Page(ctx, from, n)
		return page, err
	})
	i := 0
	for _, err := range Scan(context.Background(), "t", 0, pager, false) {
		require.NoError(t, err)
		for j := range i {
			assert.Nil(t, page[j].Event, "entry %d, yielded, is let go", j)
		}
		i++
	}
	assert.Equal(t, 10, i)
}

// pagerFunc is a Pager whose Page is a function; it never waits.
type pagerFunc func(ctx context.Context, from int64, n int) ([]Entry, error)

func (f pagerFunc) Page(ctx context.Context, from int64, n int) ([]Entry, error) {
	return f(ctx, from, n)
}

func (f pagerFunc) Wait(ctx context.Context, after int64, n int) ([]Entry, error) {
	return f(ctx, after+1, n)
}
