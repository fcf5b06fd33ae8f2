// Benchmarks of the sequence and map edits at sizes up to a million items.

package persist

import (
	"fmt"
	"runtime"
	"testing"
)

// item stands for a JSON value: what its text costs and how deep it is.
type item struct {
	size  int
	depth int32
}

// jsum is the summary of JSON text: total size, and the greatest depth with
// how many elements reach it.
type jsum struct {
	size        int
	depth, deep int32
}

type jsonish struct{}

func (jsonish) Of(v *item) jsum { return jsum{v.size, v.depth, 1} }

func (jsonish) Add(a, b jsum) jsum {
	switch {
	case a.deep == 0 || b.depth > a.depth:
		return jsum{a.size + b.size, b.depth, b.deep}
	case b.depth == a.depth:
		return jsum{a.size + b.size, a.depth, a.deep + b.deep}
	}
	return jsum{a.size + b.size, a.depth, a.deep}
}

func (jsonish) Sub(a, b jsum) (jsum, bool) {
	a.size -= b.size
	if b.deep > 0 && b.depth == a.depth {
		if a.deep -= b.deep; a.deep <= 0 {
			return jsum{}, false
		}
	}
	return a, true
}

type members struct{}

func (members) Of(v Entry[*item]) jsum {
	return jsum{len(v.Key) + 3 + v.Value.size, v.Value.depth, 1}
}
func (members) Add(a, b jsum) jsum         { return jsonish{}.Add(a, b) }
func (members) Sub(a, b jsum) (jsum, bool) { return jsonish{}.Sub(a, b) }

type (
	jarray  = Seq[*item, jsum, jsonish]
	jobject = Map[*item, jsum, members]
)

var (
	benchSizes = []int{100, 10_000, 200_000}
	elem       = &item{size: 1}
	sinkItem   *item
	sinkSeq    jarray
	sinkMap    jobject
)

func benchArray(n int) jarray {
	items := make([]*item, n)
	for i := range items {
		items[i] = &item{size: 1 + i%7, depth: int32(i % 3)}
	}
	return SeqOf[*item, jsum, jsonish](items...)
}

func benchKeys(n int) []string {
	keys := make([]string, n)
	for i := range keys {
		keys[i] = fmt.Sprintf("member-%d", i)
	}
	return keys
}

func benchObject(keys []string) jobject {
	es := make([]Entry[*item], len(keys))
	for i, k := range keys {
		es[i] = Entry[*item]{k, &item{size: 1 + i%7}}
	}
	m, _ := MapOf[*item, jsum, members](es...)
	return m
}

// BenchmarkSeq measures one persistent edit or read of an array at each
// size; "batch" edits run in one batch, as a patch of many operations does.
func BenchmarkSeq(b *testing.B) {
	for _, n := range benchSizes {
		s := benchArray(n)
		mid := n / 2
		b.Run(fmt.Sprintf("n=%d/get", n), func(b *testing.B) {
			i := 0
			for b.Loop() {
				sinkItem = s.At(i)
				i = (i + 7919) % n
			}
		})
		b.Run(fmt.Sprintf("n=%d/set", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				sinkSeq = s.Set(nil, mid, elem)
			}
		})
		b.Run(fmt.Sprintf("n=%d/insert-middle", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				sinkSeq = s.Insert(nil, mid, elem)
			}
		})
		b.Run(fmt.Sprintf("n=%d/insert-first", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				sinkSeq = s.Insert(nil, 0, elem)
			}
		})
		b.Run(fmt.Sprintf("n=%d/delete-middle", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				sinkSeq, _ = s.Delete(nil, mid)
			}
		})
		b.Run(fmt.Sprintf("n=%d/append", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				sinkSeq = s.Append(nil, elem)
			}
		})
		b.Run(fmt.Sprintf("n=%d/batch-set", n), func(b *testing.B) {
			b.ReportAllocs()
			o := NewOwner()
			t, i := s, 0
			for b.Loop() {
				t = t.Set(o, i, elem)
				i = (i + 7919) % n
			}
		})
		b.Run(fmt.Sprintf("n=%d/iterate", n), func(b *testing.B) {
			for b.Loop() {
				for _, v := range s.All() {
					sinkItem = v
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/elem")
		})
	}
}

