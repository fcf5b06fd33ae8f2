package main

import (
	"io"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

// A run's JSON, as go test -json writes it: a passing package, a package
// without test files (a "skip" of no test), a package whose tests skip for
// several reasons, and a failing test.
const stream = `{"Action":"start","Package":"a"}
{"Action":"run","Package":"a","Test":"TestOK"}
{"Action":"output","Package":"a","Test":"TestOK","Output":"=== RUN   TestOK\n"}
{"Action":"pass","Package":"a","Test":"TestOK"}
{"Action":"output","Package":"a","Output":"ok  \ta\t0.1s\n"}
{"Action":"pass","Package":"a"}
{"Action":"output","Package":"c","Output":"?   \tc\t[no test files]\n"}
{"Action":"skip","Package":"c"}
{"Action":"run","Package":"b","Test":"TestShared"}
{"Action":"output","Package":"b","Test":"TestShared","Output":"    helpers_test.go:124: ../shared not found: stat ../shared: no such file or directory\n"}
{"Action":"output","Package":"b","Test":"TestShared","Output":"--- SKIP: TestShared (0.00s)\n"}
{"Action":"skip","Package":"b","Test":"TestShared"}
{"Action":"run","Package":"b","Test":"TestRedis"}
{"Action":"output","Package":"b","Test":"TestRedis","Output":"    store_test.go:20: Redis does not answer on 127.0.0.1:6379: dial tcp: refused\n"}
{"Action":"skip","Package":"b","Test":"TestRedis"}
{"Action":"run","Package":"b","Test":"TestShared2"}
{"Action":"output","Package":"b","Test":"TestShared2","Output":"    x_test.go:9: ../shared not found: stat ../../shared: no such file or directory\n"}
{"Action":"skip","Package":"b","Test":"TestShared2"}
{"Action":"run","Package":"b","Test":"TestCleanup"}
{"Action":"output","Package":"b","Test":"TestCleanup","Output":"=== PAUSE TestCleanup\n"}
{"Action":"output","Package":"b","Test":"TestCleanup","Output":"=== CONT  TestCleanup\n"}
{"Action":"output","Package":"b","Test":"TestCleanup","Output":"    h_test.go:179: ../../shared/streams not found (clone it): stat ../../shared/streams: no such file\n"}
{"Action":"output","Package":"b","Test":"TestCleanup","Output":"    r_test.go:217: 0 cuts, each reconnected\n"}
{"Action":"output","Package":"b","Test":"TestCleanup","Output":"--- SKIP: TestCleanup (0.00s)\n"}
{"Action":"skip","Package":"b","Test":"TestCleanup"}
{"Action":"run","Package":"b","Test":"TestSilent"}
{"Action":"output","Package":"b","Test":"TestSilent","Output":"--- SKIP: TestSilent (0.00s)\n"}
{"Action":"skip","Package":"b","Test":"TestSilent"}
{"Action":"run","Package":"b","Test":"TestBad"}
{"Action":"output","Package":"b","Test":"TestBad","Output":"    b_test.go:3: wrong\n"}
{"Action":"output","Package":"b","Test":"TestBad","Output":"--- FAIL: TestBad (0.00s)\n"}
{"Action":"fail","Package":"b","Test":"TestBad"}
{"Action":"output","Package":"b","Output":"FAIL\tb\t0.2s\n"}
{"Action":"fail","Package":"b"}
`

func TestReport(t *testing.T) {
	var out strings.Builder
	skips, fails := report(strings.NewReader(stream), &out)
	assert.Equal(t, "ok  \ta\t0.1s\n?   \tc\t[no test files]\n    b_test.go:3: wrong\n--- FAIL: TestBad (0.00s)\nFAIL\tb\t0.2s\n", out.String(),
		"package lines and a failing test's output, as go test prints them; nothing of passing or skipped tests")
	assert.Equal(t, "testall: 5 tests skipped: 3 ../shared not found; "+
		"1 Redis does not answer on 127.0.0.1:6379; 1 no reason given (TestSilent)",
		summary(skips), "one line, reasons cut at their detail and hints, the shared folder named one way, "+
			"a cleanup's log not taken for the reason, most frequent first")
	assert.Equal(t, "testall: no test skipped", summary(nil))
	assert.Equal(t, []string{"b TestBad"}, fails, "the failed test, not its package again")
	assert.Equal(t, "testall: FAIL: b TestBad", failures(fails))

	_, fails = report(strings.NewReader(`{"Action":"output","Package":"d","Output":"FAIL\td [build failed]\n"}
{"Action":"fail","Package":"d"}
`), io.Discard)
	assert.Equal(t, []string{"d"}, fails, "a package that failed with no test failing")
}
