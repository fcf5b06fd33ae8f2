// Command validate applies a recorded AG-UI event stream to a Consumer and
// renders the agent's state only while it validates against a JSON Schema,
// as the spec's Security Considerations ask: state events are remote writes
// into application state, so validate what you read out of it before acting
// on it.
//
// Usage:
//
//	go run ./examples/validate [-schema SCHEMA.json] [-input RUN_INPUT.json] STREAM
//
// STREAM is a server-sent event stream, JSON Lines, or a JSON array of
// events. -input names a RunAgentInput JSON file whose state and messages
// are the starting value. -schema names a JSON Schema file; the default is
// the bundled recipe.schema.json, for the recipe state of the AG-UI .NET
// Step05 state management sample: {"recipe": {"title", "cuisine",
// "ingredients", "steps", "prep_time_minutes", "cook_time_minutes",
// "skill_level"}}.
//
// After every event that changes the state, the whole state is validated
// against the schema and its "recipe" is then decoded strictly into a Go
// struct with aguistate.Value.Decode. A state that passes both is
// "rendered": standard output gets "render: TITLE (N ingredients, M
// steps)". Any other is not: standard error gets "rejected: event N:
// POINTER: REASON" with the first validation error (by JSON Pointer) or the
// decoding error. The final state is checked the same way, and only if it
// passes does standard output get "final: ..." with the decoded recipe;
// otherwise standard error gets "rejected: final state: ...". Skipped events
// give "warning: ..." and a fatal one "error: ..." on standard error, as in
// examples/replay.
//
// The exit status is 0; 1 after a fatal stream error or when the final state
// is rejected; 2 for bad usage, an unreadable file or a schema that does not
// compile.
package main

import (
	"bytes"
	"cmp"
	"context"
	_ "embed"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/aguistate/aguistate"
	"github.com/aguistate/aguistate/examples/internal/cli"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

// recipeSchema is the default schema.
//
//go:embed recipe.schema.json
var recipeSchema []byte

// Recipe is the Go form of the state's "recipe" member. Value.Decode fills
// it strictly: every member must name a field, and each must have the
// field's type.
type Recipe struct {
	Title           string   `json:"title"`
	Cuisine         string   `json:"cuisine"`
	Ingredients     []string `json:"ingredients"`
	Steps           []string `json:"steps"`
	PrepTimeMinutes int      `json:"prep_time_minutes"`
	CookTimeMinutes int      `json:"cook_time_minutes"`
	SkillLevel      string   `json:"skill_level"`
}

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	flags := flag.NewFlagSet("validate", flag.ContinueOnError)
	flags.SetOutput(stderr)
	schemaPath := flags.String("schema", "", "JSON Schema `file` the state must validate against (default: the bundled recipe schema)")
	inputPath := flags.String("input", "", "RunAgentInput JSON `file` giving the starting state and messages")
	flags.Usage = func() {
		fmt.Fprintln(stderr, "usage: validate [-schema SCHEMA.json] [-input RUN_INPUT.json] STREAM")
		flags.PrintDefaults()
	}
	if err := flags.Parse(args); err == flag.ErrHelp {
		return 0
	} else if err != nil {
		return 2
	}
	if flags.NArg() != 1 {
		flags.Usage()
		return 2
	}

	schema, err := compileSchema(*schemaPath)
	if err != nil {
		fmt.Fprintln(stderr, "error:", err)
		return 2
	}

	c := aguistate.New(nil)
	c.Subscribe(func(ch aguistate.Change) {
		if ch.Warning != nil {
			fmt.Fprintln(stderr, "warning:", ch.Warning)
		}
		if !ch.StateChanged || ch.Event.Type == "" {
			return // no change, or the run input's (checked at the end)
		}
		recipe, err := check(schema, c.State())
		if err != nil {
			fmt.Fprintf(stderr, "rejected: event %d: %s\n", ch.Event.Position, err)
			return
		}
		title := recipe.Title
		if title == "" {
			title = "(untitled)"
		}
		fmt.Fprintf(stdout, "render: %s (%d ingredients, %d steps)\n", title, len(recipe.Ingredients), len(recipe.Steps))
	})
	if *inputPath != "" {
		_, err := cli.LoadInput(c, *inputPath)
		if err != nil {
			fmt.Fprintln(stderr, "error:", err)
			return 2
		}
	}
	f, err := os.Open(flags.Arg(0))
	if err != nil {
		fmt.Fprintln(stderr, "error:", err)
		return 2
	}
	defer f.Close()

	status := 0
	if err := c.Run(context.Background(), f); err != nil {
		fmt.Fprintln(stderr, "error:", err)
		status = 1
	}

	recipe, err := check(schema, c.State())
	if err != nil {
		fmt.Fprintln(stderr, "rejected: final state:", err)
		return 1
	}
	fmt.Fprintf(stdout, "final: %s, %s, %d ingredients, %d steps, prep %d min, cook %d min, skill %q\n",
		recipe.Title, recipe.Cuisine, len(recipe.Ingredients), len(recipe.Steps),
		recipe.PrepTimeMinutes, recipe.CookTimeMinutes, recipe.SkillLevel)
	return status
}

