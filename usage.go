// Token usage: the "usage" of RUN_FINISHED and RUN_ERROR, read typed.

package aguistate

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/aguistate/aguistate/internal/jsonv"
)

// Usage is the token usage of one provider and model in a run (AG-UI 1.0
// TokenUsage), one entry of the "usage" of RUN_FINISHED or RUN_ERROR. A
// run that called several models has an entry for each; a run's usage
// covers its own model calls, its subagents' included, and not those of
// the run it resumes.
//
// InputTokens and OutputTokens are totals; ReasoningTokens is a part of
// OutputTokens, CachedInputTokens (read from a provider's cache) and
// CacheWriteInputTokens (written to it) are parts of InputTokens, never
// additions; TotalTokens is InputTokens plus OutputTokens. A count the
// producer did not report reads as 0: Value tells an absent count from 0.
type Usage struct {
	Provider string // "provider", such as "openai", or ""
	Model    string // "model", or ""

	InputTokens           int64
	OutputTokens          int64
	TotalTokens           int64
	ReasoningTokens       int64
	CachedInputTokens     int64
	CacheWriteInputTokens int64

	// Value is the entry as sent, with any member this package does not
	// know.
	Value Value
}

// usageCounts names the counts of a TokenUsage entry, in Usage's order.
var usageCounts = [...]string{"inputTokens", "outputTokens", "totalTokens", "reasoningTokens", "cachedInputTokens", "cacheWriteInputTokens"}

// maxCount is the largest count, as the AG-UI schema bounds it: the
// largest integer that a JSON number keeps exactly in JavaScript.
const maxCount = 1<<53 - 1

// readUsage reads the optional "usage" of a RUN_FINISHED or RUN_ERROR
// event: an array of objects whose "provider" and "model" are strings and
// whose counts are integers from 0 to 2^53-1 (a number of any spelling
// whose value is one, such as 12.0). Other members are kept. It returns
// nil when there is none, and an error wrapping ErrMalformedEvent for one
// that is not, as the reference client's schema check refuses it.
func readUsage(ev *jsonv.Node) ([]Usage, error) {
	f := eventFields(ev)
	list := f.opt("usage", jsonv.Array)
	if f.err != nil || list == nil {
		return nil, f.err
	}
	out := make([]Usage, 0, list.Len())
	for i := range list.Len() {
		n := list.Elem(i)
		if n.Kind() != jsonv.Object {
			return nil, fmt.Errorf("%w: usage %d is %s, not an object", ErrMalformedEvent, i, n.Kind().Phrase())
		}
		e := eventFields(n)
		u := Usage{Value: valueOf(n)}
		u.Provider, _ = e.optStr("provider")
		u.Model, _ = e.optStr("model")
		counts := [...]*int64{&u.InputTokens, &u.OutputTokens, &u.TotalTokens, &u.ReasoningTokens, &u.CachedInputTokens, &u.CacheWriteInputTokens}
		for j, name := range usageCounts {
			c := e.opt(name, jsonv.Number)
			if c == nil {
				continue
			}
			if !readCount(c, counts[j]) {
				e.fail("%q is %s, not a count of tokens (an integer from 0 to 2^53-1)", name, jsonv.Quote(c.Text()))
			}
		}
		if e.err != nil {
			return nil, fmt.Errorf("%w (in usage %d)", e.err, i)
		}
		out = append(out, u)
	}
	return out, nil
}

// readCount reads a count of tokens, an integer from 0 to maxCount by
// exact value, into dst, and reports whether c is one. A literal of
// digits only is read as it is; another spelling (1.5e3, 25419.0) goes
// through [Value.Decode], which keeps the exact value.
func readCount(c *jsonv.Node, dst *int64) bool {
	lit := c.Text()
	if len(lit) <= 16 && strings.Trim(lit, "0123456789") == "" {
		n, err := strconv.ParseInt(lit, 10, 64)
		*dst = n
		return err == nil && n <= maxCount
	}
	err := valueOf(c).Decode("", dst)
	return err == nil && *dst >= 0 && *dst <= maxCount
}
