// Options: what a Consumer can be configured with, and the defaults.

package aguistate

import "log/slog"

// Options configures a [Consumer]. A nil *Options means the defaults. The
// Consumer keeps a copy; changing the struct afterwards has no effect.
type Options struct {
	// Logger receives a record at level Warn for each skipped event, and
	// each event of another protocol version ([ErrProtocolVersion]), with
	// the attributes "event" (its position), "type" and "err". It receives
	// one at level Error for a subscriber that panicked. Default: nil, no
	// logging.
	Logger *slog.Logger

	// ValidateState is called with each candidate state before it is
	// committed: the state that a snapshot, a delta, a run input or a
	// checkpoint would make. An error rejects it. An event is then skipped
	// with a warning wrapping [ErrStateRejected], and the state is marked
	// diverged. StartRun and Restore return the error instead. It runs
	// while writers are locked out, so it must not call Apply, Run or
	// StartRun. Default: nil, no check. The spec's Security Considerations
	// ask applications to validate state; this is one place to do it.
	ValidateState func(state Value) error

	// The limits below bound what a hostile or broken producer can make
	// the Consumer hold or do. Exceeding one is a fatal error wrapping
	// [ErrLimit], and the Consumer stays as it was. A field of 0 or less
	// takes its default.

	// MaxEventSize is the largest event, in bytes of JSON text. Default
	// 16 MiB.
	MaxEventSize int
	// MaxDepth is the deepest nesting of arrays and objects in the state,
	// a message or an interrupt. An event, a run input or a checkpoint may
	// nest three levels more, for the objects around them, so that what a
	// Consumer holds it can send and read back. Default 1000. Parsing never
	// recurses deeper, so 100,000 nested arrays fail cleanly.
	MaxDepth int
	// MaxPatchOps is the most operations in one patch. Default 10,000.
	MaxPatchOps int
	// MaxStateSize is the largest state, in bytes of compact JSON text. It
	// is checked after each operation of a patch, so repeated copies cannot
	// blow memory up. It also bounds the work of one patch, in bytes copied,
	// hashed and compared (at least 1 MiB), so a patch cannot take quadratic
	// time. Default 64 MiB.
	MaxStateSize int
	// MaxMessages is the most messages held. Default 10,000.
	MaxMessages int
	// MaxMessageSize is the largest message, in bytes of compact JSON text
	// (content, tool call arguments and all). It bounds an ACTIVITY_DELTA's
	// work as MaxStateSize bounds a STATE_DELTA's. Default 8 MiB.
	MaxMessageSize int
	// MaxTotalMessageSize is the largest total size of the messages held,
	// in bytes of compact JSON text. Default 64 MiB.
	MaxTotalMessageSize int
	// MaxChunkLanes is the most lanes (subagentRunId values, "" for the
	// parent agent) with an open chunk stream at once. Default 64.
	MaxChunkLanes int
	// MaxScopeSize is the most that a run's open steps, open reasoning
	// spans and subagents may hold, in bytes of JSON text as a checkpoint
	// writes them: each step's name and subagentRunId, each span's
	// messageId and subagentRunId, and each SUBAGENT_STARTED as it came (a
	// run keeps every subagent it started, ended or not, until it ends).
	// Each costs 11 bytes or more, so it bounds their number and memory
	// too: at the default, about 300,000 steps with the shortest distinct
	// names, which hold 23 MiB. Default 4 MiB: an agent that nests a few
	// dozen steps and starts a thousand subagents of a kilobyte each holds
	// a quarter of it.
	MaxScopeSize int
	// MaxGapSize is the most bytes of a stream that [Consumer.Run] and
	// [ReadEvents] read between two events, or before the first, that are
	// no part of an event's text: SSE comments, keep-alives, blank lines
	// and fields other than data; white space between JSON Lines or the
	// elements of a JSON array. A stream then costs what its events cost,
	// however much filler it carries. Default 64 KiB.
	MaxGapSize int
}

// withDefaults returns o with every zero limit set to its default.
func (o Options) withDefaults() Options {
	set := func(v *int, def int) {
		if *v <= 0 {
			*v = def
		}
	}
	set(&o.MaxEventSize, 16<<20)
	set(&o.MaxDepth, 1000)
	set(&o.MaxPatchOps, 10_000)
	set(&o.MaxStateSize, 64<<20)
	set(&o.MaxMessages, 10_000)
	set(&o.MaxMessageSize, 8<<20)
	set(&o.MaxTotalMessageSize, 64<<20)
	set(&o.MaxChunkLanes, 64)
	set(&o.MaxScopeSize, 4<<20)
	set(&o.MaxGapSize, 64<<10)
	return o
}

// stateLimits are the limits on the state and the patches that change it.
func (o *Options) stateLimits() limits {
	return limits{ops: o.MaxPatchOps, size: o.MaxStateSize, depth: o.MaxDepth, work: patchWork(o.MaxStateSize)}
}

// messageLimits are the limits on one message and the patches that change
// an activity message's content.
func (o *Options) messageLimits() limits {
	return limits{ops: o.MaxPatchOps, size: o.MaxMessageSize, depth: o.MaxDepth, work: patchWork(o.MaxMessageSize)}
}

// patchWork is the work budget of one patch on a document of at most size
// bytes, in bytes copied, hashed and compared: size, and at least 1 MiB so
// that small limits leave room for patches of many operations.
func patchWork(size int) int { return max(size, 1<<20) }
