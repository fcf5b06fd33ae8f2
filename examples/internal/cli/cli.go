// Package cli holds what the example commands that run an agent share: the
// repeatable -H flag and the -input file.
package cli

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/textproto"
	"os"
	"strings"

	"github.com/aguistate/aguistate"
)

// Header is a flag.Value for a repeatable -H 'Name: value' flag, as curl
// takes it: each use adds one request header.
type Header http.Header

// String returns the headers as "Name: value" lines.
func (h Header) String() string {
	var b strings.Builder
	for name, values := range h {
		for _, v := range values {
			fmt.Fprintf(&b, "%s: %s\n", name, v)
		}
	}
	return b.String()
}

// Set adds the header "Name: value" in s. It fails when s has no colon or
// the name is not an HTTP token (RFC 9110 section 5.1).
func (h Header) Set(s string) error {
	name, value, ok := strings.Cut(s, ":")
	name = strings.TrimSpace(name)
	if !ok || !isToken(name) {
		return fmt.Errorf("header %q is not 'Name: value'", s)
	}
	http.Header(h).Add(textproto.CanonicalMIMEHeaderKey(name), strings.TrimSpace(value))
	return nil
}

// isToken reports whether s is a non-empty HTTP token (RFC 9110 section
// 5.6.2).
func isToken(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range []byte(s) {
		if c <= ' ' || c >= 0x7F || strings.IndexByte(`"(),/:;<=>?@[\]{}`, c) >= 0 {
			return false
		}
	}
	return true
}

// LoadInput reads the RunAgentInput JSON file at path and starts a run of c
// with it: its thread id, state and messages become the thread's. It
// returns the input, whose other members the caller sends as it sees fit.
func LoadInput(c *aguistate.Consumer, path string) (aguistate.RunAgentInput, error) {
	var in aguistate.RunAgentInput
	data, err := os.ReadFile(path)
	if err != nil {
		return in, err
	}
	if err := json.Unmarshal(data, &in); err != nil {
		return in, fmt.Errorf("%s: %w", path, err)
	}
	if err := c.StartRun(in); err != nil {
		return in, fmt.Errorf("%s: %w", path, err)
	}
	return in, nil
}
