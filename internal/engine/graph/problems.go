package graph

import (
	"fmt"
	"strings"

	"agentd/internal/errdefs"
)

// Problem is one thing wrong with a workflow document: where (Path, in the
// document's own terms: `steps[3].dependsOn[0]`), what kind (Code, one of
// the error tags of zenflow's conformance test cases, "validation" for the
// rest) and why (Message).
type Problem struct {
	Path    string `json:"path"`
	Code    string `json:"code"`
	Message string `json:"message"`
}

// String renders the problem as "path: message".
func (p Problem) String() string {
	if p.Path == "" {
		return p.Message
	}
	return p.Path + ": " + p.Message
}

// Problems is every problem found in one document, in document order. As
// an error it is an errdefs Validation error whose text has one problem
// per line.
type Problems []Problem

// Error lists the problems, one per line.
func (ps Problems) Error() string {
	lines := make([]string, len(ps))
	for i, p := range ps {
		lines[i] = p.String()
	}
	return strings.Join(lines, "\n")
}

// ErrorClass places Problems in errdefs.ClassValidation.
func (ps Problems) ErrorClass() errdefs.Class { return errdefs.ClassValidation }

// Has reports whether some problem carries code.
func (ps Problems) Has(code string) bool {
	for _, p := range ps {
		if p.Code == code {
			return true
		}
	}
	return false
}

// The problem codes. They match the `expected.error` tags of zenflow's
// spec/v1 test cases, so a conformance run can compare them.
const (
	CodeValidation          = "validation"
	CodeMissingName         = "missing_name"
	CodeMissingSteps        = "missing_steps"
	CodeEmptySteps          = "empty_steps"
	CodeInvalidStepID       = "invalid_step_id"
	CodeAgentNoDescription  = "agent_missing_description"
	CodeNegativeValue       = "negative_value"
	CodeDuplicateStep       = "duplicate_step"
	CodeMissingAgent        = "missing_agent"
	CodeMissingDep          = "missing_dep"
	CodeCycle               = "cycle"
	CodeLoopValidation      = "loop_validation"
	CodeLoopNoMaxIterations = "loop_missing_max_iterations"
	CodeForEachEmpty        = "foreach_empty_array"
	CodeUntilAgentBadRef    = "untilagent_bad_ref"
	CodeUntilAgentSchema    = "untilagent_bad_schema"
	CodeNestedLoop          = "nested_loop_prohibited"
	CodeUnknownVersion      = "unknown_version"
	CodeCEL                 = "cel"
	CodeResultSchema        = "result_schema"
	CodeInclude             = "include"
	CodeFileRef             = "file_reference"
	CodeTooLarge            = "too_large"
)

// problems collects Problems while a document is checked, and warnings:
// what may still go wrong when the workflow runs but does not make the
// document invalid.
type problems struct{ list, warnings Problems }

func (ps *problems) add(path, code, format string, args ...any) {
	ps.list = append(ps.list, Problem{Path: path, Code: code, Message: fmt.Sprintf(format, args...)})
}

func (ps *problems) warn(path, code, format string, args ...any) {
	ps.warnings = append(ps.warnings, Problem{Path: path, Code: code, Message: fmt.Sprintf(format, args...)})
}

// err returns the collected problems as an error, or nil.
func (ps *problems) err() error {
	if len(ps.list) == 0 {
		return nil
	}
	return ps.list
}

// prefixed returns the problems of a nested document (an include) with
// their paths placed under at.
func prefixed(at string, in Problems) Problems {
	out := make(Problems, len(in))
	for i, p := range in {
		p.Path = join(at, p.Path)
		out[i] = p
	}
	return out
}

func join(a, b string) string {
	switch {
	case a == "":
		return b
	case b == "":
		return a
	case strings.HasPrefix(b, "["):
		return a + b
	}
	return a + "." + b
}

func index(path, field string, i int) string {
	return fmt.Sprintf("%s[%d]", join(path, field), i)
}
