package graph

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"unicode/utf8"
)

// prompt assembles the user message of an agent step (spec "Data
// Passing"): the instructions, the user's request, each completed
// dependency's content and result, what the scope passes down (forEach
// item, previous iteration, the enclosing step's dependencies) and the
// context files.
func (x *execution) prompt(sc *scope, s *Step) string {
	var b strings.Builder
	text := s.text
	if text == "" {
		text = s.Instructions
	}
	if text == "" {
		text = fmt.Sprintf("Carry out the workflow step %q.", s.ID)
	}
	b.WriteString(text)
	if sc.request != "" {
		fmt.Fprintf(&b, "\n\n## Request\n%s", sc.request)
	}
	b.WriteString(x.depsContext(sc, s))
	b.WriteString(sc.inherited)
	for _, f := range s.files {
		b.WriteString(contextFile(f))
	}
	return b.String()
}

// depsContext is the content (and result) of s's completed dependencies.
func (x *execution) depsContext(sc *scope, s *Step) string {
	var b strings.Builder
	for _, d := range s.DependsOn {
		r, ok := x.result(sc.prefix + d)
		if !ok || r.Status != StepCompleted {
			continue
		}
		fmt.Fprintf(&b, "\n\n## Output of step %s\n%s", d, r.Content)
		if r.Result != nil {
			j, _ := json.Marshal(r.Result)
			fmt.Fprintf(&b, "\n\n## Result of step %s\n%s", d, j)
		}
	}
	return b.String()
}

// itemContext is the forEach item injection of spec §6.
func itemContext(item any, index int) string {
	j, err := json.Marshal(item)
	if err != nil {
		j = []byte(fmt.Sprint(item))
	}
	return fmt.Sprintf("\n\n## forEach Item (index: %d)\n%s", index, j)
}

// contextFile is one context file's section. Text is inlined; other
// files are named with their size (the step's agent has no use for raw
// bytes in a text prompt).
func contextFile(path string) string {
	b, err := readLimited(path, MaxAttachmentSizeBytes)
	name := filepath.Base(path)
	switch {
	case err != nil:
		return fmt.Sprintf("\n\n## Context file %s\n(unreadable: %v)", name, err)
	case !utf8.Valid(b) || strings.ContainsRune(string(b), 0):
		return fmt.Sprintf("\n\n## Context file %s\n(binary file, %d bytes)", name, len(b))
	}
	return fmt.Sprintf("\n\n## Context file %s\n%s", name, b)
}
