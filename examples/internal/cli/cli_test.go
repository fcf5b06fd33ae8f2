// Tests of the -H flag and LoadInput.

package cli

import (
	"net/http"
	"os"
	"path/filepath"
	"testing"

	"github.com/aguistate/aguistate"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestHeaderSet(t *testing.T) {
	cases := []struct {
		name, reason, in string
		want             http.Header // nil: an error
	}{
		{"bearer", "the value keeps its inner space", "Authorization: Bearer abc", http.Header{"Authorization": {"Bearer abc"}}},
		{"canonical", "names are canonicalised, spaces trimmed", " x-api-key :  k1 ", http.Header{"X-Api-Key": {"k1"}}},
		{"colon in value", "only the first colon separates", "X-Url: http://a:1", http.Header{"X-Url": {"http://a:1"}}},
		{"empty value", "an empty value is a header", "X-Empty:", http.Header{"X-Empty": {""}}},
		{"no colon", "a header needs a colon", "Authorization Bearer", nil},
		{"empty name", "a header needs a name", ": v", nil},
		{"space in name", "a name is a token", "X Y: v", nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := Header{}
			err := h.Set(tc.in)
			if tc.want == nil {
				assert.Error(t, err, tc.reason)
				return
			}
			require.NoError(t, err, tc.reason)
			assert.Equal(t, tc.want, http.Header(h), tc.reason)
		})
	}
	h := Header{}
	require.NoError(t, h.Set("X-A: 1"))
	require.NoError(t, h.Set("X-A: 2"))
	assert.Equal(t, []string{"1", "2"}, http.Header(h)["X-A"], "a repeated header adds a value")
	assert.Equal(t, "X-A: 1\nX-A: 2\n", h.String())
}

func TestLoadInput(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "in.json")
	require.NoError(t, os.WriteFile(good, []byte(`{"threadId":"t1","state":{"n":1.0},"messages":[{"id":"u1","role":"user","content":"hi"}],"tools":[{"name":"f"}]}`), 0o600))
	c := aguistate.New(nil)
	in, err := LoadInput(c, good)
	require.NoError(t, err)
	assert.Equal(t, `[{"name":"f"}]`, string(in.Tools))
	assert.Equal(t, "t1", c.ThreadID())
	assert.Equal(t, `{"n":1.0}`, c.State().String())
	assert.Len(t, c.Messages(), 1)

	bad := filepath.Join(dir, "bad.json")
	require.NoError(t, os.WriteFile(bad, []byte(`{"threadId":5}`), 0o600))
	_, err = LoadInput(aguistate.New(nil), bad)
	assert.ErrorContains(t, err, "bad.json")
	_, err = LoadInput(aguistate.New(nil), filepath.Join(dir, "absent.json"))
	assert.Error(t, err)
}
