// Fuzz targets that drive Seq and Map with random edits and compare them with slices.

package persist

import (
	"fmt"
	"slices"
	"testing"
)

// opReader reads a fuzz input as a stream of small numbers.
type opReader struct{ data []byte }

func (r *opReader) next(n int) int {
	if len(r.data) < 2 {
		return 0
	}
	v := int(r.data[0])<<8 | int(r.data[1])
	r.data = r.data[2:]
	return v % max(n, 1)
}

// FuzzSeq runs the edits an input describes on a Seq and on a slice, in
// batches and persistently, and checks that they agree and that the Seq
// published before each batch is unchanged.
func FuzzSeq(f *testing.F) {
	f.Add([]byte{0, 70, 0, 0, 0, 5, 1, 0, 0, 3})
	f.Add([]byte{1, 0, 4, 0, 0, 1, 0, 7, 0, 2, 0, 9, 0, 2, 0, 1})
	f.Fuzz(func(t *testing.T, data []byte) {
		r := &opReader{data}
		model := seqRange(r.next(2000))
		s := SeqOf[int, stat, statOf](slices.Clone(model)...)
		pub, pubModel := s, slices.Clone(model)
		var o *Owner
		for len(r.data) >= 2 {
			n := len(model)
			switch op := r.next(6); {
			case op == 0:
				if o != nil {
					o.Seal()
				}
				checkSeq(t, pub, pubModel)
				pub, pubModel = s, slices.Clone(model)
				o = nil
				if r.next(2) == 1 {
					o = NewOwner()
				}
			case op == 1 || n == 0:
				i, v := r.next(n+1), r.next(100)
				s = s.Insert(o, i, v)
				model = slices.Insert(model, i, v)
			case op == 2:
				i := r.next(n)
				var old int
				s, old = s.Delete(o, i)
				if old != model[i] {
					t.Fatalf("Delete(%d) returned %d, want %d", i, old, model[i])
				}
				model = slices.Delete(model, i, i+1)
			case op == 3:
				i, v := r.next(n), r.next(100)
				s = s.Set(o, i, v)
				model[i] = v
			case op == 4:
				v := r.next(100)
				s = s.Append(o, v)
				model = append(model, v)
			default:
				for range r.next(300) {
					s, _ = s.Delete(o, 0)
					model = model[1:]
					if len(model) == 0 {
						break
					}
				}
			}
		}
		checkSeq(t, s, model)
		checkSeq(t, pub, pubModel)
	})
}

// FuzzMap is FuzzSeq for a Map, with keys from a small pool so that inputs
// hit held keys often.
func FuzzMap(f *testing.F) {
	f.Add([]byte{0, 70, 0, 1, 0, 5, 0, 1, 0, 3, 0, 2, 0, 5})
	f.Add([]byte{1, 0, 0, 3, 0, 1, 0, 7, 0, 4, 0, 9, 0, 5, 0, 1})
	f.Fuzz(func(t *testing.T, data []byte) {
		r := &opReader{data}
		model := entries(r.next(1000))
		m, _ := MapOf[int, stat, entryStat](slices.Clone(model)...)
		pub, pubModel := m, slices.Clone(model)
		var o *Owner
		pos := func(key string) int {
			return slices.IndexFunc(model, func(e Entry[int]) bool { return e.Key == key })
		}
		for len(r.data) >= 2 {
			n := len(model)
			key := fmt.Sprintf("k%d", r.next(1500))
			at := pos(key)
			var ok bool
			switch op := r.next(7); {
			case op == 0:
				if o != nil {
					o.Seal()
				}
				checkMap(t, pub, pubModel)
				pub, pubModel = m, slices.Clone(model)
				o = nil
				if r.next(2) == 1 {
					o = NewOwner()
				}
			case op == 1 || n == 0:
				v := r.next(100)
				m = m.Set(o, key, v)
				if at >= 0 {
					model[at].Value = v
				} else {
					model = append(model, Entry[int]{key, v})
				}
			case op == 2:
				i := r.next(n + 1)
				if m, ok = m.Insert(o, i, key, 1); ok != (at < 0) {
					t.Fatalf("Insert(%q) reported %v", key, ok)
				}
				if ok {
					model = slices.Insert(model, i, Entry[int]{key, 1})
				}
			case op == 3:
				after := model[r.next(n)].Key
				if m, ok = m.InsertAfter(o, after, key, 2); ok != (at < 0) {
					t.Fatalf("InsertAfter(%q, %q) reported %v", after, key, ok)
				}
				if ok {
					model = slices.Insert(model, pos(after)+1, Entry[int]{key, 2})
				}
			case op == 4:
				if m, _, ok = m.Delete(o, key); ok != (at >= 0) {
					t.Fatalf("Delete(%q) reported %v", key, ok)
				}
				if ok {
					model = slices.Delete(model, at, at+1)
				}
			case op == 5:
				i := r.next(n)
				m, _, _ = m.DeleteAt(o, i)
				model = slices.Delete(model, i, i+1)
			default:
				for range r.next(300) {
					m, _, _ = m.DeleteAt(o, len(model)-1)
					if model = model[:len(model)-1]; len(model) == 0 {
						break
					}
				}
			}
		}
		checkMap(t, m, model)
		checkMap(t, pub, pubModel)
	})
}
