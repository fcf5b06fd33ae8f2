// Tests of the Pieces of a Change: starts, text and ends of messages and
// tool calls as they stream, chunk streams included.

package aguistate

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// pieceString writes p as `[start ]MESSAGE[/CALL(NAME)] ROLE[ "TEXT"][ end]`.
func pieceString(p Piece) string {
	var b strings.Builder
	if p.Start {
		b.WriteString("start ")
	}
	b.WriteString(p.MessageID)
	if p.ToolCallID != "" {
		b.WriteString("/" + p.ToolCallID + "(" + p.ToolName + ")")
	}
	b.WriteString(" " + p.Role)
	if p.Text != "" {
		b.WriteString(" " + strconv.Quote(p.Text))
	}
	if p.End {
		b.WriteString(" end")
	}
	return b.String()
}

// piecesOf applies events to a new Consumer and returns, for each event,
// the pieces of its Change.
func piecesOf(t *testing.T, events []string) [][]string {
	t.Helper()
	c := New(nil)
	var got [][]string
	c.Subscribe(func(ch Change) {
		var ps []string
		for _, p := range ch.Pieces {
			ps = append(ps, pieceString(p))
		}
		got = append(got, ps)
	})
	for i, ev := range events {
		require.NoError(t, c.Apply([]byte(ev)), "event %d", i+1)
	}
	return got
}

