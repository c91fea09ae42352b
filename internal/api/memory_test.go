package api

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"agentd/internal/memory"
	"agentd/internal/store/memstore"
)

// TestOpenAPIDescribesMemory: what the memory routes answer satisfies
// the schemas openapi.yaml gives them, with and without a score and an
// expiry.
func TestOpenAPIDescribesMemory(t *testing.T) {
	schemas := newSchemaSet(t, loadSpec(t))
	h := New(nil, Options{Memory: memory.New(memstore.New(), memory.Options{})}).Handler()
	call := func(method, path, body string, status int) []byte {
		t.Helper()
		rec := httptest.NewRecorder()
		req := httptest.NewRequest(method, path, strings.NewReader(body))
		if body != "" {
			req.Header.Set("Content-Type", "application/json")
		}
		h.ServeHTTP(rec, req)
		if rec.Code != status {
			t.Fatalf("%s %s: %d %s, want %d", method, path, rec.Code, rec.Body, status)
		}
		return rec.Body.Bytes()
	}
	for _, c := range []struct{ name, schema, method, path, body string }{
		{"put", "MemoryItem", "PUT", "/v1/memory/items", `{"namespace":["memories","ann"],"key":"colour","value":{"fact":"Ann likes blue"}}`},
		{"put with a ttl", "MemoryItem", "PUT", "/v1/memory/items", `{"namespace":["memories","ann"],"key":"city","value":{"fact":"Lisbon"},"ttl_minutes":5,"index":["fact"]}`},
		{"get", "MemoryItem", "GET", "/v1/memory/items?namespace=memories.ann&key=city&refresh_ttl=true", ""},
		{"list", "MemoryItemList", "POST", "/v1/memory/items/search", `{"namespace_prefix":["memories"]}`},
		{"ranked", "MemoryItemList", "POST", "/v1/memory/items/search", `{"query":"blue","filter":{"fact":"Ann likes blue"}}`},
		{"namespaces", "MemoryNamespaceList", "GET", "/v1/memory/namespaces?prefix=memories&max_depth=1", ""},
	} {
		b := call(c.method, c.path, c.body, http.StatusOK)
		if err := schemas.validate(component(c.schema), b); err != nil {
			t.Errorf("%s: %s does not describe %s: %v", c.name, c.schema, b, err)
		}
	}
	b := call("POST", "/v1/memory/items/search", `{"query":"blue"}`, http.StatusOK)
	if !strings.Contains(string(b), `"score":1`) {
		t.Errorf("a ranked item without its score: %s", b)
	}
	b = call("PUT", "/v1/memory/items", `{"namespace":["memories",""],"key":"k","value":{}}`, http.StatusBadRequest)
	if err := schemas.validate(component("Problem"), b); err != nil || !strings.Contains(string(b), `"field":"namespace[1]"`) {
		t.Errorf("an empty label: %s (%v)", b, err)
	}
	call("DELETE", "/v1/memory/items?namespace=memories.ann&key=colour", "", http.StatusNoContent)
	call("GET", "/v1/memory/items?namespace=memories.ann&key=colour", "", http.StatusNotFound)
	none := New(nil, Options{}).Handler()
	rec := httptest.NewRecorder()
	none.ServeHTTP(rec, httptest.NewRequest("GET", "/v1/memory/namespaces", nil))
	if rec.Code != http.StatusServiceUnavailable {
		t.Errorf("a server without memory: %d %s, want 503", rec.Code, rec.Body)
	}
}
