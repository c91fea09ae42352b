package config

import (
	"context"
	"strings"
	"testing"

	"agentd/internal/tool"
)

func TestMemoryErrorsNameTheirPath(t *testing.T) {
	base := `
providers:
  p: {type: scripted, rules: [{reply: hi}]}
agents:
  - {id: a, engine: loop, provider: p, tools: [memory_put], memory: {namespace: [memories, "{user}"]}}
`
	if _, err := Parse([]byte(base), "agentd.yaml"); err != nil {
		t.Fatalf("a valid memory section: %v", err)
	}
	cases := []struct{ name, yaml, want string }{
		{"a memory tool without a namespace", strings.Replace(base, `, memory: {namespace: [memories, "{user}"]}`, "", 1),
			`agents[0].tools[0]: memory_put needs the agent's memory section (agents[0].memory.namespace)`},
		{"an unknown placeholder", strings.Replace(base, `"{user}"`, `"{tenant}"`, 1),
			`agents[0].memory.namespace[1]: unknown placeholder {tenant} (want {user} or {context})`},
		{"an empty label", strings.Replace(base, `"{user}"`, `""`, 1), `agents[0].memory.namespace[1]: "": a label is not empty`},
		{"no namespace", strings.Replace(base, `[memories, "{user}"]`, `[]`, 1), `agents[0].memory.namespace: 1 to 16 labels`},
		{"embeddings without a model", base + "memory: {embeddings: {base_url: http://127.0.0.1:1/v1}}\n", `memory.embeddings.model: required`},
		{"embeddings at no URL", base + "memory: {embeddings: {base_url: here, model: m}}\n", `memory.embeddings.base_url: "here" is not an absolute http(s) URL`},
		{"an unknown vector_extension", base + "memory: {vector_extension: always}\n", `memory.vector_extension: "always": want auto or off`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Parse([]byte(c.yaml), "agentd.yaml")
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err = %v, want %q", err, c.want)
			}
		})
	}
}

// recordingMemory is a tool.Memory that records the namespaces it is
// asked to resolve.
type recordingMemory struct{ templates [][]string }

func (m *recordingMemory) Namespace(_ context.Context, tmpl []string) ([]string, error) {
	m.templates = append(m.templates, tmpl)
	return tmpl, nil
}
func (m *recordingMemory) Put(context.Context, []string, string, map[string]any) error { return nil }
func (m *recordingMemory) Get(context.Context, []string, string) (map[string]any, bool, error) {
	return nil, false, nil
}
func (m *recordingMemory) Search(context.Context, []string, string, int) ([]tool.MemoryHit, error) {
	return nil, nil
}

// TestMemoryToolsNeedAMemory: a build without a memory backend refuses an
// agent with a memory section, naming it.
func TestMemoryToolsNeedAMemory(t *testing.T) {
	c, err := Parse([]byte(`
providers:
  p: {type: scripted, rules: [{reply: hi}]}
agents:
  - {id: a, engine: loop, provider: p, tools: [memory_search], memory: {namespace: [m]}}
`), "agentd.yaml")
	if err != nil {
		t.Fatal(err)
	}
	env := BuildOptions{Getenv: func(string) string { return "" }}
	if _, err := c.Build(env); err == nil || !strings.Contains(err.Error(), "agents[0].memory: this server was built without a memory store") {
		t.Fatalf("build without memory: %v", err)
	}
	env.Memory = &recordingMemory{}
	if _, err := c.Build(env); err != nil {
		t.Fatalf("build with memory: %v", err)
	}
}
