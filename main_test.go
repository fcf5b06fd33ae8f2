// The test binary's main: checks that hold after every test ran.

package aguistate

import (
	"fmt"
	"os"
	"reflect"
	"testing"
)

// TestMain runs the tests, then checks that no change wrote into the
// runView that every new thread shares (a change must copy it first, see
// txn.scope): a write there would leak into every Consumer.
func TestMain(m *testing.M) {
	code := m.Run()
	if !reflect.ValueOf(emptyRun).IsZero() {
		fmt.Fprintln(os.Stderr, "FAIL: the shared empty runView was changed")
		code = 1
	}
	os.Exit(code)
}
