package main

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"agentd/internal/nodetest"
)

// keeperRules script the keeper agent: "remember KEY: FACT" saves the fact,
// "recall WORDS" searches, "get KEY" reads; each tool's answer is repeated.
var keeperRules = []any{
	map[string]any{"after_tool": "memory_put", "reply": "Noted: {{.ToolResult}}"},
	map[string]any{"after_tool": "memory_search", "reply": "I remember: {{.ToolResult}}"},
	map[string]any{"after_tool": "memory_get", "reply": "Under that key: {{.ToolResult}}"},
	map[string]any{"match": `(?i)^remember (\S+): (.+)$`, "tool_calls": []any{map[string]any{
		"name": "memory_put", "arguments": `{"key": {{index .Groups 1 | json}}, "value": {"fact": {{index .Groups 2 | json}}}}`}}},
	map[string]any{"match": `(?i)^recall (.+)$`, "tool_calls": []any{map[string]any{
		"name": "memory_search", "arguments": `{"query": {{index .Groups 1 | json}}}`}}},
	map[string]any{"match": `(?i)^get (\S+)$`, "tool_calls": []any{map[string]any{
		"name": "memory_get", "arguments": `{"key": {{index .Groups 1 | json}}}`}}},
	map[string]any{"match": `(?s).*`, "reply": "Say remember, recall or get."},
}

// memoryConfig is the demo configuration with the two tenants' keys and
// two memory agents: keeper, whose memories live under
// ["memories", "{user}"], and careful, whose saves wait for approval.
func memoryConfig(t *testing.T) string {
	t.Helper()
	path := demoConfigWith(t, func(cfg map[string]any) {
		cfg["providers"].(map[string]any)["keeper-script"] = map[string]any{"type": "scripted", "rules": keeperRules}
		agent := func(id string, extra map[string]any) map[string]any {
			a := map[string]any{
				"id": id, "engine": "loop", "provider": "keeper-script", "skills": []any{map[string]any{"id": "memory", "name": "Memory", "description": "Remembers facts.", "tags": []any{"memory"}}},
				"tools":  []any{"memory_put", "memory_search", "memory_get"},
				"memory": map[string]any{"namespace": []any{"memories", "{user}"}},
			}
			for k, v := range extra {
				a[k] = v
			}
			return a
		}
		cfg["agents"] = append(cfg["agents"].([]any), agent("keeper", nil),
			agent("careful", map[string]any{"tool_settings": map[string]any{"memory_put": map[string]any{"approval": "required"}}}))
	})
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(authYAML); err != nil {
		t.Fatal(err)
	}
	return path
}

func startMemory(t *testing.T, dsn string) *server {
	t.Helper()
	env := func(k string) string {
		if k == "DATABASE_URL" {
			return dsn
		}
		return authEnv[k]
	}
	return startEnv(t, env, "--config", memoryConfig(t))
}

// say sends text to agent as key's user in a new conversation and
// returns the run.
func say(t *testing.T, s *server, key, agent, user, text string) runJSON {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"text": text, "metadata": map[string]any{"user_id": user}})
	r := s.call(t, key, "POST", "/v1/agents/"+agent+"/messages", string(body))
	if r.status != 200 {
		t.Fatalf("%s to %s: %d %s", text, agent, r.status, r.body)
	}
	var run runJSON
	r.json(t, &run)
	return run
}

// answer is the run's last text.
func answer(run runJSON) string {
	for i := len(run.Messages) - 1; i >= 0; i-- {
		for _, p := range run.Messages[i].Parts {
			if p.Type == "text" && run.Messages[i].Role == "assistant" {
				return p.Text
			}
		}
	}
	return ""
}

// TestMemoryToolsAcrossConversations: a loop agent on the scripted model
// saves a fact in one conversation and finds it in another; another user,
// and another tenant's same user, find nothing; the item is on REST for
// its tenant only; a save that needs approval waits and stores nothing.
func TestMemoryToolsAcrossConversations(t *testing.T) { testMemoryTools(t, "") }

// TestMemoryToolsPostgres is the same on PostgreSQL (text search by its
// full-text search).
func TestMemoryToolsPostgres(t *testing.T) { testMemoryTools(t, sharedDSN(t)) }

