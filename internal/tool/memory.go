package tool

import (
	"context"
	"encoding/json"
	"fmt"
)

// The names the memory tools register under.
const (
	MemoryPutName    = "memory_put"
	MemoryGetName    = "memory_get"
	MemorySearchName = "memory_search"
)

// MemoryToolNames are the memory tools, in the order MemoryTools returns
// them.
var MemoryToolNames = []string{MemoryGetName, MemoryPutName, MemorySearchName}

// Memory is what the memory tools need of the long-term memory; the
// memory package implements it (memory.Tools). Every method acts in the
// tenant of ctx.
type Memory interface {
	// Namespace resolves a namespace template for the run the call belongs
	// to: "{user}" and "{context}" in a label become the run's user and
	// conversation.
	Namespace(ctx context.Context, template []string) ([]string, error)
	Put(ctx context.Context, namespace []string, key string, value map[string]any) error
	// Get returns the item's value; found is false when there is none.
	Get(ctx context.Context, namespace []string, key string) (value map[string]any, found bool, err error)
	Search(ctx context.Context, namespace []string, query string, limit int) ([]MemoryHit, error)
}

// MemoryHit is an item a memory search found.
type MemoryHit struct {
	Key   string         `json:"key"`
	Value map[string]any `json:"value"`
	Score *float64       `json:"score,omitempty"`
}

const memoryPutSchema = `{
  "type": "object",
  "properties": {
    "key": {"type": "string", "minLength": 1, "maxLength": 256, "description": "A short name for the memory, e.g. \"favourite_colour\". Saving under an existing key replaces it."},
    "value": {"type": "object", "description": "What to remember, as a JSON object, e.g. {\"fact\": \"Ann's favourite colour is blue\"}."}
  },
  "required": ["key", "value"],
  "additionalProperties": false
}`

const memoryGetSchema = `{
  "type": "object",
  "properties": {
    "key": {"type": "string", "minLength": 1, "maxLength": 256, "description": "The key the memory was saved under."}
  },
  "required": ["key"],
  "additionalProperties": false
}`

const memorySearchSchema = `{
  "type": "object",
  "properties": {
    "query": {"type": "string", "minLength": 1, "maxLength": 2000, "description": "What to look for, in words."},
    "limit": {"type": "integer", "minimum": 1, "maximum": 20, "description": "How many memories at most (default 5)."}
  },
  "required": ["query"],
  "additionalProperties": false
}`

// MemoryTools returns memory_get, memory_put and memory_search over m,
// scoped to the namespace template (labels with {user} and {context}
// placeholders), which each call resolves for its run.
func MemoryTools(m Memory, namespace []string) []Tool {
	type putArgs struct {
		Key   string         `json:"key"`
		Value map[string]any `json:"value"`
	}
	type getArgs struct {
		Key string `json:"key"`
	}
	type searchArgs struct {
		Query string `json:"query"`
		Limit int    `json:"limit"`
	}
	put := Typed(Spec{
		Name: MemoryPutName, Description: "Save a memory that lasts beyond this conversation, under a key.",
		Parameters: json.RawMessage(memoryPutSchema), Flags: Flags{Idempotent: true},
	}, func(ctx context.Context, a putArgs) (Result, error) {
		ns, err := m.Namespace(ctx, namespace)
		if err != nil {
			return Result{}, err
		}
		if err := m.Put(ctx, ns, a.Key, a.Value); err != nil {
			return Result{}, err
		}
		return Text(fmt.Sprintf("saved %q", a.Key)), nil
	})
	get := Typed(Spec{
		Name: MemoryGetName, Description: "Read the memory saved under a key.",
		Parameters: json.RawMessage(memoryGetSchema), Flags: Flags{ParallelSafe: true, Idempotent: true},
	}, func(ctx context.Context, a getArgs) (Result, error) {
		ns, err := m.Namespace(ctx, namespace)
		if err != nil {
			return Result{}, err
		}
		v, found, err := m.Get(ctx, ns, a.Key)
		if err != nil || !found {
			return Text(fmt.Sprintf("no memory under %q", a.Key)), err
		}
		return jsonResult(v)
	})
	search := Typed(Spec{
		Name: MemorySearchName, Description: "Search the memories saved in earlier conversations, best match first.",
		Parameters: json.RawMessage(memorySearchSchema), Flags: Flags{ParallelSafe: true, Idempotent: true},
	}, func(ctx context.Context, a searchArgs) (Result, error) {
		ns, err := m.Namespace(ctx, namespace)
		if err != nil {
			return Result{}, err
		}
		hits, err := m.Search(ctx, ns, a.Query, max(a.Limit, 0))
		if err != nil {
			return Result{}, err
		}
		if hits == nil {
			hits = []MemoryHit{}
		}
		return jsonResult(hits)
	})
	return []Tool{get, put, search}
}

func jsonResult(v any) (Result, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return Result{}, err
	}
	return Text(string(b)), nil
}
