// Package doccheck holds the test that keeps the README and the guides in
// docs/ honest: every relative link resolves, to a file and a heading, and
// every Go snippet compiles. It has no API.
//
// A Go snippet is a fenced code block whose info string is "go". One that
// begins with "package" is a whole file; one with top-level declarations
// (func, type) is a file without its package clause and imports; any other
// is a function body with ctx (context.Context) and url (string) in scope.
// The imports are those of the packages its selectors name. An HTML comment
// on the line before the fence changes that:
//
//	<!-- go: params(w http.ResponseWriter, req *http.Request) -->
//	<!-- go: decl(var weather aguistate.Tool) -->
//	<!-- go: skip -->
//
// The first gives a function body other names in scope; the second adds
// declarations to the snippet's file (a name an earlier snippet made);
// the third leaves the snippet unchecked (say why next to it).
package doccheck
