package main

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient/agentcard"
	"github.com/a2aproject/a2a-go/v2/a2acompat/a2av0"
)

// TestAuthenticatedServer: with an auth section, the cards and probes stay
// public and declare the schemes (readable by v1.0 and v0.3 parsers);
// everything else needs a key — 401 with WWW-Authenticate without one,
// 403 for a key without the scope — over REST and both A2A bindings; the
// extended card is served to authenticated callers.
func TestAuthenticatedServer(t *testing.T) {
	s := startWithAuth(t, "", authYAML)
	for _, path := range []string{"/healthz", "/readyz", "/.well-known/agent-card.json", "/agents/echo/.well-known/agent-card.json"} {
		if r := s.call(t, "", "GET", path, ""); r.status != 200 {
			t.Errorf("GET %s without a key: %d, want 200 (public)", path, r.status)
		}
	}
	raw := s.call(t, "", "GET", "/agents/echo/.well-known/agent-card.json", "").body
	v1, err := agentcard.DefaultCardParser([]byte(raw))
	if err != nil {
		t.Fatalf("v1.0 parser: %v", err)
	}
	v03, err := a2av0.NewAgentCardParser()([]byte(raw))
	if err != nil {
		t.Fatalf("v0.3 parser: %v", err)
	}
	for name, c := range map[string]*a2a.AgentCard{"v1.0": v1, "v0.3": v03} {
		key, ok := c.SecuritySchemes["apiKey"].(a2a.APIKeySecurityScheme)
		if !ok || key.Name != "X-API-Key" || key.Location != a2a.APIKeySecuritySchemeLocationHeader || len(c.SecurityRequirements) == 0 || !c.Capabilities.ExtendedAgentCard {
			t.Errorf("%s card: schemes %+v, requirements %v, extended card %v", name, c.SecuritySchemes, c.SecurityRequirements, c.Capabilities.ExtendedAgentCard)
		}
	}

	for _, c := range []struct {
		key, method, path, body string
		status                  int
		want                    string
	}{
		{"", "GET", "/v1/agents", "", 401, "needs credentials"},
		{"", "GET", "/openapi.yaml", "", 401, "needs credentials"},
		{"wrong-key-0123456789abcdef", "GET", "/v1/runs", "", 401, "API key is not valid"},
		{readerKey, "POST", "/v1/agents/echo/messages", `{"text":"hi"}`, 403, "needs the scope runs:write"},
		{readerKey, "GET", "/v1/agents", "", 403, "needs the scope agents:read"},
		{readerKey, "GET", "/v1/runs", "", 200, `"runs"`},
		{acmeKey, "POST", "/v1/agents/echo/messages", `{"text":"hi"}`, 200, `"status":"completed"`},
		{"", "POST", "/agents/echo/jsonrpc", `{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":"x"}}`, 401, `"code":-31401`},
		{"", "GET", "/agents/echo/rest/tasks/x", "", 401, `"status":"UNAUTHENTICATED"`},
	} {
		r := s.call(t, c.key, c.method, c.path, c.body)
		if r.status != c.status || !strings.Contains(r.body, c.want) {
			t.Errorf("%s %s (key %.6s…): %d %s, want %d with %s", c.method, c.path, c.key, r.status, r.body, c.status, c.want)
		}
		if c.status == 401 && !strings.HasPrefix(r.header.Get("WWW-Authenticate"), `Bearer realm="agentd"`) {
			t.Errorf("%s %s: WWW-Authenticate %q", c.method, c.path, r.header.Get("WWW-Authenticate"))
		}
		if strings.Contains(r.body, c.key) && c.key != "" {
			t.Errorf("%s %s: the answer repeats the key", c.method, c.path)
		}
	}
	if strings.Contains(s.logs.String(), acmeKey) || strings.Contains(s.logs.String(), readerKey) {
		t.Error("the server log holds a key")
	}

	ctx := context.Background()
	for _, b := range a2aBindings {
		t.Run(b.name, func(t *testing.T) {
			reader := s.a2aClient(t, "echo", readerKey, b.protocol, b.path)
			_, err := reader.SendMessage(ctx, &a2a.SendMessageRequest{Message: a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("hi"))})
			if !errors.Is(err, a2a.ErrUnauthorized) || !strings.Contains(err.Error(), "runs:write") {
				t.Errorf("SendMessage with a read-only key: %v, want permission denied naming runs:write", err)
			}
			if _, err := reader.ListTasks(ctx, &a2a.ListTasksRequest{}); err != nil {
				t.Errorf("ListTasks with a read-only key: %v", err)
			}
			if _, err := reader.GetExtendedAgentCard(ctx, &a2a.GetExtendedAgentCardRequest{}); !errors.Is(err, a2a.ErrUnauthorized) {
				t.Errorf("GetExtendedAgentCard without agents:read: %v, want permission denied", err)
			}
			owner := s.a2aClient(t, "echo", acmeKey, b.protocol, b.path)
			card, err := owner.GetExtendedAgentCard(ctx, &a2a.GetExtendedAgentCardRequest{})
			if err != nil || card.Name == "" || card.SecuritySchemes["apiKey"] == nil {
				t.Fatalf("GetExtendedAgentCard: %+v, %v", card, err)
			}
			res, err := owner.SendMessage(ctx, &a2a.SendMessageRequest{Message: a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("hi"))})
			if err != nil {
				t.Fatalf("SendMessage with acme's key: %v", err)
			}
			if task, ok := res.(*a2a.Task); !ok || task.Status.State != a2a.TaskStateCompleted {
				t.Fatalf("SendMessage with acme's key: %+v", res)
			}
		})
	}
}

