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
	last  int64
	size  func(pos int64) int
	asked []int
}

func (p *sizedPager) Page(_ context.Context, from int64, n int) ([]Entry, error) {
	p.asked = append(p.asked, n)
	var page []Entry
	for pos := max(from, 1); pos <= p.last && len(page) < n; pos++ {
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
			[]int{scanFirst + 1, scanPage, scanPage, scanPage, scanPage}},
		{"events of 512 KiB: two a page", func(int64) int { return 512 << 10 }, 0,
			[]int{scanFirst + 1, 2, 2, 2}},
		{"events of 4 MiB: one a page, from a position", func(int64) int { return 4 << 20 }, 900,
			[]int{scanFirst + 1, 1, 1, 1}},
		{"small, then large: pages shrink", func(pos int64) int {
			if pos > scanFirst+1 {
				return 1 << 20
			}
			return 10
		}, 0, []int{scanFirst + 1, scanPage, 1, 1}},
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