// compileSchema compiles the JSON Schema in the file at path, or the
// bundled recipe schema when path is "".
func compileSchema(path string) (*jsonschema.Schema, error) {
	text, url := recipeSchema, "recipe.schema.json"
	if path != "" {
		var err error
		if text, err = os.ReadFile(path); err != nil {
			return nil, err
		}
		url = path
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(text))
	if err != nil {
		return nil, fmt.Errorf("schema %s: %w", url, err)
	}
	compiler := jsonschema.NewCompiler()
	if err := compiler.AddResource(url, doc); err != nil {
		return nil, fmt.Errorf("schema %s: %w", url, err)
	}
	return compiler.Compile(url)
}

// check validates state against schema and then decodes its "recipe"
// strictly into a Recipe (an integer-valued number such as 1e1 passes
// "type": "integer" and decodes into an int as 10). The error is the first
// that either finds.
func check(schema *jsonschema.Schema, state aguistate.Value) (Recipe, error) {
	var recipe Recipe
	if err := validate(schema, state); err != nil {
		return recipe, err
	}
	if err := state.Decode("/recipe", &recipe); err != nil {
		return recipe, err
	}
	return recipe, nil
}

// validate checks state against schema and returns the first validation
// error, by JSON Pointer, as "POINTER: REASON".
func validate(schema *jsonschema.Schema, state aguistate.Value) error {
	// jsonschema.UnmarshalJSON keeps numbers as json.Number, so the schema
	// sees each number's exact digits: 1e400 or 9007199254740993 are
	// checked as sent, not as a float64 made of them.
	text, _ := state.MarshalJSON()
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(text))
	if err != nil {
		return err
	}
	err = schema.Validate(doc)
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return err
	}
	type leaf struct{ at, why string }
	var leaves []leaf
	var walk func(*jsonschema.ValidationError)
	walk = func(e *jsonschema.ValidationError) {
		if len(e.Causes) == 0 {
			leaves = append(leaves, leaf{pointer(e.InstanceLocation), e.BasicOutput().Error.String()})
		}
		for _, cause := range e.Causes {
			walk(cause)
		}
	}
	walk(ve)
	// The library gathers causes in no fixed order; report the first by
	// location so that the output is the same on every run.
	first := slices.MinFunc(leaves, func(a, b leaf) int {
		return cmp.Or(strings.Compare(a.at, b.at), strings.Compare(a.why, b.why))
	})
	if first.at == "" {
		return errors.New("the whole state: " + first.why)
	}
	return errors.New(first.at + ": " + first.why)
}

// pointer formats reference tokens as a JSON Pointer (RFC 6901).
func pointer(tokens []string) string {
	var b strings.Builder
	for _, t := range tokens {
		b.WriteByte('/')
		b.WriteString(strings.NewReplacer("~", "~0", "/", "~1").Replace(t))
	}
	return b.String()
}
