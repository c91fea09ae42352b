package graph

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// Load reads the workflow file at path, YAML or JSON, checks it as Parse
// does and resolves what it references, relative to its directory (spec
// §7, §9): @ file references in agent prompts and step instructions are
// read, contextFiles must exist (they are read when their step runs) and
// included sub-workflows are loaded the same way, at most MaxIncludeDepth
// deep, their agents merged into the including workflow's. The error is
// Problems.
func Load(path string) (*Workflow, error) {
	var ps problems
	w := loadFile(path, 0, &ps)
	if w != nil {
		w.warnings = ps.warnings
	}
	return w, ps.err()
}

// ParseIn parses an inline workflow (one embedded in the server
// configuration) whose file references resolve against dir; dir "" means
// it may have none.
func ParseIn(data []byte, dir string) (*Workflow, error) {
	var ps problems
	w := parse(data, &ps)
	if w != nil {
		w.check(&ps)
		if len(ps.list) == 0 {
			w.resolve(dir, 0, &ps)
		}
		w.warnings = ps.warnings
	}
	return w, ps.err()
}

func loadFile(path string, depth int, ps *problems) *Workflow {
	data, err := readLimited(path, MaxFileSizeBytes)
	if err != nil {
		ps.add("", CodeFileRef, "%v", err)
		return nil
	}
	w := parse(data, ps)
	if w == nil {
		return nil
	}
	w.check(ps)
	if len(ps.list) == 0 {
		w.resolve(filepath.Dir(path), depth, ps)
	}
	return w
}

// resolve reads the document's file references; w has passed check.
func (w *Workflow) resolve(dir string, depth int, ps *problems) {
	w.dir = dir
	for _, name := range slices.Sorted(maps.Keys(w.Agents)) {
		a := w.Agents[name]
		text, err := w.fileRef(a.Prompt)
		if err != nil {
			ps.add("agents."+name+".prompt", CodeFileRef, "%v", err)
		}
		a.prompt = text
	}
	w.resolveSteps("", w.Steps, depth, ps)
}

func (w *Workflow) resolveSteps(path string, steps []*Step, depth int, ps *problems) {
	for i, s := range steps {
		p := index(path, "steps", i)
		text, err := w.fileRef(s.Instructions)
		if err != nil {
			ps.add(p+".instructions", CodeFileRef, "%v", err)
		}
		s.text = text
		s.files = nil
		for j, f := range s.ContextFiles {
			full, err := w.attachment(f)
			switch {
			case errors.Is(err, errNotYet):
				ps.warn(index(p, "contextFiles", j), CodeFileRef, "%v", err)
			case err != nil:
				ps.add(index(p, "contextFiles", j), CodeFileRef, "%v", err)
			}
			s.files = append(s.files, full)
		}
		if s.Include != "" {
			w.include(p, s, depth, ps)
		}
		if s.Loop != nil {
			w.resolveSteps(p+".loop", s.Loop.Steps, depth, ps)
		}
	}
}

// include loads s's sub-workflow and merges its agents.
func (w *Workflow) include(p string, s *Step, depth int, ps *problems) {
	ref := s.Include
	if named, ok := w.Includes[ref]; ok {
		ref = named
	}
	at := fmt.Sprintf("%s.include(%s)", p, ref)
	if depth+1 > MaxIncludeDepth {
		ps.add(p+".include", CodeInclude, "%q: includes nest more than %d deep", ref, MaxIncludeDepth)
		return
	}
	if w.dir == "" {
		ps.add(p+".include", CodeInclude, "%q: an inline workflow cannot include files; give the workflow as a file", ref)
		return
	}
	var sub problems
	s.sub = loadFile(w.path(ref), depth+1, &sub)
	ps.list = append(ps.list, prefixed(at, sub.list)...)
	ps.warnings = append(ps.warnings, prefixed(at, sub.warnings)...)
	if s.sub == nil || len(sub.list) > 0 {
		s.sub = nil
		return
	}
	for _, name := range slices.Sorted(maps.Keys(s.sub.Agents)) {
		a := s.sub.Agents[name]
		if mine, ok := w.Agents[name]; ok {
			if !sameAgent(mine, a) {
				ps.add(at+".agents."+name, CodeInclude, "agent %q is also defined, differently, by the including workflow", name)
			}
			continue
		}
		if w.Agents == nil {
			w.Agents = map[string]*Agent{}
		}
		w.Agents[name] = a
	}
}

func sameAgent(a, b *Agent) bool {
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	return bytes.Equal(ja, jb) && a.prompt == b.prompt
}

// fileRef returns v, or the text of the file it names with a leading @.
func (w *Workflow) fileRef(v string) (string, error) {
	rel, ok := strings.CutPrefix(v, "@")
	if !ok {
		return v, nil
	}
	if w.dir == "" {
		return "", fmt.Errorf("%q: an inline workflow cannot reference files", v)
	}
	b, err := readLimited(w.path(rel), MaxAttachmentSizeBytes)
	if err != nil {
		return "", err
	}
	return string(b), nil
}

// attachment checks a context file and returns its full path.
// errNotYet is a context file that does not exist when the workflow is
// loaded: the spec reads context files when their step runs, so it may
// yet appear; validation warns, the step fails if it is still missing.
var errNotYet = errors.New("does not exist (yet): the step that reads it fails unless it exists when the step runs")

func (w *Workflow) attachment(rel string) (string, error) {
	if w.dir == "" {
		return "", fmt.Errorf("%q: an inline workflow cannot reference files", rel)
	}
	full := w.path(rel)
	fi, err := os.Stat(full)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return full, fmt.Errorf("%q %w", rel, errNotYet)
	case err != nil:
		return full, fmt.Errorf("%q: %v", rel, err)
	case fi.IsDir():
		return full, fmt.Errorf("%q is a directory", rel)
	case fi.Size() > MaxAttachmentSizeBytes:
		return full, fmt.Errorf("%q is %d bytes, more than the %d allowed", rel, fi.Size(), MaxAttachmentSizeBytes)
	}
	return full, nil
}

func (w *Workflow) path(rel string) string {
	if filepath.IsAbs(rel) {
		return rel
	}
	return filepath.Join(w.dir, filepath.FromSlash(rel))
}

// readLimited reads a file of at most limit bytes.
func readLimited(path string, limit int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if fi.IsDir() {
		return nil, fmt.Errorf("%s is a directory", path)
	}
	if fi.Size() > limit {
		return nil, fmt.Errorf("%s is %d bytes, more than the %d allowed: %w", path, fi.Size(), limit, errTooLarge)
	}
	return os.ReadFile(path)
}

// errTooLarge marks a file over its size limit.
var errTooLarge = errors.New("file too large")