func testMemoryTools(t *testing.T, dsn string) {
	s := startMemory(t, dsn)
	saved := say(t, s, acmeKey, "keeper", "ann", "remember colour: Ann's favourite colour is blue")
	if saved.Status != "completed" || !strings.Contains(answer(saved), `saved "colour"`) {
		t.Fatalf("the save: %s %q", saved.Status, answer(saved))
	}
	found := say(t, s, acmeKey, "keeper", "ann", "recall favourite colour")
	if found.ContextID == saved.ContextID || !strings.Contains(answer(found), "blue") {
		t.Fatalf("another conversation of ann's recalls %q (contexts %s, %s)", answer(found), saved.ContextID, found.ContextID)
	}
	if got := answer(say(t, s, acmeKey, "keeper", "ann", "get colour")); !strings.Contains(got, "favourite colour is blue") {
		t.Fatalf("get colour: %q", got)
	}
	for _, c := range []struct{ key, user, who string }{{acmeKey, "bob", "another user"}, {globexKey, "ann", "another tenant's ann"}} {
		if got := answer(say(t, s, c.key, "keeper", c.user, "recall favourite colour")); strings.Contains(got, "blue") || !strings.Contains(got, "[]") {
			t.Fatalf("%s recalls %q, want nothing", c.who, got)
		}
	}
	item := "/v1/memory/items?namespace=memories.ann&key=colour"
	if r := s.call(t, acmeKey, "GET", item, ""); r.status != 200 || !strings.Contains(r.body, "favourite colour is blue") {
		t.Fatalf("acme reads the item on REST: %d %s", r.status, r.body)
	}
	if r := s.call(t, globexKey, "GET", item, ""); r.status != 404 {
		t.Fatalf("globex reads acme's item: %d %s, want 404", r.status, r.body)
	}
	careful := say(t, s, acmeKey, "careful", "carl", "remember pin: 1234")
	if careful.Status != "input-required" {
		t.Fatalf("a save under approval: %s, want input-required", careful.Status)
	}
	if r := s.call(t, acmeKey, "GET", "/v1/memory/items?namespace=memories.carl&key=pin", ""); r.status != 404 {
		t.Fatalf("an unapproved save stored: %d %s", r.status, r.body)
	}
}

// TestMemoryREST: the REST routes — put, get, search, namespaces, delete —
// with a namespace label left empty refused naming it (nothing stored),
// and the other tenant seeing nothing.
func TestMemoryREST(t *testing.T) {
	s := startMemory(t, "")
	put := `{"namespace":["memories","ann"],"key":"colour","value":{"fact":"Ann likes blue","kind":"preference"},"ttl_minutes":60}`
	r := s.call(t, acmeKey, "PUT", "/v1/memory/items", put)
	var item struct {
		Namespace []string       `json:"namespace"`
		Value     map[string]any `json:"value"`
		CreatedAt time.Time      `json:"created_at"`
		ExpiresAt *time.Time     `json:"expires_at"`
	}
	r.json(t, &item)
	if r.status != 200 || item.Value["fact"] != "Ann likes blue" || item.ExpiresAt == nil || item.ExpiresAt.Sub(item.CreatedAt) != time.Hour {
		t.Fatalf("put: %d %s", r.status, r.body)
	}
	bad := []struct{ name, method, path, body, field string }{
		{"empty label", "PUT", "/v1/memory/items", `{"namespace":["memories",""],"key":"k","value":{}}`, "namespace[1]"},
		{"no value", "PUT", "/v1/memory/items", `{"namespace":["memories"],"key":"k"}`, "value"},
		{"unknown member", "PUT", "/v1/memory/items", `{"namespace":["m"],"key":"k","value":{},"ttl":5}`, "ttl"},
		{"empty label in a query", "GET", "/v1/memory/items?namespace=memories..ann&key=colour", "", "namespace[1]"},
		{"search prefix", "POST", "/v1/memory/items/search", `{"namespace_prefix":[""]}`, "namespace_prefix[0]"},
		{"limit", "POST", "/v1/memory/items/search", `{"limit":5000}`, "limit"},
	}
	for _, b := range bad {
		r := s.call(t, acmeKey, b.method, b.path, b.body)
		var p struct{ Field, Detail string }
		_ = json.Unmarshal([]byte(r.body), &p)
		if r.status != 400 || p.Field != b.field || !strings.HasPrefix(p.Detail, b.field+":") {
			t.Errorf("%s: %d %s, want 400 naming %s", b.name, r.status, r.body, b.field)
		}
	}
	r = s.call(t, acmeKey, "GET", "/v1/memory/namespaces", "")
	if r.status != 200 || r.body != `{"namespaces":[["memories","ann"]]}`+"\n" {
		t.Fatalf("namespaces after the refusals: %d %s", r.status, r.body)
	}
	r = s.call(t, acmeKey, "POST", "/v1/memory/items/search", `{"namespace_prefix":["memories"],"query":"blue","filter":{"kind":"preference"}}`)
	if r.status != 200 || !strings.Contains(r.body, `"score":`) || !strings.Contains(r.body, "Ann likes blue") {
		t.Fatalf("search: %d %s", r.status, r.body)
	}
	for _, c := range []struct{ method, path, body, want string }{
		{"GET", "/v1/memory/namespaces", "", `{"namespaces":[]}`},
		{"POST", "/v1/memory/items/search", `{"query":"blue"}`, `{"items":[]}`},
	} {
		if r := s.call(t, globexKey, c.method, c.path, c.body); r.status != 200 || strings.TrimSpace(r.body) != c.want {
			t.Errorf("globex %s %s: %d %s, want %s", c.method, c.path, r.status, r.body, c.want)
		}
	}
	if r := s.call(t, globexKey, "DELETE", "/v1/memory/items?namespace=memories.ann&key=colour", ""); r.status != 404 {
		t.Fatalf("globex deletes acme's item: %d %s", r.status, r.body)
	}
	if r := s.call(t, readerKey, "PUT", "/v1/memory/items", put); r.status != 403 {
		t.Fatalf("a read-only key writes: %d %s", r.status, r.body)
	}
	if r := s.call(t, acmeKey, "DELETE", "/v1/memory/items?namespace=memories.ann&key=colour", ""); r.status != 204 {
		t.Fatalf("delete: %d %s", r.status, r.body)
	}
	if r := s.call(t, acmeKey, "GET", "/v1/memory/items?namespace=memories.ann&key=colour", ""); r.status != 404 {
		t.Fatalf("get after delete: %d %s", r.status, r.body)
	}
}

