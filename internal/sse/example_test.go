package sse_test

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/aguistate/aguistate/internal/sse"
)

func ExampleRead() {
	body := strings.NewReader("id: 1\ndata: {\"type\":\"RUN_STARTED\"}\n\n" +
		": keep-alive\n\n" +
		"data: {\"type\":\"STATE_DELTA\",\n" +
		"data:  \"delta\":[]}\n\n")
	for payload, err := range sse.Read(body, sse.FormatAuto, 0) {
		if err != nil {
			fmt.Println(err)
			return
		}
		// payload is reused on the next step: parse (or copy) it now.
		var ev struct{ Type string }
		if err := json.Unmarshal(payload, &ev); err != nil {
			fmt.Println(err)
			return
		}
		fmt.Println(ev.Type)
	}
	// Output:
	// RUN_STARTED
	// STATE_DELTA
}

func ExampleError() {
	body := strings.NewReader("data: {}\n\ndata: {\"big\":true}\n\n")
	for _, err := range sse.Read(body, sse.FormatSSE, 8) {
		if err != nil {
			fmt.Println(err)
		}
	}
	// Output:
	// aguistate: event 2: payload too large: exceeds 8 bytes
}
