package archtest

import (
	"bytes"
	"encoding/json"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// layers is the table of doc.go (and docs/architecture.md), by layer.
var layers = [][]string{
	{"errdefs", "model", "strictjson", "netguard", "logctx", "faultproxy", "telemetry/otlptest", "archtest", "nodetest"},
	{"run", "llm", "llm/openai", "llm/openai/openaitest", "llm/scripted", "tool", "mcptool", "calltree"},
	{"engine", "engine/enginetest"},
	{"engine/loop", "engine/graph", "engine/goal", "engine/flow", "engine/remote", "engine/conformance",
		"agent", "agent/judge", "agent/agenttest", "governor"},
	{"store", "store/memstore", "store/pgstore", "store/storetest", "pgtest", "migrations"},
	{"runlog", "retention", "liveness", "memory"},
	{"runtime", "push"},
	{"auth", "limits"},
	{"api", "a2a", "a2a/pushtest", "agui", "agentproto", "mcpserver", "console", "telemetry"},
	{"config"},
}

// pkg is what go list says of one package.
type pkg struct {
	ImportPath string
	Dir        string
	GoFiles    []string
	Imports    []string
}

// short names a package of agentd as the table does.
func short(path string) string {
	return strings.TrimPrefix(strings.TrimPrefix(path, "agentd/internal/"), "agentd/")
}

func listPackages(t *testing.T) []pkg {
	t.Helper()
	cmd := exec.Command("go", "list", "-json", "agentd/internal/...", "agentd/migrations")
	cmd.Dir = "../.."
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, os.Stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("go list: %v", err)
	}
	var pkgs []pkg
	for dec := json.NewDecoder(&out); dec.More(); {
		var p pkg
		if err := dec.Decode(&p); err != nil {
			t.Fatal(err)
		}
		if len(p.GoFiles) > 0 {
			pkgs = append(pkgs, p)
		}
	}
	return pkgs
}

func layerOf(name string) int {
	for i, l := range layers {
		if slices.Contains(l, name) {
			return i
		}
	}
	return -1
}

// TestNoImportRunsUpTheLayers: every package has a layer, and imports
// nothing of agentd from a layer above its own.
func TestNoImportRunsUpTheLayers(t *testing.T) {
	for _, p := range listPackages(t) {
		name := short(p.ImportPath)
		own := layerOf(name)
		if own < 0 {
			t.Errorf("%s has no layer: add it to the table in internal/archtest (doc.go, arch_test.go) and docs/architecture.md", name)
			continue
		}
		for _, imp := range agentdImports(p) {
			if l := layerOf(imp); l > own {
				t.Errorf("%s (layer %d) imports %s (layer %d): an import runs up the layers", name, own, imp, l)
			}
		}
	}
}

func agentdImports(p pkg) []string {
	var out []string
	for _, imp := range p.Imports {
		if strings.HasPrefix(imp, "agentd/") {
			out = append(out, short(imp))
		}
	}
	slices.Sort(out)
	return out
}

// TestDocImportsLineIsTrue: each package's documentation has an
// "Imports:" line naming exactly the packages of agentd it imports.
func TestDocImportsLineIsTrue(t *testing.T) {
	for _, p := range listPackages(t) {
		name := short(p.ImportPath)
		want := agentdImports(p)
		line := "Imports: none."
		if len(want) > 0 {
			line = "Imports: " + strings.Join(want, ", ") + "."
		}
		doc, file := packageDoc(t, p)
		if doc == "" {
			continue // migrations: SQL files and an embed, no package comment
		}
		got, ok := importsLine(doc)
		switch {
		case !ok:
			t.Errorf("%s: the package comment (%s) has no \"Imports:\" line; add %q", name, file, line)
		case !slices.Equal(got, want):
			t.Errorf("%s: %s says it imports %q, go list says %q; write %q", name, file, got, want, line)
		}
	}
}

// packageDoc returns the package comment of p and the file holding it.
func packageDoc(t *testing.T, p pkg) (string, string) {
	t.Helper()
	fset := token.NewFileSet()
	for _, f := range p.GoFiles {
		path := filepath.Join(p.Dir, f)
		af, err := parser.ParseFile(fset, path, nil, parser.ParseComments|parser.PackageClauseOnly)
		if err != nil {
			t.Fatal(err)
		}
		if af.Doc != nil {
			return af.Doc.Text(), f
		}
	}
	return "", ""
}

// importsLine reads the list after "Imports:": package names separated
// by commas up to the sentence's end, each with an optional remark in
// parentheses; "none" is the empty list.
func importsLine(doc string) ([]string, bool) {
	i := strings.Index("\n"+doc, "\nImports:") // at the start of a line
	if i < 0 {
		return nil, false
	}
	rest := doc[i+len("Imports:"):]
	var list strings.Builder
	depth := 0
	for i, c := range rest {
		switch {
		case c == '(':
			depth++
		case c == ')':
			depth--
		case c == '.' && depth == 0 && (i+1 == len(rest) || rest[i+1] == ' ' || rest[i+1] == '\n'):
			return names(list.String()), true
		case depth == 0:
			list.WriteRune(c)
		}
	}
	return names(list.String()), true
}

func names(list string) []string {
	var out []string
	for _, n := range strings.Split(list, ",") {
		n = strings.TrimSpace(n)
		if n != "" && n != "none" {
			out = append(out, n)
		}
	}
	slices.Sort(out)
	return out
}
