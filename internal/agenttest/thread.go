// LargeThread: the thread the prelude and relay benchmarks measure.

package agenttest

import (
	"fmt"
	"strings"
)

// LargeThread returns the JSON text of a state of about 1 MB (1,000 items
// of about 1 KB each) and of 1,000 messages, users and assistants in turn,
// of about 150 bytes of text each.
func LargeThread() (state, messages string) {
	var s, m strings.Builder
	s.WriteString(`{"items":[`)
	for i := range 1000 {
		if i > 0 {
			s.WriteByte(',')
		}
		fmt.Fprintf(&s, `{"id":%d,"title":"item %d","done":false,"notes":%q}`, i, i, strings.Repeat("note ", 190))
	}
	s.WriteString(`]}`)
	m.WriteByte('[')
	for i := range 1000 {
		if i > 0 {
			m.WriteByte(',')
		}
		role := "user"
		if i%2 == 1 {
			role = "assistant"
		}
		fmt.Fprintf(&m, `{"id":"m%d","role":%q,"content":%q}`, i, role, strings.Repeat("word ", 30))
	}
	m.WriteByte(']')
	return s.String(), m.String()
}
