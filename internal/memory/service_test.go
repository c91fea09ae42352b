package memory_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"

	"agentd/internal/errdefs"
	"agentd/internal/memory"
	"agentd/internal/run"
	"agentd/internal/store/memstore"
)

// TestPutRejectsBadInput: each bad member is a Validation error naming
// it, and nothing is stored.
func TestPutRejectsBadInput(t *testing.T) {
	ok := memory.Put{Namespace: []string{"memories", "ann"}, Key: "k", Value: map[string]any{"a": "b"}}
	tests := []struct {
		name  string
		edit  func(p *memory.Put)
		field string
	}{
		{"no namespace", func(p *memory.Put) { p.Namespace = nil }, "namespace"},
		{"empty label", func(p *memory.Put) { p.Namespace = []string{"memories", ""} }, "namespace[1]"},
		{"label with a period", func(p *memory.Put) { p.Namespace = []string{"a.b"} }, "namespace[0]"},
		{"label with a control character", func(p *memory.Put) { p.Namespace = []string{"a\x00"} }, "namespace[0]"},
		{"too deep", func(p *memory.Put) { p.Namespace = slices.Repeat([]string{"x"}, memory.MaxDepth+1) }, "namespace"},
		{"no key", func(p *memory.Put) { p.Key = "" }, "key"},
		{"no value", func(p *memory.Put) { p.Value = nil }, "value"},
		{"NUL in the value", func(p *memory.Put) { p.Value = map[string]any{"a": "x\x00"} }, "value"},
		{"negative ttl", func(p *memory.Put) { p.TTLMinutes = -1 }, "ttl"},
		{"whole value with fields", func(p *memory.Put) { p.Index = []string{"$", "a"} }, "index"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := memstore.New()
			svc := memory.New(st, memory.Options{})
			p := ok
			tt.edit(&p)
			_, err := svc.Put(context.Background(), p)
			if !errdefs.IsValidation(err) || errdefs.FieldOf(err) != tt.field {
				t.Fatalf("err = %v (field %q), want Validation of %q", err, errdefs.FieldOf(err), tt.field)
			}
			if page, err := svc.Search(context.Background(), run.MemorySearch{}); err != nil || len(page) != 0 {
				t.Fatalf("stored after a refusal: %v, %v", page, err)
			}
		})
	}
}

func TestSearchRejectsBadInput(t *testing.T) {
	svc := memory.New(memstore.New(), memory.Options{})
	ctx := context.Background()
	for _, tt := range []struct {
		q     run.MemorySearch
		field string
	}{
		{run.MemorySearch{Prefix: []string{"a", ""}}, "namespace_prefix[1]"},
		{run.MemorySearch{Limit: 1001}, "limit"},
		{run.MemorySearch{Offset: -1}, "offset"},
	} {
		if _, err := svc.Search(ctx, tt.q); !errdefs.IsValidation(err) || errdefs.FieldOf(err) != tt.field {
			t.Errorf("search %+v: %v, want Validation of %q", tt.q, err, tt.field)
		}
	}
	if _, err := svc.Namespaces(ctx, run.NamespaceQuery{Suffix: []string{""}}); errdefs.FieldOf(err) != "suffix[0]" {
		t.Errorf("namespaces with an empty suffix label: %v", err)
	}
}

// TestTextIndexFields: an item is searched by the fields its put lists,
// by none with NoIndex, by its whole value otherwise.
func TestTextIndexFields(t *testing.T) {
	svc := memory.New(memstore.New(), memory.Options{})
	ctx, ns := context.Background(), []string{"m"}
	mustPut(t, svc, memory.Put{Namespace: ns, Key: "fields", Value: map[string]any{"fact": "likes tea", "note": "coffee"}, Index: []string{"fact"}})
	mustPut(t, svc, memory.Put{Namespace: ns, Key: "whole", Value: map[string]any{"fact": "likes coffee"}})
	mustPut(t, svc, memory.Put{Namespace: ns, Key: "hidden", Value: map[string]any{"fact": "coffee"}, NoIndex: true})
	page, err := svc.Search(ctx, run.MemorySearch{Query: "coffee"})
	if err != nil || !slices.Equal(keys(page), []string{"whole"}) {
		t.Fatalf("coffee = %v, %v; want only the item indexed whole", keys(page), err)
	}
}

