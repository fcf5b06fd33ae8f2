// How deep the containers of an event are packed: as small JSON text, the
// way a thread holds them (internal/jsonv, packed.go).

package aguistate

import "bytes"

// packDepth returns the least depth at which the parse of an event packs
// its small containers. What an event carries from depth 3 on (a
// snapshot's members, a message of a list) is what a thread holds, and is
// packed; the event and its members are read at once, and are not. A
// delta's operations (depth 3) are read at once too: an event whose type,
// written first, is a delta packs from depth 4, the operations' values.
// Only the cost depends on the answer, never the result.
func packDepth(event []byte) int {
	head := event[:min(len(event), 40)]
	if bytes.Contains(head, []byte(`_DELTA"`)) {
		return 4
	}
	return 3
}
