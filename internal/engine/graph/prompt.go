package graph

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"
	"unicode/utf8"

	"agentd/internal/errdefs"
)

// prompt assembles the user message of an agent step (spec "Data
// Passing"): the instructions, the user's request, each completed
// dependency's content and result, what the scope passes down (forEach
// item, previous iteration, the enclosing step's dependencies) and the
// context files. A context file that cannot be read fails the step,
// naming the file as the workflow does (the spec resolves them when the
// step runs; validation only warns of one missing then).
func (x *execution) prompt(sc *scope, s *Step) (string, error) {
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
	deps, preserved := x.depsContext(sc, s)
	b.WriteString(deps)
	b.WriteString(sc.inherited)
	for i, f := range s.files {
		section, err := contextFile(f)
		if err != nil {
			return "", errdefs.NotFoundf("step %q: context file %q %v", s.ID, s.ContextFiles[i], err)
		}
		b.WriteString(section)
	}
	return capPrompt(b.String(), preserved || sc.preserved), nil
}

// depsContext is the content (and result) of s's completed dependencies,
// each cut to MaxDependencyBytes unless preserved; preserved reports
// whether one was.
func (x *execution) depsContext(sc *scope, s *Step) (_ string, preserved bool) {
	var b strings.Builder
	for _, d := range s.DependsOn {
		r, ok := x.result(sc.prefix + d)
		if !ok || r.Status != StepCompleted {
			continue
		}
		content := r.Content
		if r.PreserveContent {
			preserved = true
		} else {
			content = truncate(content, MaxDependencyBytes)
		}
		fmt.Fprintf(&b, "\n\n## Output of step %s\n%s", d, content)
		if r.Result != nil {
			j, _ := json.Marshal(r.Result)
			fmt.Fprintf(&b, "\n\n## Result of step %s\n%s", d, truncate(string(j), MaxDependencyBytes))
		}
	}
	return b.String(), preserved
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
// bytes in a text prompt). The error says why the file cannot be read
// without naming the server's directories.
func contextFile(path string) (string, error) {
	b, err := readLimited(path, MaxAttachmentSizeBytes)
	name := filepath.Base(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "", errors.New("does not exist")
	case errors.Is(err, errTooLarge):
		return "", fmt.Errorf("is larger than the %d bytes allowed", MaxAttachmentSizeBytes)
	case err != nil:
		return "", errors.New("cannot be read")
	case !utf8.Valid(b) || strings.ContainsRune(string(b), 0):
		return fmt.Sprintf("\n\n## Context file %s\n(binary file, %d bytes)", name, len(b)), nil
	}
	return fmt.Sprintf("\n\n## Context file %s\n%s", name, b), nil
}