// TestAuthAllowsListeningBeyondLoopback: with authentication configured,
// a non-loopback address needs no --allow-unauthenticated; without it,
// it is still refused. A missing key variable is a startup error naming
// it and never the other keys.
func TestAuthAllowsListeningBeyondLoopback(t *testing.T) {
	if err := checkExposure("0.0.0.0:0", false); err == nil {
		t.Fatal("0.0.0.0 without auth and without the flag was accepted")
	}
	s := startWithAuthArgs(t, authYAML, "--addr", "0.0.0.0:0")
	s.base = strings.Replace(s.base, "0.0.0.0", "127.0.0.1", 1)
	if r := s.call(t, acmeKey, "GET", "/v1/agents", ""); r.status != 200 {
		t.Fatalf("GET /v1/agents: %d %s", r.status, r.body)
	}
	path := writeAuthConfig(t, authYAML)
	err := run(context.Background(), []string{"--config", path, "--addr", "127.0.0.1:0"}, func(k string) string {
		if k == "GLOBEX_KEY" {
			return ""
		}
		return authEnv[k]
	}, &syncBuffer{}, nil)
	if err == nil || !strings.Contains(err.Error(), "GLOBEX_KEY is empty or unset") || strings.Contains(err.Error(), acmeKey) {
		t.Fatalf("start without GLOBEX_KEY: %v", err)
	}
}

// TestLimitsThroughTheServer: a tenant over its rate gets 429 with
// Retry-After, as problem details over REST and as a JSON-RPC error over
// A2A, while another tenant is served.
func TestLimitsThroughTheServer(t *testing.T) {
	s := startWithAuth(t, "", authYAML+"limits: {requests_per_second: 0.001, burst: 2, max_parts: 2}\n")
	for i := 0; i < 2; i++ {
		if r := s.call(t, acmeKey, "GET", "/v1/runs", ""); r.status != 200 {
			t.Fatalf("request %d: %d %s", i, r.status, r.body)
		}
	}
	r := s.call(t, acmeKey, "GET", "/v1/runs", "")
	var p struct {
		Type, Detail string
	}
	_ = json.Unmarshal([]byte(r.body), &p)
	if r.status != 429 || r.header.Get("Retry-After") == "" || p.Type != "urn:agentd:problem:rate_limit" {
		t.Fatalf("third request: %d Retry-After %q %s, want 429 problem details with Retry-After", r.status, r.header.Get("Retry-After"), r.body)
	}
	r = s.call(t, acmeKey, "POST", "/agents/echo/jsonrpc", `{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":"x"}}`, "A2A-Version", "1.0")
	if r.status != 429 || !strings.Contains(r.body, `"code":-32000`) || !strings.Contains(r.body, "tenant acme") {
		t.Fatalf("JSON-RPC over the rate: %d %s", r.status, r.body)
	}
	body := `{"message":{"role":"user","parts":[{"type":"text","text":"a"},{"type":"text","text":"b"},{"type":"text","text":"c"}]}}`
	if r := s.call(t, globexKey, "POST", "/v1/agents/echo/messages", body); r.status != 400 || !strings.Contains(r.body, "3 parts; at most 2") {
		t.Fatalf("globex's three-part message: %d %s, want 400", r.status, r.body)
	}
}
