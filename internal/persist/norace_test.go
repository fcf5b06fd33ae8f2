//go:build !race

package persist

// modelRounds scales the model tests; see race_test.go.
const modelRounds = 1
