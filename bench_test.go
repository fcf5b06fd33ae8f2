// Benchmarks: a one-operation delta on states of 1 KB to 10 MB (against
// evanphx), and text streamed in small pieces.

package aguistate

import (
	"fmt"
	"strings"
	"testing"

	jsonpatch "github.com/evanphx/json-patch/v5"
)

// benchState returns a state of about size bytes shaped like an agent's
// working document: a few metadata members and a list of sections, each
// holding 32 small task items. Sections grow with the size, so a 10 MB
// state has about 3,000 of them.
func benchState(size int) string {
	var b strings.Builder
	b.WriteString(`{"meta":{"title":"Plan","version":3,"owner":"agent"},"sections":[`)
	for s := 0; b.Len() < size; s++ {
		if s > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"id":"s%d","title":"Section %d","items":[`, s, s)
		for i := 0; i < 32; i++ {
			if i > 0 {
				b.WriteByte(',')
			}
			fmt.Fprintf(&b, `{"id":"s%d-%d","name":"Task %d of section %d","done":false,"tags":["a","b"],"weight":%d.5}`, s, i, i, s, i)
		}
		b.WriteString(`]}`)
	}
	b.WriteString(`]}`)
	return b.String()
}

var benchSizes = []struct {
	name string
	size int
}{
	{"1KB", 1 << 10}, {"100KB", 100 << 10}, {"1MB", 1 << 20}, {"10MB", 10 << 20},
}

// BenchmarkApply measures one STATE_DELTA event with one operation, from
// its JSON text to the published state, on states of each size. The
// operation replaces one item's "done" in the middle section; its cost must
// not grow with the rest of the state.
func BenchmarkApply(b *testing.B) {
	for _, sz := range benchSizes {
		b.Run(sz.name, func(b *testing.B) {
			state := benchState(sz.size)
			c := New(nil)
			if err := c.Apply([]byte(`{"type":"STATE_SNAPSHOT","snapshot":` + state + `}`)); err != nil {
				b.Fatal(err)
			}
			mid := c.State().node().Get("sections").Len() / 2
			events := [2][]byte{}
			for i, v := range []string{"true", "false"} {
				events[i] = []byte(fmt.Sprintf(`{"type":"STATE_DELTA","delta":[{"op":"replace","path":"/sections/%d/items/7/done","value":%s}]}`, mid, v))
			}
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; b.Loop(); i++ {
				if err := c.Apply(events[i&1]); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkApplyEvanphx measures the same patch with evanphx/json-patch,
// which re-reads and re-writes the whole document on each apply.
func BenchmarkApplyEvanphx(b *testing.B) {
	for _, sz := range benchSizes {
		b.Run(sz.name, func(b *testing.B) {
			doc := []byte(benchState(sz.size))
			p, err := jsonpatch.DecodePatch([]byte(`[{"op":"replace","path":"/sections/0/items/7/done","value":true}]`))
			if err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			for b.Loop() {
				if _, err := p.Apply(doc); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkStreamText streams one assistant message of about 256 KB in
// 4-byte TEXT_MESSAGE_CONTENT events. Each event costs its own length, not
// the message's: ns/op is per event, and must not grow with the text.
func BenchmarkStreamText(b *testing.B) {
	for _, n := range []int{1 << 10, 1 << 16} {
		b.Run(fmt.Sprintf("events=%d", n), func(b *testing.B) {
			event := []byte(`{"type":"TEXT_MESSAGE_CONTENT","messageId":"m","delta":"abcd"}`)
			b.ReportAllocs()
			for b.Loop() {
				b.StopTimer()
				c := New(nil)
				if err := c.Apply([]byte(`{"type":"TEXT_MESSAGE_START","messageId":"m","role":"assistant"}`)); err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
				for range n {
					if err := c.Apply(event); err != nil {
						b.Fatal(err)
					}
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/event")
		})
	}
}
