package config

import (
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"time"

	"agentd/internal/memory"
	"agentd/internal/tool"
)

// Memory configures the long-term memory (internal/memory): the
// embeddings endpoint that makes its searches semantic, and which fields
// of an item's value are searched.
type Memory struct {
	// Embeddings, when set, gives every item a vector and ranks queries by
	// cosine similarity; unset, queries rank by text.
	Embeddings *Embeddings `json:"embeddings,omitempty"`
	// Index are the value's fields (dotted paths) an item is searched by
	// when its put names none (default: the whole value).
	Index []string `json:"index,omitempty"`
	// VectorExtension says whether PostgreSQL ranks vectors with its
	// vector extension where the database has it: "auto" (the default)
	// or "off" (ranked in agentd, and the database left as it is).
	VectorExtension string `json:"vector_extension,omitempty"`
}

// Embeddings names an OpenAI-compatible embeddings endpoint, as a
// provider names a chat endpoint.
type Embeddings struct {
	// BaseURL is the API root ("http://127.0.0.1:11434/v1");
	// "/embeddings" is appended.
	BaseURL string `json:"base_url"`
	Model   string `json:"model"`
	// APIKeyEnv names the environment variable holding the key (default
	// OPENAI_API_KEY; unset or empty sends none).
	APIKeyEnv string `json:"api_key_env,omitempty"`
	// Dimensions, when set, asks the model for vectors of that length.
	Dimensions int `json:"dimensions,omitempty"`
	// Timeout bounds one request (default 30s).
	Timeout Duration `json:"timeout,omitempty"`
}

// AgentMemory scopes a loop agent's memory tools (memory_put, memory_get,
// memory_search, listed in its tools) to a namespace.
type AgentMemory struct {
	// Namespace is the labels the agent's memories live under; "{user}"
	// in a label is the run's metadata.user_id, "{context}" its
	// conversation (e.g. ["memories", "{user}"]).
	Namespace []string `json:"namespace"`
}

func (m *Memory) validate() error {
	if m == nil {
		return nil
	}
	if v := m.VectorExtension; v != "" && v != "auto" && v != "off" {
		return fmt.Errorf("memory.vector_extension: %q: want auto or off", v)
	}
	if m.Embeddings == nil {
		return nil
	}
	e := m.Embeddings
	if u, err := url.Parse(e.BaseURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("memory.embeddings.base_url: %q is not an absolute http(s) URL", e.BaseURL)
	}
	if e.Model == "" {
		return fmt.Errorf("memory.embeddings.model: required (the embedding model's name)")
	}
	if e.Dimensions < 0 {
		return fmt.Errorf("memory.embeddings.dimensions: must not be negative, got %d", e.Dimensions)
	}
	return nil
}

// placeholder finds the {…} of a namespace label.
var placeholder = regexp.MustCompile(`\{[^}]*\}`)

// validateMemory checks an agent's memory section and that the memory
// tools it lists have one.
func (a Agent) validateMemory(path string) error {
	for j, t := range a.Tools {
		if slices.Contains(tool.MemoryToolNames, t) && a.Memory == nil {
			return fmt.Errorf("%s.tools[%d]: %s needs the agent's memory section (%s.memory.namespace)", path, j, t, path)
		}
	}
	if a.Memory == nil {
		return nil
	}
	if a.Engine != "loop" {
		return fmt.Errorf("%s.memory: only loop agents have memory tools (engine is %q)", path, a.Engine)
	}
	if len(a.Memory.Namespace) == 0 || len(a.Memory.Namespace) > memory.MaxDepth {
		return fmt.Errorf("%s.memory.namespace: 1 to %d labels, e.g. [\"memories\", \"{user}\"]", path, memory.MaxDepth)
	}
	for i, label := range a.Memory.Namespace {
		p := fmt.Sprintf("%s.memory.namespace[%d]", path, i)
		for _, ph := range placeholder.FindAllString(label, -1) {
			if ph != "{user}" && ph != "{context}" {
				return fmt.Errorf("%s: unknown placeholder %s (want {user} or {context})", p, ph)
			}
		}
		if label == "" || strings.Contains(label, ".") {
			return fmt.Errorf("%s: %q: a label is not empty and holds no \".\"", p, label)
		}
	}
	return nil
}

// MemoryOptions are the memory service's options from the file; the
// embeddings key is read from the environment.
func (c *Config) MemoryOptions(getenv Env) memory.Options {
	if c.Memory == nil {
		return memory.Options{}
	}
	o := memory.Options{Index: c.Memory.Index}
	if e := c.Memory.Embeddings; e != nil {
		o.Embedder = memory.NewEmbeddings(memory.EmbeddingsConfig{
			BaseURL: e.BaseURL, Model: e.Model, Dimensions: e.Dimensions,
			APIKey: getenv(nonEmpty(e.APIKeyEnv, "OPENAI_API_KEY")), Timeout: e.Timeout.Or(30 * time.Second),
		})
	}
	return o
}

// MemoryVectorExtension tells whether PostgreSQL may rank vectors with its
// vector extension (memory.vector_extension is not "off").
func (c *Config) MemoryVectorExtension() bool {
	return c.Memory == nil || c.Memory.VectorExtension != "off"
}

// memoryTools returns the registry of loop agent a: the shared one, or,
// when a has a memory section, a copy holding its memory tools scoped to
// its namespace.
func (b *builder) memoryTools(path string, a Agent) (*tool.Registry, error) {
	if a.Memory == nil {
		return b.reg, nil
	}
	if b.opts.Memory == nil {
		return nil, fmt.Errorf("%s.memory: this server was built without a memory store", path)
	}
	reg := b.reg.Clone()
	for _, t := range tool.MemoryTools(b.opts.Memory, a.Memory.Namespace) {
		if err := reg.Register(t); err != nil {
			return nil, fmt.Errorf("%s.memory: %w", path, err)
		}
	}
	return reg, nil
}