// TestLangGraphSDKStore runs @langchain/langgraph-sdk's store client
// (interop/js/langgraph_store.mjs) against a real server, on memstore and
// on PostgreSQL.
func TestLangGraphSDKStore(t *testing.T) { testLangGraphSDKStore(t, "") }

func TestLangGraphSDKStorePostgres(t *testing.T) { testLangGraphSDKStore(t, sharedDSN(t)) }

func testLangGraphSDKStore(t *testing.T, dsn string) {
	node, dir := nodetest.Find(t, "@langchain/langgraph-sdk")
	s := startMemory(t, dsn)
	nodetest.Run(t, node, dir, s.base, "langgraph_store.mjs", time.Minute, []string{"ACME_KEY=" + acmeKey, "GLOBEX_KEY=" + globexKey})
}

// TestMemorySemanticREST: with memory.embeddings naming an
// OpenAI-compatible endpoint (a fake one here, the real wire format), the
// server embeds what it stores and ranks a query by meaning: "which hue"
// finds the item about blue, which shares no word with it. The key comes
// from the variable api_key_env names.
func TestMemorySemanticREST(t *testing.T) { testMemorySemanticREST(t, "", "") }

// TestMemorySemanticRESTPostgres: the same on PostgreSQL, with the vector
// extension where the database has it and with memory.vector_extension
// off; the log says which path vector searches take.
func TestMemorySemanticRESTPostgres(t *testing.T) {
	for _, ext := range []string{"auto", "off"} {
		t.Run(ext, func(t *testing.T) {
			s := testMemorySemanticREST(t, sharedDSN(t), ext)
			logs := s.logs.String()
			if !strings.Contains(logs, "memory vector searches ranked") ||
				(ext == "off" && !strings.Contains(logs, "ranked in agentd")) {
				t.Fatalf("the log does not say where vectors are ranked:\n%s", logs)
			}
		})
	}
}

func testMemorySemanticREST(t *testing.T, dsn, vectorExtension string) *server {
	var auth atomic.Value
	emb := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body struct {
			Model string   `json:"model"`
			Input []string `json:"input"`
		}
		if r.URL.Path != "/v1/embeddings" || json.NewDecoder(r.Body).Decode(&body) != nil || body.Model != "hues" {
			http.Error(w, "bad request", http.StatusBadRequest)
			return
		}
		auth.Store(r.Header.Get("Authorization"))
		data := []map[string]any{}
		for i, text := range body.Input {
			v := []float64{0.1, 1} // anything else
			if strings.Contains(text, "blue") || strings.Contains(text, "hue") {
				v = []float64{1, 0.1} // colours
			}
			data = append(data, map[string]any{"object": "embedding", "index": i, "embedding": v})
		}
		_ = json.NewEncoder(w).Encode(map[string]any{"object": "list", "data": data, "model": body.Model})
	}))
	t.Cleanup(emb.Close)
	path := demoConfigWith(t, func(cfg map[string]any) {
		cfg["memory"] = map[string]any{
			"embeddings":       map[string]any{"base_url": emb.URL + "/v1", "model": "hues", "api_key_env": "EMBED_KEY"},
			"vector_extension": vectorExtension,
		}
	})
	env := map[string]string{"EMBED_KEY": "sk-embed", "DATABASE_URL": dsn}
	s := startEnv(t, func(k string) string { return env[k] }, "--config", path, "--log-level", "info")
	for _, put := range []string{
		`{"namespace":["m"],"key":"colour","value":{"fact":"Ann likes blue"}}`,
		`{"namespace":["m"],"key":"city","value":{"fact":"Ann lives in Lisbon"}}`,
	} {
		if r := s.call(t, "", "PUT", "/v1/memory/items", put); r.status != 200 {
			t.Fatalf("put: %d %s", r.status, r.body)
		}
	}
	r := s.call(t, "", "POST", "/v1/memory/items/search", `{"query":"which hue"}`)
	var page struct {
		Items []struct {
			Key   string   `json:"key"`
			Score *float64 `json:"score"`
		} `json:"items"`
	}
	r.json(t, &page)
	if r.status != 200 || len(page.Items) != 2 || page.Items[0].Key != "colour" || *page.Items[0].Score < 0.99 || *page.Items[1].Score > 0.3 {
		t.Fatalf("search by meaning: %d %s", r.status, r.body)
	}
	if got := auth.Load(); got != "Bearer sk-embed" {
		t.Fatalf("the endpoint saw Authorization %v, want the key of EMBED_KEY", got)
	}
	return s
}
