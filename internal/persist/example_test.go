// A runnable example of a Seq with a size measure.

package persist_test

import (
	"fmt"

	"github.com/aguistate/aguistate/internal/persist"
)

// textSize measures strings by their length, as a JSON container measures
// its elements by the size of their text.
type textSize struct{}

func (textSize) Of(s string) int          { return len(s) }
func (textSize) Add(a, b int) int         { return a + b }
func (textSize) Sub(a, b int) (int, bool) { return a - b, true }

type words = persist.Seq[string, int, textSize]

func ExampleSeq() {
	s := persist.SeqOf[string, int, textSize]("to", "be", "or")
	t := s.Insert(nil, 1, "not").Append(nil, "be")
	fmt.Println(s.Len(), s.Summary())
	fmt.Println(t.Len(), t.Summary(), t.At(1))
	// Output:
	// 3 6
	// 5 11 not
}

func ExampleOwner() {
	var s words
	o := persist.NewOwner()
	for _, w := range []string{"a", "batch", "copies", "each", "node", "once"} {
		s = s.Append(o, w) // changes in place what this batch made
	}
	o.Seal() // s is immutable from here on
	u := s.Set(nil, 0, "one")
	fmt.Println(s.At(0), u.At(0), u.Summary())
	// Output: a one 26
}

func ExampleMap_InsertAfter() {
	var msgs persist.Map[string, int, entryNoSize]
	msgs = msgs.Set(nil, "user-1", "hello")
	msgs = msgs.Set(nil, "assistant-1", "calling a tool")
	msgs = msgs.Set(nil, "user-2", "and?")
	msgs, _ = msgs.InsertAfter(nil, "assistant-1", "tool-1", "result")
	for id, text := range msgs.All() {
		fmt.Println(id, text)
	}
	fmt.Println(msgs.Index("user-2"))
	// Output:
	// user-1 hello
	// assistant-1 calling a tool
	// tool-1 result
	// user-2 and?
	// 3
}

type entryNoSize struct{}

func (entryNoSize) Of(persist.Entry[string]) int { return 0 }
func (entryNoSize) Add(a, b int) int             { return 0 }
func (entryNoSize) Sub(a, b int) (int, bool)     { return 0, true }
