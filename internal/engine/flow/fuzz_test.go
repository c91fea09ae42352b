package flow_test

import (
	"os"
	"path/filepath"
	"testing"
	"testing/fstest"

	"agentd/internal/engine/flow"
	"agentd/internal/errdefs"
)

// FuzzLoad: a one-file flow (YAML or JSON) or a node file of a flow
// directory (front matter and a Markdown body) loads and compiles, or is
// refused with a validation error — never a panic.
func FuzzLoad(f *testing.F) {
	for _, pattern := range []string{"testdata/*.yaml", "testdata/*/*"} {
		files, _ := filepath.Glob(pattern)
		for _, p := range files {
			if b, err := os.ReadFile(p); err == nil {
				f.Add(b, filepath.Ext(p) != ".yaml")
			}
		}
	}
	f.Add([]byte("---\nnext: b\n---\nHello"), true)
	f.Add([]byte("nodes: [{id: a}]"), false)
	f.Fuzz(func(t *testing.T, b []byte, node bool) {
		var spec *flow.Spec
		var err error
		if node {
			spec, err = flow.Load(fstest.MapFS{"f/start.md": {Data: b}}, "f")
		} else {
			spec, err = flow.ParseFile(b, "fuzz.yaml")
		}
		if err != nil {
			if !errdefs.IsValidation(err) {
				t.Fatalf("%q: %v is not a validation error", b, err)
			}
			return
		}
		_, _ = flow.Compile(spec, func(string) bool { return true })
	})
}