func TestPieces(t *testing.T) {
	t.Parallel()
	const started = `{"type":"RUN_STARTED","threadId":"t","runId":"r"}`
	const finished = `{"type":"RUN_FINISHED","threadId":"t","runId":"r"}`
	tests := []struct {
		name   string
		events []string
		want   [][]string // per event
		reason string
	}{
		{"text message", []string{
			started,
			`{"type":"TEXT_MESSAGE_START","messageId":"m1","role":"assistant"}`,
			`{"type":"TEXT_MESSAGE_CONTENT","messageId":"m1","delta":"Hel"}`,
			`{"type":"TEXT_MESSAGE_CONTENT","messageId":"m1","delta":"lo"}`,
			`{"type":"TEXT_MESSAGE_END","messageId":"m1"}`,
			finished,
		}, [][]string{nil, {"start m1 assistant"}, {`m1 assistant "Hel"`}, {`m1 assistant "lo"`}, {"m1 assistant end"}, nil},
			"START, CONTENT and END, each its piece"},
		{"chunks only, as Mastra sends them", []string{
			started,
			`{"type":"TEXT_MESSAGE_CHUNK","messageId":"m1","delta":"Hel"}`,
			`{"type":"TEXT_MESSAGE_CHUNK","delta":"lo"}`,
			`{"type":"TEXT_MESSAGE_CHUNK","messageId":"m2","delta":"Bye"}`,
			finished,
		}, [][]string{nil, {`start m1 assistant "Hel"`}, {`m1 assistant "lo"`}, {"m1 assistant end", `start m2 assistant "Bye"`}, {"m2 assistant end"}},
			"a chunk stream starts with its first chunk and ends with the next stream or the run, as the reference's chunk expansion ends it"},
		{"a chunk stream ended by another event", []string{
			`{"type":"TEXT_MESSAGE_CHUNK","messageId":"m1","delta":"a"}`,
			`{"type":"STATE_DELTA","delta":[]}`,
			`{"type":"TEXT_MESSAGE_CHUNK","messageId":"m1","delta":"b"}`,
			`{"type":"CUSTOM","name":"n","value":1}`,
		}, [][]string{{`start m1 assistant "a"`}, {"m1 assistant end"}, {`start m1 assistant "b"`}, {"m1 assistant end"}},
			"a chunk that goes on with the message after its stream ended starts it again"},
		{"tool call", []string{
			started,
			`{"type":"TOOL_CALL_START","toolCallId":"c1","toolCallName":"get_weather","parentMessageId":"a1"}`,
			`{"type":"TOOL_CALL_ARGS","toolCallId":"c1","delta":"{\"city\":"}`,
			`{"type":"TOOL_CALL_ARGS","toolCallId":"c1","delta":"\"Rome\"}"}`,
			`{"type":"TOOL_CALL_END","toolCallId":"c1"}`,
		}, [][]string{nil, {"start a1/c1(get_weather) assistant"}, {`a1/c1(get_weather) assistant "{\"city\":"`},
			{`a1/c1(get_weather) assistant "\"Rome\"}"`}, {"a1/c1(get_weather) assistant end"}},
			"a tool call names the message that holds it"},
		{"tool call chunks after text chunks", []string{
			`{"type":"TEXT_MESSAGE_CHUNK","messageId":"a1","delta":"Let me look."}`,
			`{"type":"TOOL_CALL_CHUNK","toolCallId":"c1","toolCallName":"f","parentMessageId":"a1","delta":"{}"}`,
			finished,
		}, [][]string{{`start a1 assistant "Let me look."`}, {"a1 assistant end", `start a1/c1(f) assistant "{}"`}, {"a1/c1(f) assistant end"}},
			"a tool call chunk ends the lane's text stream"},
		{"reasoning and other roles", []string{
			`{"type":"REASONING_MESSAGE_START","messageId":"r1","role":"reasoning"}`,
			`{"type":"REASONING_MESSAGE_CONTENT","messageId":"r1","delta":"hmm"}`,
			`{"type":"TEXT_MESSAGE_START","messageId":"u1","role":"user"}`,
			`{"type":"TEXT_MESSAGE_CONTENT","messageId":"u1","delta":"hi"}`,
		}, [][]string{{"start r1 reasoning"}, {`r1 reasoning "hmm"`}, {"start u1 user"}, {`u1 user "hi"`}},
			"every role, with its role"},
		{"run boundaries end what streams", []string{
			`{"type":"TEXT_MESSAGE_START","messageId":"m1"}`,
			`{"type":"TOOL_CALL_START","toolCallId":"c1","toolCallName":"f"}`,
			`{"type":"TEXT_MESSAGE_CHUNK","messageId":"m2","delta":"x"}`,
			started,
		}, [][]string{{"start m1 assistant"}, {"start c1/c1(f) assistant"}, {`start m2 assistant "x"`}, {"m2 assistant end", "m1 assistant end", "c1/c1(f) assistant end"}},
			"RUN_STARTED ends every message and tool call still streaming, each once"},
		{"a snapshot that drops a streaming message", []string{
			`{"type":"TEXT_MESSAGE_START","messageId":"m1"}`,
			`{"type":"MESSAGES_SNAPSHOT","messages":[]}`,
		}, [][]string{{"start m1 assistant"}, {"m1 assistant end"}},
			"the message ends where it is dropped, with the role it had"},
		{"a chunk that goes on with a started message", []string{
			`{"type":"TEXT_MESSAGE_START","messageId":"m1"}`,
			`{"type":"TEXT_MESSAGE_CHUNK","messageId":"m1","delta":"a"}`,
			`{"type":"STATE_DELTA","delta":[]}`,
			`{"type":"TEXT_MESSAGE_END","messageId":"m1"}`,
		}, [][]string{{"start m1 assistant"}, {`m1 assistant "a"`}, {"m1 assistant end"}, nil},
			"it streams until its chunk stream ends: one start, one end"},
		{"skipped events", []string{
			`{"type":"TEXT_MESSAGE_CONTENT","messageId":"m1","delta":"a"}`,
			`{"type":"TEXT_MESSAGE_START","messageId":"m1"}`,
			`{"type":"TEXT_MESSAGE_CONTENT","messageId":"m1","delta":"b"}`,
			`{"type":"TEXT_MESSAGE_END","messageId":"m1"}`,
			`{"type":"TEXT_MESSAGE_START","messageId":"m1"}`,
			`{"type":"TEXT_MESSAGE_CONTENT","messageId":"m1","delta":"c"}`,
		}, [][]string{nil, {"start m1 assistant"}, {`m1 assistant "b"`}, {"m1 assistant end"}, nil, nil},
			"a skipped event has no piece"},
		{"an empty delta", []string{
			`{"type":"TEXT_MESSAGE_START","messageId":"m1"}`,
			`{"type":"TEXT_MESSAGE_CONTENT","messageId":"m1","delta":""}`,
		}, [][]string{{"start m1 assistant"}, nil},
			"nothing appended, nothing to say"},
		{"a surrogate pair split between pieces", []string{
			`{"type":"TEXT_MESSAGE_START","messageId":"m1"}`,
			`{"type":"TEXT_MESSAGE_CONTENT","messageId":"m1","delta":"a\ud83d"}`,
			`{"type":"TEXT_MESSAGE_CONTENT","messageId":"m1","delta":"\ude00b"}`,
			`{"type":"TEXT_MESSAGE_CONTENT","messageId":"m1","delta":"\ud83d"}`,
			`{"type":"TEXT_MESSAGE_CONTENT","messageId":"m1","delta":"c"}`,
		}, [][]string{{"start m1 assistant"}, {`m1 assistant "a"`}, {`m1 assistant "😀b"`}, nil, {`m1 assistant "\xed\xa0\xbdc"`}},
			"the high half waits for the next piece: joined, it is one character; alone, it is text"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			assert.Equal(t, tt.want, piecesOf(t, tt.events), tt.reason)
		})
	}
}

