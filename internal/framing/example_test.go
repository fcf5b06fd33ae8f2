// Runnable examples of Read and Error.

package framing_test

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/aguistate/aguistate/internal/framing"
)

func ExampleRead() {
	body := strings.NewReader("id: 1\ndata: {\"type\":\"RUN_STARTED\"}\n\n" +
		": keep-alive\n\n" +
		"data: {\"type\":\"STATE_DELTA\",\n" +
		"data:  \"delta\":[]}\n\n")
	for payload, err := range framing.Read(body, framing.Auto, 0) {
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
	for _, err := range framing.Read(body, framing.SSE, 8) {
		if err != nil {
			fmt.Println(err)
		}
	}
	// Output:
	// event 2: the event is longer than 8 bytes
}
