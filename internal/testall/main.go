// Command testall runs the tests of every module of the workspace, with the
// race detector, as CI does, and ends with one line that says how many
// tests skipped and why (a test skips when ../shared, Redis, PostgreSQL or
// Chromium is absent), and, when a test failed, a last line that names the
// tests that failed.
//
// Usage, from anywhere in the repository:
//
//	go run ./internal/testall [go test flags]
//
// It runs "go test -race -json FLAGS MODULE/..." for each module that
// go.work lists, prints what go test prints without -json (a line per
// package, and the whole output of a test that fails), then the skips, then
// the failures. Its exit status is go test's.
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"regexp"
	"sort"
	"strings"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// event is one line of go test -json (cmd/test2json).
type event struct {
	Action     string
	Package    string
	ImportPath string
	Test       string
	Output     string
}

func run(flags []string, stdout, stderr io.Writer) int {
	dirs, err := modules()
	if err != nil {
		fmt.Fprintln(stderr, "testall:", err)
		return 1
	}
	args := append([]string{"test", "-race", "-json"}, flags...)
	for _, d := range dirs {
		args = append(args, d+"/...")
	}
	cmd := exec.Command("go", args...)
	cmd.Stderr = stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		fmt.Fprintln(stderr, "testall:", err)
		return 1
	}
	if err := cmd.Start(); err != nil {
		fmt.Fprintln(stderr, "testall:", err)
		return 1
	}
	skips, fails := report(out, stdout)
	err = cmd.Wait()
	fmt.Fprintln(stdout, summary(skips))
	if len(fails) > 0 {
		fmt.Fprintln(stdout, failures(fails))
	}
	if exit, ok := err.(*exec.ExitError); ok {
		return exit.ExitCode()
	}
	if err != nil {
		fmt.Fprintln(stderr, "testall:", err)
		return 1
	}
	return 0
}

// modules returns the folders of the workspace's modules, relative to the
// current one ("./..." style).
func modules() ([]string, error) {
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}").Output()
	if err != nil {
		return nil, fmt.Errorf("go list -m: %w", err)
	}
	wd, err := os.Getwd()
	if err != nil {
		return nil, err
	}
	var dirs []string
	for _, d := range strings.Fields(string(out)) {
		if rel, ok := strings.CutPrefix(d, wd); ok && (rel == "" || rel[0] == os.PathSeparator) {
			d = "." + rel
		}
		dirs = append(dirs, d)
	}
	return dirs, nil
}

// report prints the test events from r as go test prints them without
// -json, and returns the reason of each skipped test, and what failed: each
// top-level test that failed, as "PACKAGE TEST", and each package that
// failed with no test failing (its build, or its TestMain).
func report(r io.Reader, w io.Writer) (skips, fails []string) {
	held := make(map[string][]string) // output of tests in progress, by package and test
	failed := make(map[string]bool)   // packages with a failed test
	sc := bufio.NewScanner(r)
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		var e event
		if json.Unmarshal(sc.Bytes(), &e) != nil {
			fmt.Fprintln(w, sc.Text())
			continue
		}
		key := e.Package + " " + e.Test
		switch {
		case e.Action == "build-output":
			fmt.Fprint(w, e.Output)
		case e.Test == "" && e.Action == "output":
			fmt.Fprint(w, e.Output)
		case e.Action == "output":
			held[key] = append(held[key], e.Output)
		case e.Action == "fail":
			switch {
			case e.Test == "" && !failed[e.Package]:
				fails = append(fails, e.Package)
			case e.Test != "" && !strings.Contains(e.Test, "/"):
				failed[e.Package] = true
				fails = append(fails, key)
			}
			for _, line := range held[key] {
				fmt.Fprint(w, line)
			}
			delete(held, key)
		case e.Action == "skip" && e.Test == "":
			// a package without test files: no test skipped
		case e.Action == "skip":
			skips = append(skips, reason(e.Test, held[key]))
			delete(held, key)
		case e.Action == "pass":
			delete(held, key)
		}
	}
	return skips, fails
}

// position is the "file.go:12: " that begins a line of t.Log output.
var position = regexp.MustCompile(`^\s*[\w.-]+\.go:\d+: `)

// sharedPath is a path to the shared data folder from any package's
// folder (../shared, ../../shared/streams, ...), which reason writes as
// ../shared, so that one cause reads as one reason.
var sharedPath = regexp.MustCompile(`^(\.\./)+shared(/\S*)?( |$)`)

// reason returns why test skipped, from its output: the first line it
// logged after it last ran (the message of its t.Skip, unless it logged
// before it; a line its cleanup logs comes after), up to the first ": " or
// " (" (what follows is detail, such as the error of a dial or a hint). A
// path to the shared data folder reads as ../shared.
func reason(test string, output []string) string {
	start := 0
	for i, line := range output {
		if strings.HasPrefix(line, "=== ") {
			start = i + 1
		}
	}
	for _, line := range output[start:] {
		if !position.MatchString(line) {
			continue
		}
		line = strings.TrimSpace(position.ReplaceAllString(line, ""))
		if head, _, ok := strings.Cut(line, ": "); ok {
			line = head
		}
		if head, _, ok := strings.Cut(line, " ("); ok {
			line = head
		}
		return sharedPath.ReplaceAllString(line, "../shared$3")
	}
	return "no reason given (" + test + ")"
}

// failures returns the line that ends a run where tests failed.
func failures(fails []string) string {
	return fmt.Sprintf("testall: FAIL: %s", strings.Join(fails, "; "))
}

// summary returns the line that ends the run: how many tests skipped, by
// reason, most frequent first.
func summary(skips []string) string {
	if len(skips) == 0 {
		return "testall: no test skipped"
	}
	count := make(map[string]int)
	for _, s := range skips {
		count[s]++
	}
	reasons := make([]string, 0, len(count))
	for r := range count {
		reasons = append(reasons, r)
	}
	sort.Slice(reasons, func(i, j int) bool {
		if count[reasons[i]] != count[reasons[j]] {
			return count[reasons[i]] > count[reasons[j]]
		}
		return reasons[i] < reasons[j]
	})
	parts := make([]string, len(reasons))
	for i, r := range reasons {
		parts[i] = fmt.Sprintf("%d %s", count[r], r)
	}
	return fmt.Sprintf("testall: %d tests skipped: %s", len(skips), strings.Join(parts, "; "))
}
