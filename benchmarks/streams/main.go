// Command streams writes the streams of the memory table of docs/economy.md: replay
// each with the replay example under /usr/bin/time -f %M to measure its
// maximum resident set size.
//
// Usage:
//
//	go run ./benchmarks/streams DIR
//
// It creates DIR when it does not exist, and writes, in JSON Lines, DIR/deltas.jsonl (1,000 messages, then 20,000
// one-byte text deltas), DIR/noops.jsonl (1,000,000 events: 500,000 steps
// started and finished in turn), DIR/split-pairs.jsonl (a 7 MiB message,
// then 1,000 text deltas that each end with half of a surrogate pair) and
// DIR/zeros.jsonl (a 16 MiB STATE_SNAPSHOT of [0,0,...]).
package main

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: streams DIR")
		os.Exit(2)
	}
	if err := os.MkdirAll(os.Args[1], 0o755); err != nil {
		fmt.Fprintln(os.Stderr, "error:", err)
		os.Exit(1)
	}
	for name, write := range map[string]func(*bufio.Writer){
		"deltas.jsonl":      deltas,
		"noops.jsonl":       noops,
		"split-pairs.jsonl": splitPairs,
		"zeros.jsonl":       zeros,
	} {
		if err := writeFile(filepath.Join(os.Args[1], name), write); err != nil {
			fmt.Fprintln(os.Stderr, "error:", err)
			os.Exit(1)
		}
	}
}

func writeFile(path string, write func(*bufio.Writer)) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := bufio.NewWriter(f)
	write(w)
	if err := w.Flush(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// deltas: 1,000 messages, then 20,000 one-byte deltas to one more.
func deltas(w *bufio.Writer) {
	for i := range 1000 {
		fmt.Fprintf(w, "{\"type\":\"TEXT_MESSAGE_START\",\"messageId\":\"m%d\",\"role\":\"assistant\"}\n", i)
		fmt.Fprintf(w, "{\"type\":\"TEXT_MESSAGE_CONTENT\",\"messageId\":\"m%d\",\"delta\":\"Message %d, a sentence or two of an answer.\"}\n", i, i)
		fmt.Fprintf(w, "{\"type\":\"TEXT_MESSAGE_END\",\"messageId\":\"m%d\"}\n", i)
	}
	fmt.Fprintln(w, `{"type":"TEXT_MESSAGE_START","messageId":"live","role":"assistant"}`)
	for range 20_000 {
		fmt.Fprintln(w, `{"type":"TEXT_MESSAGE_CONTENT","messageId":"live","delta":"x"}`)
	}
}

// noops: 1,000,000 events that change no state or message: 500,000 steps,
// each started and finished before the next starts, so that at most one is
// open.
func noops(w *bufio.Writer) {
	for i := range 500_000 {
		fmt.Fprintf(w, "{\"type\":\"STEP_STARTED\",\"stepName\":\"step-%d\"}\n", i)
		fmt.Fprintf(w, "{\"type\":\"STEP_FINISHED\",\"stepName\":\"step-%d\"}\n", i)
	}
}

// splitPairs: a message of 7 MiB, then deltas that each end with the high
// half of a UTF-16 pair whose low half starts the next.
func splitPairs(w *bufio.Writer) {
	fmt.Fprintln(w, `{"type":"TEXT_MESSAGE_START","messageId":"m","role":"assistant"}`)
	for range 7 {
		fmt.Fprintln(w, `{"type":"TEXT_MESSAGE_CONTENT","messageId":"m","delta":"`+strings.Repeat("y", 1<<20)+`"}`)
	}
	fmt.Fprintln(w, `{"type":"TEXT_MESSAGE_CONTENT","messageId":"m","delta":"\ud83d"}`)
	for range 1000 {
		fmt.Fprintln(w, `{"type":"TEXT_MESSAGE_CONTENT","messageId":"m","delta":"\ude00x\ud83d"}`)
	}
}

// zeros: a STATE_SNAPSHOT of [0,0,...] as large as MaxEventSize allows.
func zeros(w *bufio.Writer) {
	const head, tail = `{"type":"STATE_SNAPSHOT","snapshot":[`, `]}`
	n := (16<<20 - len(head) - len(tail) + 1) / 2
	w.WriteString(head + strings.Repeat("0,", n-1) + "0" + tail + "\n")
}
