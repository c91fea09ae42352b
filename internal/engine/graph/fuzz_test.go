package graph

import (
	"os"
	"path/filepath"
	"testing"
)

// FuzzParse: any workflow document parses or is refused with its
// problems — never a panic, and a refusal always names at least one.
func FuzzParse(f *testing.F) {
	files, _ := filepath.Glob("testdata/examples/*")
	for _, p := range files {
		if b, err := os.ReadFile(p); err == nil {
			f.Add(b)
		}
	}
	f.Add([]byte("name: w\nsteps: [{id: a, agent: echo}]\n"))
	f.Add([]byte("{\"name\": 1}"))
	f.Fuzz(func(t *testing.T, b []byte) {
		w, err := Parse(b)
		if err != nil {
			if err.Error() == "" {
				t.Fatalf("%q: an empty problem list", b)
			}
			return
		}
		if w == nil {
			t.Fatalf("%q: no workflow and no error", b)
		}
	})
}
