package graph

import (
	"bytes"
	_ "embed"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
)

// SchemaJSON is the JSON Schema (draft 2020-12) of a workflow document:
// zenflow's published spec/v1/schema.json (Apache-2.0), the structural
// layer of validation. Rules it cannot express live in validate.go.
//
//go:embed schema.json
var SchemaJSON []byte

const schemaURL = "https://zenflow.sh/spec/v1/schema.json"

// compiledSchema is compiled once, on first use; it is never mutated.
var compiledSchema = sync.OnceValues(func() (*jsonschema.Schema, error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(SchemaJSON))
	if err != nil {
		return nil, err
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.UseLoader(offline{})
	if err := c.AddResource(schemaURL, doc); err != nil {
		return nil, err
	}
	return c.Compile(schemaURL)
})

// offline refuses every remote reference: schemas here are self-contained.
type offline struct{}

func (offline) Load(url string) (any, error) {
	return nil, fmt.Errorf("reference to %q: remote and file references are disabled", url)
}

// checkSchema validates doc (decoded by jsonschema.UnmarshalJSON) against
// the workflow schema and adds one problem per violated leaf.
func checkSchema(doc any, ps *problems) {
	sch, err := compiledSchema()
	if err != nil {
		ps.add("", CodeValidation, "workflow schema: %v", err)
		return
	}
	err = sch.Validate(doc)
	var ve *jsonschema.ValidationError
	if err == nil || !errors.As(err, &ve) {
		return
	}
	var found Problems
	collectSchemaProblems(ve, &found)
	slices.SortStableFunc(found, func(a, b Problem) int { return strings.Compare(a.Path, b.Path) })
	ps.list = append(ps.list, slices.Compact(found)...)
}

func collectSchemaProblems(ve *jsonschema.ValidationError, out *Problems) {
	if len(ve.Causes) > 0 {
		for _, c := range ve.Causes {
			collectSchemaProblems(c, out)
		}
		return
	}
	loc := ve.InstanceLocation
	switch k := ve.ErrorKind.(type) {
	case *kind.Required:
		for _, name := range k.Missing {
			*out = append(*out, Problem{Path: pointerPath(append(slices.Clip(loc), name)),
				Code: requiredCode(loc, name), Message: "required field is missing"})
		}
	case *kind.AdditionalProperties:
		for _, name := range k.Properties {
			*out = append(*out, Problem{Path: pointerPath(append(slices.Clip(loc), name)),
				Code: CodeValidation, Message: "unknown field"})
		}
	case *kind.Minimum:
		*out = append(*out, Problem{Path: pointerPath(loc), Code: CodeNegativeValue,
			Message: fmt.Sprintf("must be at least %s, got %s", k.Want.RatString(), k.Got.RatString())})
	default:
		leaf := &jsonschema.ValidationError{ErrorKind: k}
		*out = append(*out, Problem{Path: pointerPath(loc), Code: schemaCode(loc, k),
			Message: leaf.BasicOutput().Error.String()})
	}
}

func requiredCode(loc []string, name string) string {
	switch {
	case len(loc) == 0 && name == "name":
		return CodeMissingName
	case len(loc) == 0 && name == "steps":
		return CodeMissingSteps
	case len(loc) == 2 && loc[0] == "agents" && name == "description":
		return CodeAgentNoDescription
	}
	return CodeValidation
}

func schemaCode(loc []string, k jsonschema.ErrorKind) string {
	last := ""
	if len(loc) > 0 {
		last = loc[len(loc)-1]
	}
	switch k.(type) {
	case *kind.MinItems:
		if len(loc) == 1 && last == "steps" {
			return CodeEmptySteps
		}
	case *kind.Pattern:
		if last == "id" {
			return CodeInvalidStepID
		}
	}
	if slices.Contains(loc, "loop") {
		return CodeLoopValidation
	}
	return CodeValidation
}

// pointerPath turns a JSON pointer's tokens into the document path style
// of the problems: steps[3].loop.steps[0].id.
func pointerPath(tokens []string) string {
	var b strings.Builder
	for i, t := range tokens {
		if _, err := strconv.Atoi(t); err == nil && i > 0 && arrayField(tokens[i-1]) {
			b.WriteString("[" + t + "]")
			continue
		}
		if b.Len() > 0 {
			b.WriteByte('.')
		}
		b.WriteString(t)
	}
	return b.String()
}

// arrayField reports whether a document key holds an array.
func arrayField(key string) bool {
	switch key {
	case "steps", "dependsOn", "contextFiles", "tools", "disallowedTools", "forEach":
		return true
	}
	return false
}
