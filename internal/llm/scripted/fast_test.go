package scripted

import (
	"fmt"
	"strings"
	"testing"
)

// fastSources are templates of every shape, fast and not.
var fastSources = []struct {
	src  string
	fast bool
}{
	{"{{.Text}}", true},
	{"{{ .Text }}", true},
	{"say: {{.Text}}!", true},
	{"{{- .Text -}}  x  {{- .Tool }}", true},
	{"{{.Tool}} said {{.ToolResult}}", true},
	{"turn {{.Turn}} of {{.Text}}", true},
	{"{{.Turn}}", true},
	{"{{index .Groups 1}}", true},
	{"{{index .Groups 0}}/{{index .Groups 2}}ms", true},
	{"{{index .Groups 7}}", true},
	{"{{/* a comment */}}", true},
	{"a{{/* a comment */}}b", true},
	{"{{index .Groups 01}}", false},
	{"{{index .Groups 0x1}}", false},
	{"{{index .Groups 'a'}}", false},
	{"{{index .Groups 1.0}}", false},
	{"{{index .Groups -1}}", false},
	{"{{index .Named \"x\"}}", false},
	{"{{.Named.x}}", false},
	{"{{.Metadata.run_id}}", false},
	{"{{.Nope}}", false},
	{"{{.Text.Foo}}", false},
	{"{{upper .Text}}", false},
	{"{{.Text | upper}}", false},
	{"{{json .Text}}", false},
	{"{{$x := .Text}}{{$x}}", false},
	{"{{if .Text}}yes{{end}}", false},
	{"{{range .Groups}}[{{.}}]{{end}}", false},
	{"{{.}}", false},
	{"{{\"lit\"}}", false},
	{"{{define \"x\"}}hi{{end}}", false},
	{"{{define \"x\"}}hi{{end}}{{template \"x\"}}{{.Text}}", false},
	{"{{block \"b\" .}}{{.Text}}{{end}}", false},
	{"{{with .Text}}{{.}}{{end}}", false},
}

// fastData are inputs with and without groups, escapes, long turns.
var fastData = []Data{
	{},
	{Text: "hello world", Turn: 0},
	{Text: "<b>&\"quoted\"\u2028 é \xff\x00", Tool: "clock", ToolResult: "12:00", Turn: 3},
	{Text: "stream 5 every 20ms", Groups: []string{"stream 5 every 20ms", "5", "20"}, Turn: 120},
	{Text: "x", Groups: []string{"x", ""}, Named: map[string]string{"x": "X"}, Metadata: map[string]string{"run_id": "r1"}},
}

func TestFastTemplatesRenderLikeTextTemplate(t *testing.T) {
	for _, c := range fastSources {
		tm, err := parseTemplate("t", c.src)
		if err != nil {
			t.Fatalf("%q: %v", c.src, err)
		}
		if got := tm.fast.segs != nil; got != c.fast {
			t.Errorf("%q: fast = %v, want %v", c.src, got, c.fast)
		}
		for _, d := range fastData {
			checkRender(t, tm, d)
		}
	}
}

// checkRender compares tm.render with text/template's own execution.
func checkRender(t *testing.T, tm tmpl, d Data) {
	t.Helper()
	var b strings.Builder
	wantErr := tm.t.Execute(&b, d)
	want := b.String()
	if wantErr != nil {
		want, wantErr = "", fmt.Errorf("%s: %w", tm.path, wantErr)
	}
	got, err := tm.render(d)
	if got != want || fmt.Sprint(err) != fmt.Sprint(wantErr) {
		t.Errorf("%q on %+v: render = %q, %v; text/template = %q, %v", tm.t.Root, d, got, err, want, wantErr)
	}
}

func TestUsesMatch(t *testing.T) {
	for src, want := range map[string]bool{
		"plain":                 false,
		"{{.Text}} {{.Turn}}":   false,
		"{{index .Groups 1}}":   true,
		"{{.Named.x}}":          true, // not fast: text/template may read anything
		"{{upper .ToolResult}}": true,
	} {
		tm, err := parseTemplate("t", src)
		if err != nil {
			t.Fatal(err)
		}
		if got := tm.usesMatch(); got != want {
			t.Errorf("%q: usesMatch = %v, want %v", src, got, want)
		}
	}
}

func FuzzFastTemplate(f *testing.F) {
	for _, c := range fastSources {
		f.Add(c.src, "hello world", "1", 2)
	}
	f.Add("{{index .Groups 2}}{{.Text}}", "<\u2029>", "", -1)
	f.Fuzz(func(t *testing.T, src, text, group string, turn int) {
		tm, err := parseTemplate("t", src)
		if err != nil || tm.t == nil {
			return
		}
		checkRender(t, tm, Data{Text: text, Tool: group, ToolResult: text + group, Turn: turn, Groups: []string{text, group}})
	})
}
