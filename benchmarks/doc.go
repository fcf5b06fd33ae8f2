// Package benchmarks compares aguistate with other ways of consuming an
// AG-UI stream. It is a module of its own, so that the library's go.mod
// needs none of the libraries compared. Run it from the repository root:
//
//	go test -run '^$' -bench . -count 6 ./benchmarks
package benchmarks
