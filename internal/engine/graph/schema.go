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
// the workflow schema and adds one problem per violated leaf. It returns
// the locations of the values at fault, for prune.
func checkSchema(doc any, ps *problems) [][]string {
	sch, err := compiledSchema()
	if err != nil {
		ps.add("", CodeValidation, "workflow schema: %v", err)
		return nil
	}
	err = sch.Validate(doc)
	var ve *jsonschema.ValidationError
	if err == nil || !errors.As(err, &ve) {
		return nil
	}
	var found Problems
	bad := collectSchemaProblems(ve, &found)
	slices.SortStableFunc(found, func(a, b Problem) int { return strings.Compare(a.Path, b.Path) })
	ps.list = append(ps.list, slices.Compact(found)...)
	return bad
}

// collectSchemaProblems adds a problem per leaf of ve and returns the
// locations of the offending values (none for a missing field).
func collectSchemaProblems(ve *jsonschema.ValidationError, out *Problems) (bad [][]string) {
	if len(ve.Causes) > 0 {
		for _, c := range ve.Causes {
			bad = append(bad, collectSchemaProblems(c, out)...)
		}
		return bad
	}
	loc := ve.InstanceLocation
	switch k := ve.ErrorKind.(type) {
	case *kind.Required:
		for _, name := range k.Missing {
			*out = append(*out, Problem{Path: pointerPath(append(slices.Clip(loc), name)),
				Code: requiredCode(loc, name), Message: "required field is missing"})
		}
		return nil
	case *kind.AdditionalProperties:
		for _, name := range k.Properties {
			at := append(slices.Clip(loc), name)
			*out = append(*out, Problem{Path: pointerPath(at), Code: CodeValidation, Message: "unknown field"})
			bad = append(bad, at)
		}
		return bad
	case *kind.Minimum:
		*out = append(*out, Problem{Path: pointerPath(loc), Code: CodeNegativeValue,
			Message: fmt.Sprintf("must be at least %s, got %s", k.Want.RatString(), k.Got.RatString())})
	case *kind.MinLength, *kind.Pattern:
		if durationField(loc) {
			*out = append(*out, Problem{Path: pointerPath(loc), Code: CodeValidation,
				Message: "not a duration: want hours, minutes and seconds such as \"30m\", \"1h30m\" or \"45s\""})
			break
		}
		if k, ok := k.(*kind.MinLength); ok {
			*out = append(*out, Problem{Path: pointerPath(loc), Code: schemaCode(loc, k), Message: minLengthMessage(k.Want)})
			break
		}
		leaf := &jsonschema.ValidationError{ErrorKind: k}
		*out = append(*out, Problem{Path: pointerPath(loc), Code: schemaCode(loc, k),
			Message: leaf.BasicOutput().Error.String()})
	case *kind.MinItems:
		msg := fmt.Sprintf("needs at least %d item(s), got %d", k.Want, k.Got)
		*out = append(*out, Problem{Path: pointerPath(loc), Code: schemaCode(loc, k), Message: msg})
	case *kind.MaxLength:
		*out = append(*out, Problem{Path: pointerPath(loc), Code: schemaCode(loc, k),
			Message: fmt.Sprintf("is %d characters long, more than the %d allowed", k.Got, k.Want)})
	default:
		leaf := &jsonschema.ValidationError{ErrorKind: k}
		*out = append(*out, Problem{Path: pointerPath(loc), Code: schemaCode(loc, k),
			Message: leaf.BasicOutput().Error.String()})
	}
	return [][]string{loc}
}

func minLengthMessage(n int) string {
	if n == 1 {
		return "must not be empty"
	}
	return fmt.Sprintf("must be at least %d characters long", n)
}

func durationField(loc []string) bool {
	if len(loc) == 0 {
		return false
	}
	switch loc[len(loc)-1] {
	case "timeout", "stepTimeout", "delay":
		return true
	}
	return false
}

// prune removes the values at locs from doc, so that a document the
// schema rejected still decodes and the validator rules still run.
func prune(doc any, locs [][]string) {
	for _, loc := range locs {
		if len(loc) == 0 {
			continue
		}
		parent := doc
		for _, tok := range loc[:len(loc)-1] {
			parent = child(parent, tok)
		}
		last := loc[len(loc)-1]
		switch p := parent.(type) {
		case map[string]any:
			delete(p, last)
		case []any:
			if i, err := strconv.Atoi(last); err == nil && i < len(p) {
				p[i] = nil
			}
		}
	}
}

func child(v any, tok string) any {
	switch t := v.(type) {
	case map[string]any:
		return t[tok]
	case []any:
		if i, err := strconv.Atoi(tok); err == nil && i < len(t) {
			return t[i]
		}
	}
	return nil
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
