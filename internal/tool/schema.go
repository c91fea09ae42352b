package tool

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"

	"agentd/internal/errdefs"
)

// emptySchema is the schema of a tool that declares none: an object with no
// declared properties, which is what model APIs expect for "no arguments".
const emptySchema = `{"type":"object","properties":{}}`

// maxReportedProblems bounds the validation problems listed in one result so
// a wildly wrong call does not flood the model's context.
const maxReportedProblems = 5

// compileSchema compiles a tool's argument schema once, at registration. It
// returns the schema as the model will see it (raw, or emptySchema).
func compileSchema(name string, raw []byte) (*jsonschema.Schema, []byte, error) {
	if len(bytes.TrimSpace(raw)) == 0 {
		raw = []byte(emptySchema)
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return nil, nil, errdefs.Validationf("tool %q: schema is not valid JSON: %w", name, err)
	}
	obj, ok := doc.(map[string]any)
	if !ok {
		return nil, nil, errdefs.Validationf("tool %q: schema must be a JSON object, got %s", name, raw)
	}
	if t, ok := obj["type"]; ok && t != "object" {
		return nil, nil, errdefs.Validationf(`tool %q: schema "type" must be "object" (the arguments object), got %v`, name, t)
	}
	sch, err := compileDoc(name, doc)
	if err != nil {
		return nil, nil, errdefs.Validationf("tool %q: %w", name, err)
	}
	return sch, raw, nil
}

// compileDoc compiles a decoded schema offline (Draft 2020-12 by default,
// formats asserted, no remote or file references).
func compileDoc(name string, doc any) (*jsonschema.Schema, error) {
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.AssertFormat()
	c.UseLoader(refuseLoader{})
	loc := "https://tools.agentd.invalid/" + name + ".schema.json"
	if err := c.AddResource(loc, doc); err != nil {
		return nil, fmt.Errorf("schema: %w", err)
	}
	sch, err := c.Compile(loc)
	if err != nil {
		return nil, fmt.Errorf("invalid schema: %w", err)
	}
	return sch, nil
}

// DocumentSchema is a compiled JSON Schema for documents other than call
// arguments: a structured answer, say. It is safe for concurrent use.
type DocumentSchema struct{ s *jsonschema.Schema }

// CompileDocumentSchema compiles raw, a JSON Schema of any type, named name
// in errors.
func CompileDocumentSchema(name string, raw []byte) (*DocumentSchema, error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return nil, errdefs.Validationf("%s: schema is not valid JSON: %w", name, err)
	}
	sch, err := compileDoc(name, doc)
	if err != nil {
		return nil, errdefs.Validationf("%s: %w", name, err)
	}
	return &DocumentSchema{s: sch}, nil
}

// Check reports whether doc is JSON that the schema accepts; the error
// lists the problems (at most a few), written for a model to fix them.
func (s *DocumentSchema) Check(doc []byte) error {
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(doc))
	if err != nil {
		return errdefs.Validationf("not valid JSON: %w", err)
	}
	if err := s.s.Validate(v); err != nil {
		var ve *jsonschema.ValidationError
		if errors.As(err, &ve) {
			return errdefs.Validation(errors.New(describeProblems(ve)))
		}
		return errdefs.Validation(err)
	}
	return nil
}

// refuseLoader keeps schema compilation offline: a tool's schema must be
// self-contained (local "$defs" and "#/..." references only). The draft
// meta-schemas are embedded in the library and never reach a loader.
type refuseLoader struct{}

func (refuseLoader) Load(url string) (any, error) {
	return nil, fmt.Errorf("reference to %q: remote and file references are disabled", url)
}

// parseArguments decodes and validates call arguments. Empty arguments mean
// an empty object: models send "" for tools without parameters. The error
// message is written for the model and does not name the tool.
func parseArguments(sch *jsonschema.Schema, args []byte) ([]byte, error) {
	if len(bytes.TrimSpace(args)) == 0 {
		args = []byte("{}")
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(args))
	if err != nil {
		return nil, errdefs.Validationf("arguments are not valid JSON: %w", err)
	}
	if err := sch.Validate(doc); err != nil {
		var ve *jsonschema.ValidationError
		if errors.As(err, &ve) {
			return nil, errdefs.Validation(errors.New(describeProblems(ve)))
		}
		return nil, errdefs.Validationf("arguments: %w", err)
	}
	return args, nil
}

// describeProblems flattens a validation error tree into its leaves, one
// "argument <JSON pointer>: <reason>" each, sorted so the text is stable.
func describeProblems(ve *jsonschema.ValidationError) string {
	var problems []string
	collectProblems(ve, &problems)
	slices.Sort(problems)
	problems = slices.Compact(problems)
	if n := len(problems); n > maxReportedProblems {
		problems = append(problems[:maxReportedProblems], fmt.Sprintf("and %d more problems", n-maxReportedProblems))
	}
	return strings.Join(problems, "; ")
}

func collectProblems(ve *jsonschema.ValidationError, out *[]string) {
	if len(ve.Causes) > 0 {
		for _, c := range ve.Causes {
			collectProblems(c, out)
		}
		return
	}
	// Required and additionalProperties are reported at the object; point at
	// the property itself, which is what the model has to add or remove.
	switch k := ve.ErrorKind.(type) {
	case *kind.Required:
		for _, p := range k.Missing {
			*out = append(*out, problem(append(slices.Clip(ve.InstanceLocation), p), "missing property"))
		}
	case *kind.AdditionalProperties:
		for _, p := range k.Properties {
			*out = append(*out, problem(append(slices.Clip(ve.InstanceLocation), p), "property not allowed"))
		}
	default:
		leaf := &jsonschema.ValidationError{ErrorKind: k}
		*out = append(*out, problem(ve.InstanceLocation, leaf.BasicOutput().Error.String()))
	}
}

func problem(location []string, reason string) string {
	if len(location) == 0 {
		return "arguments: " + reason
	}
	var b strings.Builder
	b.WriteString("argument ")
	for _, tok := range location {
		b.WriteByte('/')
		b.WriteString(strings.NewReplacer("~", "~0", "/", "~1").Replace(tok))
	}
	b.WriteString(": ")
	b.WriteString(reason)
	return b.String()
}
