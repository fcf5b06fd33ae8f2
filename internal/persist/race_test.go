//go:build race

package persist

// modelRounds scales the model tests down under the race detector, which
// makes them ten times slower and has nothing to find in one goroutine.
const modelRounds = 4