// BenchmarkMap measures one persistent edit or read of an object at each
// size.
func BenchmarkMap(b *testing.B) {
	for _, n := range benchSizes {
		keys := benchKeys(n)
		m := benchObject(keys)
		midKey := keys[n/2]
		b.Run(fmt.Sprintf("n=%d/lookup", n), func(b *testing.B) {
			i := 0
			for b.Loop() {
				sinkItem, _ = m.Get(keys[i])
				i = (i + 7919) % n
			}
		})
		b.Run(fmt.Sprintf("n=%d/index", n), func(b *testing.B) {
			i := 0
			for b.Loop() {
				_ = m.Index(keys[i])
				i = (i + 7919) % n
			}
		})
		b.Run(fmt.Sprintf("n=%d/get-at", n), func(b *testing.B) {
			for b.Loop() {
				_, sinkItem = m.At(n / 2)
			}
		})
		b.Run(fmt.Sprintf("n=%d/set", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				sinkMap = m.Set(nil, midKey, elem)
			}
		})
		b.Run(fmt.Sprintf("n=%d/add", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				sinkMap = m.Set(nil, "a new member", elem)
			}
		})
		b.Run(fmt.Sprintf("n=%d/insert-after-middle", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				sinkMap, _ = m.InsertAfter(nil, midKey, "a new member", elem)
			}
		})
		b.Run(fmt.Sprintf("n=%d/delete", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				sinkMap, _, _ = m.Delete(nil, midKey)
			}
		})
		b.Run(fmt.Sprintf("n=%d/add-steady", n), func(b *testing.B) {
			// Persistent adds, each to the result of the last: the leaf
			// splits and their index updates are spread over the adds.
			b.ReportAllocs()
			t, i := m, 0
			for b.Loop() {
				t = t.Set(nil, keys[i]+"+", elem)
				if i++; i == n {
					t, i = m, 0
				}
			}
		})
		b.Run(fmt.Sprintf("n=%d/batch-add-delete", n), func(b *testing.B) {
			b.ReportAllocs()
			o := NewOwner()
			t, i := m, 0
			for b.Loop() {
				t, _, _ = t.Delete(o, keys[i])
				t = t.Set(o, keys[i], elem)
				i = (i + 7919) % n
			}
		})
	}
}

// heapAfter returns the live heap after building what keep holds.
func liveHeap() uint64 {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

// BenchmarkMemory reports the live heap per element of arrays and objects
// of n entries, against []any and map[string]any built the way
// encoding/json builds them (append, and insert with no size hint). The
// elements and key texts are shared and not counted: only what holds them
// is. Containers are built until they hold a million entries in all.
func BenchmarkMemory(b *testing.B) {
	for _, n := range []int{10, 100, 1000, 10_000, 100_000, 1_000_000} {
		copies := max(1, 1_000_000/n)
		keys := benchKeys(n)
		items := make([]*item, n)
		for i := range items {
			items[i] = elem
		}
		for _, c := range []struct {
			name  string
			build func() any
		}{
			{"Seq", func() any { return SeqOf[*item, jsum, jsonish](append([]*item(nil), items...)...) }},
			{"Seq-appended", func() any {
				var s jarray
				o := NewOwner()
				for _, v := range items {
					s = s.Append(o, v)
				}
				return &s
			}},
			{"slice-any", func() any {
				var a []any
				for _, v := range items {
					a = append(a, v)
				}
				return a
			}},
			{"Map", func() any {
				es := make([]Entry[*item], n)
				for i, k := range keys {
					es[i] = Entry[*item]{k, elem}
				}
				m, _ := MapOf[*item, jsum, members](es...)
				return &m
			}},
			{"Map-appended", func() any {
				var m jobject
				o := NewOwner()
				for _, k := range keys {
					m = m.Set(o, k, elem)
				}
				return &m
			}},
			{"map-any", func() any {
				m := map[string]any{}
				for _, k := range keys {
					m[k] = elem
				}
				return m
			}},
		} {
			b.Run(fmt.Sprintf("%s/n=%d", c.name, n), func(b *testing.B) {
				var perEntry float64
				for b.Loop() {
					held := make([]any, copies)
					before := liveHeap()
					for i := range held {
						held[i] = c.build()
					}
					after := liveHeap()
					perEntry = (float64(after) - float64(before)) / float64(copies*n)
					runtime.KeepAlive(held)
				}
				b.ReportMetric(perEntry, "B/entry")
			})
		}
	}
}
