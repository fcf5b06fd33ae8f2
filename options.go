package aguistate

import "log/slog"

// Options configures a [Consumer]. A nil *Options means the defaults. The
// Consumer copies the struct; changing it afterwards has no effect.
type Options struct {
	// Logger, when not nil, receives one record at level Warn for every
	// skipped event, with the attributes "event" (position, from 1), "type"
	// and "err", and one at level Error for a subscriber that panicked.
	// Default: nil, no logging.
	Logger *slog.Logger

	// ValidateState, when not nil, is called with every candidate state
	// before it is committed: the state a STATE_SNAPSHOT, a STATE_DELTA or a
	// run input would make. When it returns an error the event is treated as
	// a patch that fails to apply: skipped, reported as a warning wrapping
	// ErrStateRejected and the error, and the state marked diverged; for
	// [Consumer.StartRun] the error is returned. It runs while the Consumer
	// is locked against writers, so it must not call Apply, Run or
	// StartRun. Default: nil, no check. The spec's Security Considerations
	// require applications to validate what they read out of state; this is
	// one place to do it.
	ValidateState func(state Value) error

	// Limits against hostile or broken producers. Exceeding any of them is
	// a fatal error wrapping ErrLimit, and the Consumer stays as it was. A
	// zero field takes its default; every field's range is 0 to the
	// largest int.

	// MaxEventSize is the largest event, in bytes of JSON text. Default
	// 16 MiB.
	MaxEventSize int
	// MaxDepth is the deepest nesting of arrays and objects in an event, in
	// the state, and in a message. Default 1000; parsing never recurses
	// deeper, so 100,000 nested arrays fail cleanly.
	MaxDepth int
	// MaxPatchOps is the largest number of operations in one patch.
	// Default 10,000.
	MaxPatchOps int
	// MaxStateSize is the largest state, in bytes of compact JSON text,
	// checked after every operation of a patch, so that repeated copy
	// operations cannot blow memory up. It also bounds the work of one
	// patch: the members and elements it moves or copies in all (each
	// operation costs about the width of the containers it changes), so
	// that a patch of legal size cannot take quadratic time. Default
	// 64 MiB.
	MaxStateSize int
	// MaxMessages is the largest number of messages held. Default 10,000.
	MaxMessages int
	// MaxMessageSize is the largest message, in bytes of compact JSON text:
	// its content text, tool call arguments and other members together. It
	// bounds an ACTIVITY_DELTA's work as MaxStateSize does a STATE_DELTA's.
	// Default 8 MiB.
	MaxMessageSize int
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
	return o
}

// stateLimits are the limits on the state and the patches that change it.
func (o *Options) stateLimits() limits {
	return limits{ops: o.MaxPatchOps, size: o.MaxStateSize, depth: o.MaxDepth, work: o.MaxStateSize}
}

// messageLimits are the limits on one message and the patches that change
// an activity message's content.
func (o *Options) messageLimits() limits {
	return limits{ops: o.MaxPatchOps, size: o.MaxMessageSize, depth: o.MaxDepth, work: o.MaxMessageSize}
}
