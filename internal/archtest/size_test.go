package archtest

import (
	"bytes"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"testing"
)

// maxFileLines and maxFuncLines are STYLE.md's bounds: no production file
// over 500 lines, and no function over 60 lines in the packages a newcomer
// reads first (the runtime and the run log).
const (
	maxFileLines = 500
	maxFuncLines = 60
)

// shortFuncPackages are the packages whose functions stay under maxFuncLines.
var shortFuncPackages = map[string]bool{"runtime": true, "runlog": true}

// TestProductionSizes keeps every production file of agentd under
// maxFileLines, and every function of shortFuncPackages under maxFuncLines.
func TestProductionSizes(t *testing.T) {
	for _, p := range listPackages(t) {
		for _, name := range p.GoFiles {
			path := filepath.Join(p.Dir, name)
			src, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if n := bytes.Count(src, []byte("\n")); n > maxFileLines {
				t.Errorf("%s: %d lines (at most %d)", path, n, maxFileLines)
			}
			if shortFuncPackages[short(p.ImportPath)] {
				checkFuncs(t, path, src)
			}
		}
	}
}

// checkFuncs reports the functions of the file at path over maxFuncLines.
func checkFuncs(t *testing.T, path string, src []byte) {
	t.Helper()
	fs := token.NewFileSet()
	f, err := parser.ParseFile(fs, path, src, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range f.Decls {
		fd, ok := d.(*ast.FuncDecl)
		if !ok || fd.Body == nil {
			continue
		}
		if n := fs.Position(fd.End()).Line - fs.Position(fd.Pos()).Line + 1; n > maxFuncLines {
			t.Errorf("%s: func %s has %d lines (at most %d)", path, fd.Name.Name, n, maxFuncLines)
		}
	}
}
