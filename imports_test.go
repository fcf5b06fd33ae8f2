// A test of what the packages import: the root package the standard library alone, the relay no SDK.

package aguistate_test

import (
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestImports lists, with go list, the packages that each package imports
// (in its build, not its tests), directly or not, and checks them against
// a rule.
func TestImports(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("go"); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("go is required in CI: %v", err)
		}
		t.Skipf("no go command: %v", err)
	}
	tests := []struct {
		name, reason string
		pkg          string
		allowed      func(path string, standard bool) bool
	}{{
		name:   "root",
		reason: "the root package imports only the standard library (and the module's internal packages, which do too)",
		pkg:    "github.com/aguistate/aguistate",
		allowed: func(path string, standard bool) bool {
			return standard || path == "github.com/aguistate/aguistate" || strings.HasPrefix(path, "github.com/aguistate/aguistate/internal/")
		},
	}, {
		name:   "relay",
		reason: "the relay uses the OpenTelemetry API; the application chooses an SDK and exporters",
		pkg:    "github.com/aguistate/aguistate/relay",
		allowed: func(path string, _ bool) bool {
			for _, denied := range []string{"go.opentelemetry.io/otel/sdk", "go.opentelemetry.io/otel/exporters/", "github.com/prometheus/"} {
				if strings.HasPrefix(path, denied) {
					return false
				}
			}
			return true
		},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			out, err := exec.Command("go", "list", "-deps", "-f", "{{.ImportPath}} {{.Standard}}", tt.pkg).CombinedOutput()
			require.NoError(t, err, "%s", out)
			var denied []string
			lines := strings.Split(strings.TrimSpace(string(out)), "\n")
			require.Greater(t, len(lines), 1, "the package imports something")
			for _, line := range lines {
				path, standard, _ := strings.Cut(line, " ")
				if !tt.allowed(path, standard == "true") {
					denied = append(denied, path)
				}
			}
			assert.Empty(t, denied, tt.reason)
		})
	}
}
