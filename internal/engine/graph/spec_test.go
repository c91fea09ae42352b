package graph

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// conformanceCase is one file of testdata/spec: zenflow's language-neutral
// spec v1 test cases, and ours in the same shape.
type conformanceCase struct {
	Description string `json:"description"`
	Input       string `json:"input"`
	Expected    struct {
		Valid           bool       `json:"valid"`
		Error           string     `json:"error"`
		StepCount       int        `json:"step_count"`
		TopoOrder       []string   `json:"topo_order"`
		TopoConstraints []struct { // every before precedes every after
			Before []string `json:"before"`
			After  []string `json:"after"`
		} `json:"topo_constraints"`
		// Ours: every problem listed must be reported, path and message
		// text included ("path: message" substring).
		Problems []string `json:"problems"`
	} `json:"expected"`
}

func TestConformanceCases(t *testing.T) {
	files, err := filepath.Glob("testdata/spec/*/*.yaml")
	if err != nil || len(files) < 71 {
		t.Fatalf("want at least the 71 spec cases under testdata/spec, got %d (%v)", len(files), err)
	}
	for _, file := range files {
		t.Run(strings.TrimPrefix(file, "testdata/spec/"), func(t *testing.T) {
			b, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			var c conformanceCase
			if err := yaml.UnmarshalStrict(b, &c); err != nil {
				t.Fatalf("test case: %v", err)
			}
			if want := filepath.Base(filepath.Dir(file)) == "valid"; c.Expected.Valid != want {
				t.Fatalf("case under %s says valid: %v", filepath.Dir(file), c.Expected.Valid)
			}
			w, err := Parse([]byte(c.Input))
			if c.Expected.Valid {
				checkValid(t, w, err, c)
				return
			}
			checkInvalid(t, err, c)
		})
	}
}

func checkValid(t *testing.T, w *Workflow, err error, c conformanceCase) {
	t.Helper()
	if err != nil {
		t.Fatalf("%s: rejected:\n%v", c.Description, err)
	}
	if len(w.Steps) != c.Expected.StepCount {
		t.Errorf("step count %d, want %d", len(w.Steps), c.Expected.StepCount)
	}
	order := topoOrder(w.Steps)
	if c.Expected.TopoOrder != nil && !slices.Equal(order, c.Expected.TopoOrder) {
		t.Errorf("topological order %v, want %v", order, c.Expected.TopoOrder)
	}
	for _, tc := range c.Expected.TopoConstraints {
		for _, b := range tc.Before {
			for _, a := range tc.After {
				if slices.Index(order, b) > slices.Index(order, a) {
					t.Errorf("order %v puts %s after %s", order, b, a)
				}
			}
		}
	}
}

func checkInvalid(t *testing.T, err error, c conformanceCase) {
	t.Helper()
	ps, ok := err.(Problems)
	if !ok {
		t.Fatalf("%s: accepted (err %v), want %s", c.Description, err, c.Expected.Error)
	}
	if c.Expected.Error != CodeValidation && !ps.Has(c.Expected.Error) {
		t.Errorf("%s: want a %s problem, got:\n%v", c.Description, c.Expected.Error, err)
	}
	for _, want := range c.Expected.Problems {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("problems lack %q; got:\n%v", want, err)
		}
	}
	for _, p := range ps {
		if p.Message == "" || p.Code == "" {
			t.Errorf("problem without code or message: %+v", p)
		}
	}
}
