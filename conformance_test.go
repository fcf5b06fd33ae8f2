package aguistate

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestConformance runs every case of the public RFC 6902 conformance suite
// (json-patch-tests: tests.json and spec_tests.json) that the suite does not
// itself disable: an "error" case must fail, an "expected" case must give
// that document.
func TestConformance(t *testing.T) {
	dir := sharedDir(t, "conformance/json-patch-tests")
	total, ran := 0, 0
	for _, file := range []string{"tests.json", "spec_tests.json"} {
		data, err := os.ReadFile(filepath.Join(dir, file))
		require.NoError(t, err)
		var cases []map[string]json.RawMessage
		require.NoError(t, json.Unmarshal(data, &cases))
		for i, c := range cases {
			total++
			if string(c["disabled"]) == "true" || (c["expected"] == nil && c["error"] == nil) {
				continue
			}
			ran++
			name := file + "/" + string(c["comment"])
			t.Run(name, func(t *testing.T) {
				doc := mustParse(t, string(c["doc"]))
				patch := mustParse(t, string(c["patch"]))
				ops, err := decodePatch(patch, limits{})
				if err == nil {
					var got = doc
					got, err = applyPatch(doc, ops, limits{})
					if err == nil && c["expected"] != nil {
						assertJSONEqual(t, mustParse(t, string(c["expected"])), got, "case", i)
						return
					}
				}
				if c["error"] != nil {
					require.Error(t, err, "case %d must fail: %s", i, c["error"])
					assertJSONEqual(t, mustParse(t, string(c["doc"])), doc, "the document must not change")
					return
				}
				require.NoError(t, err, "case %d", i)
			})
		}
	}
	t.Logf("conformance: ran %d of %d records", ran, total)
}
