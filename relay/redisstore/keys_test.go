// The key scheme: a thread's keys share one non-empty hash tag, and no two threads share a key.

package redisstore

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

// hashTag returns the part of key that a Redis Cluster hashes: the text
// between the first "{" and the next "}" when it is not empty, else the
// whole key.
func hashTag(key string) string {
	open := strings.IndexByte(key, '{')
	if open < 0 {
		return key
	}
	end := strings.IndexByte(key[open+1:], '}')
	if end <= 0 {
		return key
	}
	return key[open+1 : open+1+end]
}

func TestKeys(t *testing.T) {
	root := New(nil, nil)
	ids := []string{"t", "", "}", "}x", "}}", "x}", "a}b", "{", "{}", "}{", "~", "~{", "\x00", "a:log", "@", "@:{t}"}
	tenants := []string{"", "a", "b", "@", ":", "{t}", "\x00", "\xff", strings.Repeat("t", 256)}
	seen := map[string]string{}
	for _, tenant := range tenants {
		s := root.Tenant(tenant).(*Store)
		for _, id := range ids {
			keys := s.keys(id)
			tag := hashTag(keys[0])
			assert.NotEqual(t, keys[0], tag, "thread %q: the key %q has a hash tag", id, keys[0])
			for _, k := range keys {
				assert.Equal(t, tag, hashTag(k), "thread %q: its keys share a slot", id)
				if other, ok := seen[k]; ok {
					t.Errorf("threads %s and %q of tenant %q share the key %q", other, id, tenant, k)
				}
				seen[k] = fmt.Sprintf("%q of tenant %q", id, tenant)
			}
		}
	}
	assert.Equal(t, []string{"aguistate:{t}:log", "aguistate:{t}:cp", "aguistate:{t}:lease"}, root.keys("t")[:3],
		"the keys of the usual ids are as before")
}