func mustPut(t *testing.T, svc *memory.Service, p memory.Put) {
	t.Helper()
	if _, err := svc.Put(context.Background(), p); err != nil {
		t.Fatal(err)
	}
}

func keys(items []run.MemoryItem) []string {
	out := []string{}
	for _, it := range items {
		out = append(out, it.Key)
	}
	return out
}

// TestToolsNamespace: {user} and {context} come from the call's run; a
// run without a user cannot use a namespace that names one.
func TestToolsNamespace(t *testing.T) {
	tools := memory.NewTools(memory.New(memstore.New(), memory.Options{}))
	ctx := run.WithCurrent(context.Background(), run.Current{TaskID: "r1", ContextID: "c1", Metadata: map[string]any{"user_id": "ann"}})
	ns, err := tools.Namespace(ctx, []string{"memories", "{user}", "ctx-{context}"})
	if err != nil || !slices.Equal(ns, []string{"memories", "ann", "ctx-c1"}) {
		t.Fatalf("namespace = %v, %v", ns, err)
	}
	_, err = tools.Namespace(run.WithCurrent(context.Background(), run.Current{TaskID: "r2", ContextID: "c2"}), []string{"memories", "{user}"})
	if !errdefs.IsValidation(err) || !strings.Contains(err.Error(), "user_id") {
		t.Fatalf("a run without a user: %v", err)
	}
	if ns, err := tools.Namespace(context.Background(), []string{"shared"}); err != nil || !slices.Equal(ns, []string{"shared"}) {
		t.Fatalf("a fixed namespace = %v, %v", ns, err)
	}
}

// embedServer is a fake OpenAI-compatible embeddings endpoint: a text's
// vector counts its words of three topics (colours, places, food), so
// that "color" is near "blue" though they share no word.
type embedServer struct {
	*httptest.Server
	mu       sync.Mutex
	requests []map[string]any
	auth     []string
	fail     bool
}

var topics = [][]string{
	{"blue", "red", "green", "colour", "color", "colours"},
	{"lisbon", "paris", "city", "live", "lives", "town"},
	{"pizza", "tea", "coffee", "food", "eat", "drink"},
}

func newEmbedServer(t *testing.T) *embedServer {
	s := &embedServer{}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.Close)
	return s
}

func (s *embedServer) serve(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Model string   `json:"model"`
		Input []string `json:"input"`
	}
	if r.Method != http.MethodPost || r.URL.Path != "/v1/embeddings" || json.NewDecoder(r.Body).Decode(&body) != nil {
		http.Error(w, "bad request", http.StatusBadRequest)
		return
	}
	s.mu.Lock()
	s.requests = append(s.requests, map[string]any{"model": body.Model, "input": body.Input})
	s.auth = append(s.auth, r.Header.Get("Authorization"))
	fail := s.fail
	s.mu.Unlock()
	if fail {
		http.Error(w, `{"error":{"message":"overloaded"}}`, http.StatusServiceUnavailable)
		return
	}
	type datum struct {
		Object    string    `json:"object"`
		Index     int       `json:"index"`
		Embedding []float32 `json:"embedding"`
	}
	out := struct {
		Object string  `json:"object"`
		Data   []datum `json:"data"`
		Model  string  `json:"model"`
	}{Object: "list", Model: body.Model}
	for i, text := range body.Input {
		out.Data = append(out.Data, datum{Object: "embedding", Index: i, Embedding: topicVector(text)})
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(out)
}

func topicVector(text string) []float32 {
	v := []float32{0.01, 0.01, 0.01} // never without a direction
	for _, w := range strings.FieldsFunc(strings.ToLower(text), func(r rune) bool { return r < 'a' || r > 'z' }) {
		for i, words := range topics {
			if slices.Contains(words, w) {
				v[i]++
			}
		}
	}
	return v
}
