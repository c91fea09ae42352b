package flow

import (
	"bytes"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"strings"

	"sigs.k8s.io/yaml"

	"agentd/internal/errdefs"
	"agentd/internal/strictjson"
)

// nodeExts are the extensions of node files in a flow directory.
var nodeExts = []string{".md", ".yaml", ".yml", ".json"}

// Load reads the flow at name in fsys: a directory laid out as Trellis
// lays out flows (one node per file, the node id being the file's path
// without its extension, Markdown bodies as content) or one YAML or JSON
// file with name, description, context and a list of nodes. Keys the node
// syntax does not know are errors naming the node and the key; Load checks
// the syntax only — Compile checks the graph.
func Load(fsys fs.FS, name string) (*Spec, error) {
	st, err := fs.Stat(fsys, name)
	if err != nil {
		return nil, errdefs.Validationf("flow %s: %w", name, err)
	}
	if st.IsDir() {
		return loadDir(fsys, name)
	}
	b, err := fs.ReadFile(fsys, name)
	if err != nil {
		return nil, errdefs.Validationf("flow %s: %w", name, err)
	}
	return ParseFile(b, name)
}

// ParseFile decodes a one-file flow (YAML or JSON) with a nodes list.
func ParseFile(b []byte, name string) (*Spec, error) {
	j, err := yaml.YAMLToJSONStrict(b)
	if err != nil {
		return nil, errdefs.Validationf("flow %s: not valid YAML: %v", name, err)
	}
	var s Spec
	if err := strictjson.Decode(j, &s); err != nil {
		return nil, errdefs.Validationf("flow %s: %v", name, err)
	}
	if len(s.Nodes) == 0 {
		return nil, errdefs.Validationf("flow %s: nodes: a flow needs at least one node", name)
	}
	for i, n := range s.Nodes {
		if n.ID == "" {
			return nil, errdefs.Validationf("flow %s: nodes[%d].id: required", name, i)
		}
	}
	if s.Name == "" {
		s.Name = strings.TrimSuffix(path.Base(name), path.Ext(name))
	}
	return &s, nil
}

// loadDir reads every node file under dir. Hidden entries, README files
// and Trellis's tools.yaml are not nodes.
func loadDir(fsys fs.FS, dir string) (*Spec, error) {
	s := &Spec{Name: path.Base(dir)}
	from := map[string]string{} // node id → file, for duplicates
	err := fs.WalkDir(fsys, dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		base := d.Name()
		if p != dir && strings.HasPrefix(base, ".") {
			if d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		ext := path.Ext(base)
		if d.IsDir() || !slices.Contains(nodeExts, ext) || skipFile(base) {
			return nil
		}
		rel := strings.TrimPrefix(strings.TrimPrefix(p, dir), "/")
		id := strings.TrimSuffix(rel, ext)
		if prev, dup := from[id]; dup {
			return errdefs.Validationf("flow %s: node %q is defined twice (%s and %s)", dir, id, prev, rel)
		}
		from[id] = rel
		b, err := fs.ReadFile(fsys, p)
		if err != nil {
			return err
		}
		n, err := parseNodeFile(b, ext)
		if err != nil {
			return errdefs.Validationf("flow %s: node %q (%s): %v", dir, id, rel, err)
		}
		if n.ID != "" && n.ID != id {
			return errdefs.Validationf("flow %s: node %q (%s): id %q differs from the file name", dir, id, rel, n.ID)
		}
		n.ID = id
		s.Nodes = append(s.Nodes, n)
		return nil
	})
	if err != nil {
		if errdefs.IsValidation(err) {
			return nil, err
		}
		return nil, errdefs.Validationf("flow %s: %w", dir, err)
	}
	if len(s.Nodes) == 0 {
		return nil, errdefs.Validationf("flow %s: no node files (%s)", dir, strings.Join(nodeExts, ", "))
	}
	return s, nil
}

func skipFile(base string) bool {
	lower := strings.ToLower(base)
	return strings.HasPrefix(lower, "readme.") || lower == "tools.yaml" || lower == "tools.yml"
}

// parseNodeFile decodes one node file: YAML or JSON, or Markdown with an
// optional YAML front matter whose body is the content.
func parseNodeFile(b []byte, ext string) (Node, error) {
	b = bytes.ReplaceAll(b, []byte("\r\n"), []byte("\n"))
	var front, body []byte
	if ext == ".md" {
		front, body = splitFrontMatter(b)
	} else {
		front = b
	}
	var n Node
	if len(bytes.TrimSpace(front)) > 0 {
		j, err := yaml.YAMLToJSONStrict(front)
		if err != nil {
			return n, fmt.Errorf("not valid YAML: %v", err)
		}
		if err := strictjson.Decode(j, &n); err != nil {
			return n, err
		}
	}
	if text := strings.TrimSpace(string(body)); text != "" {
		if n.Content != "" {
			return n, fmt.Errorf("content: given both in the front matter and as the Markdown body")
		}
		n.Content = text
	}
	return n, nil
}

// splitFrontMatter splits a Markdown file into its YAML front matter
// (between a first line "---" and the next line "---") and its body.
func splitFrontMatter(b []byte) (front, body []byte) {
	rest, ok := bytes.CutPrefix(b, []byte("---\n"))
	if !ok {
		return nil, b
	}
	if end, after, ok := bytes.Cut(rest, []byte("\n---\n")); ok {
		return end, after
	}
	if end, ok := bytes.CutSuffix(bytes.TrimRight(rest, "\n"), []byte("\n---")); ok {
		return end, nil
	}
	if bytes.HasPrefix(rest, []byte("---\n")) || bytes.Equal(bytes.TrimSpace(rest), []byte("---")) {
		return nil, bytes.TrimPrefix(rest, []byte("---"))
	}
	return nil, b
}