// TestPiecesJoinToTheText checks, over every recorded stream, that the
// pieces of each message and tool call pair their starts and ends and
// join to its text as the Consumer holds it when it ends.
func TestPiecesJoinToTheText(t *testing.T) {
	t.Parallel()
	for _, s := range joinStreams(t) {
		t.Run(s.name, func(t *testing.T) {
			c := New(nil)
			text := map[string]*strings.Builder{}
			open := map[string]bool{}
			checked := 0
			c.Subscribe(func(ch Change) {
				for _, p := range ch.Pieces {
					key := p.MessageID + "/" + p.ToolCallID
					if p.Start {
						assert.False(t, open[key], "%s starts once before it ends", key)
						open[key] = true
						if text[key] == nil {
							text[key] = &strings.Builder{}
						}
					}
					require.True(t, open[key], "%s streams only between its start and its end: %+v", key, p)
					text[key].WriteString(p.Text)
					if p.End {
						open[key] = false
						if m, ok := c.Message(p.MessageID); ok {
							assert.Equal(t, streamedText(m, p.ToolCallID), text[key].String(), "the pieces of %s join to its text", key)
							checked++
						}
					}
				}
			})
			for _, ev := range s.events {
				if c.Apply([]byte(ev)) != nil {
					break
				}
			}
			t.Logf("%d messages and tool calls checked", checked)
		})
	}
}

// streamedText returns the text of message m, or the arguments of its tool
// call id.
func streamedText(m Message, id string) string {
	if id == "" {
		return m.Text()
	}
	for _, call := range m.ToolCalls() {
		if call.ID == id {
			return call.Arguments
		}
	}
	return ""
}

// TestPiecesOfALocalChange checks that a local change has no pieces.
func TestPiecesOfALocalChange(t *testing.T) {
	t.Parallel()
	c := New(nil)
	var got []Change
	c.Subscribe(func(ch Change) { got = append(got, ch) })
	require.NoError(t, c.AddMessages(AssistantMessage("hi")))
	require.Len(t, got, 1)
	assert.Nil(t, got[0].Pieces)
}

// TestPiecesPair checks over generated event sequences that every piece
// of a message or tool call comes between its start and its end, and that
// what has started and not ended is what streams.
func TestPiecesPair(t *testing.T) {
	t.Parallel()
	for seed := range uint64(200) {
		r := rand.New(rand.NewPCG(seed, 17))
		c := New(propertyOptions())
		open := map[construct]bool{}
		c.Subscribe(func(ch Change) {
			for _, p := range ch.Pieces {
				k := construct{kind: textConstruct, id: p.MessageID}
				if p.ToolCallID != "" {
					k = construct{kind: toolConstruct, id: p.ToolCallID}
				} else if p.Role == roleReasoning {
					k.kind = reasoningConstruct
				}
				if p.Start {
					require.False(t, open[k], "seed %d: %+v starts twice", seed, p)
					open[k] = true
				}
				require.True(t, open[k], "seed %d: %+v streams only between its start and its end", seed, p)
				if p.End {
					delete(open, k)
				}
			}
		})
		for _, ev := range genLegacyEvents(r, 60) {
			_ = c.Apply([]byte(ev))
			v := c.cur.Load()
			streaming := map[construct]bool{}
			for k := range v.open.all() {
				if v.streaming(k, k.key()) {
					streaming[construct{kind: k.kind, id: k.id}] = true
				}
			}
			require.Equal(t, streaming, open, "seed %d, after %s", seed, ev)
		}
	}
}

// BenchmarkPieces streams a message of 65,536 TEXT_MESSAGE_CONTENT events
// to a Consumer with a subscriber that reads each piece, and without one:
// ns/event is what an event costs, its pieces included.
func BenchmarkPieces(b *testing.B) {
	for _, subscribed := range []bool{false, true} {
		b.Run(fmt.Sprintf("subscribed=%v", subscribed), func(b *testing.B) {
			const n = 1 << 16
			event := []byte(`{"type":"TEXT_MESSAGE_CONTENT","messageId":"m","delta":"abcd"}`)
			b.ReportAllocs()
			for b.Loop() {
				b.StopTimer()
				c := New(nil)
				got := 0
				if subscribed {
					c.Subscribe(func(ch Change) {
						for _, p := range ch.Pieces {
							got += len(p.Text)
						}
					})
				}
				if err := c.Apply([]byte(`{"type":"TEXT_MESSAGE_START","messageId":"m","role":"assistant"}`)); err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
				for range n {
					if err := c.Apply(event); err != nil {
						b.Fatal(err)
					}
				}
				if subscribed && got != 4*n {
					b.Fatalf("the pieces hold %d bytes, not %d", got, 4*n)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/event")
		})
	}
}
