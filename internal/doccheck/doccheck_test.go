package doccheck

import (
	"bufio"
	"bytes"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// root is the repository's top folder, from this package's.
const root = "../.."

// document is a Markdown file of the repository, split into what the
// checks read.
type document struct {
	path     string          // relative to root
	anchors  map[string]bool // the GitHub anchors of its headings
	links    []link          // outside code
	snippets []snippet       // the ```go blocks
}

type link struct {
	line   int
	target string
}

type snippet struct {
	line   int    // of the first line of code
	code   string //
	params string // the parameter list of a function-body snippet
	decl   string // declarations the snippet uses, added to its file
	skip   bool
}

// documents returns README.md and every Markdown file under docs/.
func documents(t *testing.T) []*document {
	t.Helper()
	paths := []string{"README.md"}
	docs, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	require.NoError(t, err)
	for _, d := range docs {
		rel, err := filepath.Rel(root, d)
		require.NoError(t, err)
		paths = append(paths, rel)
	}
	var out []*document
	for _, p := range paths {
		text, err := os.ReadFile(filepath.Join(root, p))
		require.NoError(t, err)
		out = append(out, parse(p, text))
	}
	return out
}

var (
	fence      = regexp.MustCompile("^\\s*(```+|~~~+)\\s*([^\\s`]*)")
	inlineLink = regexp.MustCompile(`\]\(([^()\s]+)(?:\s+"[^"]*")?\)`)
	refLink    = regexp.MustCompile(`^\s*\[[^\]]+\]:\s*(\S+)`)
	directive  = regexp.MustCompile(`^<!--\s*go:\s*(.*?)\s*-->\s*$`)
	codeSpan   = regexp.MustCompile("`[^`]*`")
)

// parse reads a Markdown file: its headings' anchors, its links outside
// code, and its Go snippets.
func parse(path string, text []byte) *document {
	d := &document{path: path, anchors: make(map[string]bool)}
	seen := make(map[string]int)
	var (
		inCode   bool
		closer   string
		lang     string
		code     strings.Builder
		start    int
		previous string
		pending  string // the directive before the open fence
	)
	sc := bufio.NewScanner(bytes.NewReader(text))
	sc.Buffer(nil, 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		trimmed := strings.TrimSpace(line)
		closes := inCode && strings.HasPrefix(trimmed, closer) && strings.Trim(trimmed, closer[:1]) == ""
		if m := fence.FindStringSubmatch(line); m != nil && (!inCode || closes) {
			if !inCode {
				inCode, closer, lang, start = true, m[1], m[2], n+1
				code.Reset()
				pending = ""
				if dm := directive.FindStringSubmatch(strings.TrimSpace(previous)); dm != nil {
					pending = dm[1]
				}
				previous = line
				continue
			}
			inCode = false
			if lang == "go" {
				s := snippet{line: start, code: code.String(), params: "ctx context.Context, url string"}
				switch {
				case pending == "skip" || strings.HasPrefix(pending, "skip "):
					s.skip = true
				case strings.HasPrefix(pending, "params(") && strings.HasSuffix(pending, ")"):
					s.params = strings.TrimSuffix(strings.TrimPrefix(pending, "params("), ")")
				case strings.HasPrefix(pending, "decl(") && strings.HasSuffix(pending, ")"):
					s.decl = strings.TrimSuffix(strings.TrimPrefix(pending, "decl("), ")")
				}
				d.snippets = append(d.snippets, s)
			}
			previous = line
			continue
		}
		if inCode {
			code.WriteString(line)
			code.WriteByte('\n')
			continue
		}
		previous = line
		if h, ok := strings.CutPrefix(line, "#"); ok {
			h = strings.TrimLeft(h, "#")
			if strings.HasPrefix(h, " ") {
				a := anchor(h)
				if k := seen[a]; k > 0 {
					d.anchors[fmt.Sprintf("%s-%d", a, k)] = true
				} else {
					d.anchors[a] = true
				}
				seen[a]++
			}
		}
		plain := codeSpan.ReplaceAllString(line, "")
		for _, m := range inlineLink.FindAllStringSubmatch(plain, -1) {
			d.links = append(d.links, link{n, m[1]})
		}
		if m := refLink.FindStringSubmatch(plain); m != nil {
			d.links = append(d.links, link{n, m[1]})
		}
	}
	return d
}

// anchor returns the anchor GitHub gives a heading: its text in lower
// case, without markup and punctuation, spaces turned to hyphens.
func anchor(heading string) string {
	heading = strings.TrimSpace(heading)
	var b strings.Builder
	for _, r := range strings.ToLower(heading) {
		switch {
		case r == ' ':
			b.WriteByte('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

func TestLinks(t *testing.T) {
	docs := documents(t)
	byPath := make(map[string]*document)
	for _, d := range docs {
		byPath[filepath.ToSlash(d.path)] = d
	}
	for _, d := range docs {
		for _, l := range d.links {
			target := l.target
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			file, frag, _ := strings.Cut(target, "#")
			where := fmt.Sprintf("%s:%d: link %s", d.path, l.line, target)
			to := d
			if file != "" {
				p := filepath.ToSlash(filepath.Clean(filepath.Join(filepath.Dir(d.path), file)))
				if !dirExists(filepath.Join(root, p)) && !assert.FileExists(t, filepath.Join(root, p), where) {
					continue
				}
				to = byPath[p]
			}
			if frag == "" {
				continue
			}
			if to == nil {
				if strings.HasSuffix(file, ".md") {
					to = parse(file, mustRead(t, filepath.Join(root, filepath.Dir(d.path), file)))
				} else {
					continue // a line anchor in a source file, which GitHub resolves
				}
			}
			assert.True(t, to.anchors[frag], "%s: no heading %q in %s", where, frag, to.path)
		}
	}
}

func dirExists(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.IsDir()
}

func mustRead(t *testing.T, p string) []byte {
	b, err := os.ReadFile(p)
	require.NoError(t, err)
	return b
}

// imports maps the package names that snippets use to their paths.
var imports = map[string]string{
	"aguistate":  "github.com/aguistate/aguistate",
	"relay":      "github.com/aguistate/aguistate/relay",
	"redisstore": "github.com/aguistate/aguistate/relay/redisstore",
	"pgstore":    "github.com/aguistate/aguistate/relay/pgstore",
	"agenttest":  "github.com/aguistate/aguistate/agenttest",
	"redis":      "github.com/redis/go-redis/v9",
	"pgxpool":    "github.com/jackc/pgx/v5/pgxpool",
	"bytes":      "bytes",
	"context":    "context",
	"errors":     "errors",
	"filepath":   "path/filepath",
	"flag":       "flag",
	"fmt":        "fmt",
	"http":       "net/http",
	"httptest":   "net/http/httptest",
	"io":         "io",
	"json":       "encoding/json",
	"log":        "log",
	"os":         "os",
	"slog":       "log/slog",
	"strings":    "strings",
	"testing":    "testing",
	"assert":     "github.com/stretchr/testify/assert",
	"require":    "github.com/stretchr/testify/require",
	"time":       "time",
}

// source returns the Go file that compiles snippet s, and the line of the
// file where s's first line sits.
func source(s snippet) (string, int, error) {
	code := s.code
	if strings.HasPrefix(strings.TrimSpace(code), "package ") {
		return code, 1, nil
	}
	topLevel := false
	for _, line := range strings.Split(code, "\n") {
		if strings.HasPrefix(line, "func ") || strings.HasPrefix(line, "type ") {
			topLevel = true
		}
	}
	body := code
	if !topLevel {
		body = "func _(" + s.params + ") {\n" + code + "}\n"
	}
	body += s.decl + "\n"
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "snippet.go", "package snippet\n"+body, parser.SkipObjectResolution)
	if err != nil {
		return "", 0, err
	}
	used := make(map[string]bool)
	ast.Inspect(f, func(n ast.Node) bool {
		if sel, ok := n.(*ast.SelectorExpr); ok {
			if id, ok := sel.X.(*ast.Ident); ok {
				used[id.Name] = true
			}
		}
		return true
	})
	for _, p := range strings.Split(s.params+","+s.decl, ",") {
		if fields := strings.Fields(p); len(fields) == 2 {
			ty := strings.TrimLeft(fields[1], "*[]")
			if pkg, _, ok := strings.Cut(ty, "."); ok {
				used[pkg] = true
			}
		}
	}
	var names []string
	for name := range used {
		if imports[name] != "" {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	var b strings.Builder
	b.WriteString("package snippet\n\n")
	for _, name := range names {
		fmt.Fprintf(&b, "import %q\n", imports[name])
	}
	header := strings.Count(b.String(), "\n")
	if topLevel {
		b.WriteString(code)
		b.WriteString(s.decl + "\n")
		return b.String(), header + 1, nil
	}
	// A snippet's top-level variables may be unused, as in a fragment.
	var blanks []string
	if fn, ok := f.Decls[len(f.Decls)-1].(*ast.FuncDecl); ok {
		for _, st := range fn.Body.List {
			switch st := st.(type) {
			case *ast.AssignStmt:
				if st.Tok == token.DEFINE {
					for _, l := range st.Lhs {
						if id, ok := l.(*ast.Ident); ok && id.Name != "_" {
							blanks = append(blanks, id.Name)
						}
					}
				}
			case *ast.DeclStmt:
				if gd, ok := st.Decl.(*ast.GenDecl); ok && gd.Tok == token.VAR {
					for _, sp := range gd.Specs {
						for _, id := range sp.(*ast.ValueSpec).Names {
							blanks = append(blanks, id.Name)
						}
					}
				}
			}
		}
	}
	b.WriteString("func _(" + s.params + ") {\n")
	b.WriteString(code)
	for _, name := range blanks {
		fmt.Fprintf(&b, "\t_ = %s\n", name)
	}
	b.WriteString("}\n")
	b.WriteString(s.decl + "\n")
	return b.String(), header + 2, nil
}

func TestSnippets(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("the go command is not on PATH")
	}
	dir, err := os.MkdirTemp(".", "_snippets")
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(dir) })
	type placed struct {
		doc    string
		line   int // of the snippet's first line in doc
		offset int // of the snippet's first line in its file
	}
	where := make(map[string]placed)
	var pkgs []string
	for _, d := range documents(t) {
		for i, s := range d.snippets {
			if s.skip {
				continue
			}
			src, offset, err := source(s)
			if !assert.NoError(t, err, "%s:%d: the snippet does not parse", d.path, s.line) {
				continue
			}
			name := fmt.Sprintf("s%02d_%d", len(pkgs), i)
			require.NoError(t, os.MkdirAll(filepath.Join(dir, name), 0o755))
			require.NoError(t, os.WriteFile(filepath.Join(dir, name, "snippet.go"), []byte(src), 0o644))
			where[name] = placed{d.path, s.line, offset}
			pkgs = append(pkgs, "./"+filepath.ToSlash(filepath.Join(dir, name)))
		}
	}
	if len(pkgs) == 0 {
		return
	}
	out, err := exec.Command("go", append([]string{"vet"}, pkgs...)...).CombinedOutput()
	if err == nil {
		return
	}
	// Each message names snippet.go:LINE:COL in a snippet's folder: say
	// where that is in the Markdown file.
	msg := regexp.MustCompile(`(_snippets[^/\s]*/(s\d+_\d+))/snippet\.go:(\d+)(:\d+)?`)
	text := msg.ReplaceAllStringFunc(string(out), func(m string) string {
		sm := msg.FindStringSubmatch(m)
		p, ok := where[sm[2]]
		var line int
		fmt.Sscan(sm[3], &line)
		if !ok {
			return m
		}
		return fmt.Sprintf("%s:%d", p.doc, p.line+line-p.offset)
	})
	t.Errorf("Go snippets do not compile (go vet):\n%s", text)
}
