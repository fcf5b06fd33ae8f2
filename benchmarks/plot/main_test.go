package main

import (
	"image/png"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestFigures reads benchmark lines as go test and delta.mjs print them
// and checks that each figure is a PNG, and that a figure without its
// benchmarks is not drawn.
func TestFigures(t *testing.T) {
	dir := t.TempDir()
	input := filepath.Join(dir, "bench.txt")
	require.NoError(t, os.WriteFile(input, []byte(`goos: linux
BenchmarkCost/sections-replace/1KB-2         	    3000	      2900 ns/op	    1234 B/op	      20 allocs/op
BenchmarkCost/sections-replace/1KB-2         	    3000	      3100 ns/op	    1234 B/op	      20 allocs/op
BenchmarkCost/sections-replace/1MB-2         	    3000	      4000 ns/op
BenchmarkCost/sections-replace/10MB-2        	    3000	      4700 ns/op
BenchmarkCostFloor/sections-replace/1KB-2    	    3000	      1500 ns/op
BenchmarkCostFloor/sections-replace/10MB-2   	    3000	      2500 ns/op
BenchmarkReferenceCost/sections-replace/1KB 	200	73248 ns/op
BenchmarkReferenceCost/sections-replace/10MB 	5	1512866662 ns/op
BenchmarkCost/list-insert-0/1KB-2            	    3000	      2300 ns/op
`), 0o644))
	results := map[string][]float64{}
	require.NoError(t, readBench(input, results))
	assert.Equal(t, []float64{2900, 3100}, results["BenchmarkCost/sections-replace/1KB"])
	medians := map[string]float64{}
	for name, ns := range results {
		medians[name] = median(ns)
	}
	assert.Equal(t, 3000.0, medians["BenchmarkCost/sections-replace/1KB"])

	out := filepath.Join(dir, "delta.png")
	ok, err := deltaFigure(medians, out)
	require.NoError(t, err)
	require.True(t, ok)
	f, err := os.Open(out)
	require.NoError(t, err)
	defer f.Close()
	_, err = png.Decode(f)
	assert.NoError(t, err, "a PNG")

	ok, err = messagesFigure(medians, filepath.Join(dir, "messages.png"))
	require.NoError(t, err)
	assert.False(t, ok, "no BenchmarkMessageEvents lines: nothing drawn")
	assert.NoFileExists(t, filepath.Join(dir, "messages.png"))
}

func TestThousandsAndDurations(t *testing.T) {
	assert.Equal(t, "100,000", thousands(100000))
	assert.Equal(t, "100", thousands(100))
	assert.Equal(t, "10 µs", duration(1e4))
	assert.Equal(t, "1 s", duration(1e9))
}
