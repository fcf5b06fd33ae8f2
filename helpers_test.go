package aguistate

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/aguistate/aguistate/internal/jsonv"
	"github.com/stretchr/testify/require"
)

// sharedDir returns the path of ../shared/NAME, the project's read-only
// shared test data. It skips the test when the folder is absent, and fails
// it instead when the CI environment variable is set.
func sharedDir(t testing.TB, name string) string {
	t.Helper()
	dir := filepath.Join("..", "shared", name)
	if _, err := os.Stat(dir); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("%s is required in CI: %v", dir, err)
		}
		t.Skipf("%s not found (clone the repository next to shared/ to run this test): %v", dir, err)
	}
	return dir
}

// mustParse parses JSON text for a test.
func mustParse(t testing.TB, text string) *jsonv.Node {
	t.Helper()
	n, err := jsonv.Parse([]byte(text), 0)
	require.NoError(t, err, "parse %s", text)
	return n
}

// assertJSONEqual fails unless want and got are the same JSON value
// (RFC 6902 equality: exact numbers, any member order).
func assertJSONEqual(t testing.TB, want, got *jsonv.Node, msg ...any) {
	t.Helper()
	if !jsonv.Equal(want, got) {
		t.Errorf("JSON values differ %v\nwant: %s\n got: %s", msg, jsonv.Marshal(want), jsonv.Marshal(got))
	}
}
