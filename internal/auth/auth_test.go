package auth

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"agentd/internal/run"
)

const (
	testIssuer   = "https://issuer.test"
	testAudience = "agentd"
	keyAcme      = "acme-key-0123456789abcdef"
	keyReader    = "reader-key-0123456789abcdef"
)

var testSecret = []byte("0123456789abcdef0123456789abcdef")

// newServer is the middleware in front of a handler that reports who it
// saw, on a real loopback listener.
func newServer(t *testing.T, o Options) *httptest.Server {
	t.Helper()
	a, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(a.Middleware(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p, _ := PrincipalFrom(r.Context())
		_ = json.NewEncoder(w).Encode(map[string]any{
			"name": p.Name, "tenant": run.TenantFrom(r.Context()), "method": p.Method,
		})
	})))
	t.Cleanup(srv.Close)
	return srv
}

func keyOptions() Options {
	digest := sha256.Sum256([]byte(keyReader))
	return Options{APIKeys: []APIKey{
		{Name: "acme-ci", Tenant: "acme", Scopes: []Scope{RunsWrite, RunsRead, AgentsRead}, Key: keyAcme},
		{Name: "reader", Tenant: "globex", Scopes: []Scope{RunsRead}, SHA256: hex.EncodeToString(digest[:])},
	}}
}

type answer struct {
	status int
	header http.Header
	body   string
}

func call(t *testing.T, method, url string, header map[string]string) answer {
	t.Helper()
	req, _ := http.NewRequest(method, url, nil)
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return answer{resp.StatusCode, resp.Header, string(b)}
}

func TestAPIKeys(t *testing.T) {
	srv := newServer(t, keyOptions())
	cases := []struct {
		name, method, path string
		header             map[string]string
		status             int
		want               string // in the body
		challenge          string // in WWW-Authenticate
	}{
		{"bearer key", "GET", "/v1/runs", map[string]string{"Authorization": "Bearer " + keyAcme}, 200, `"tenant":"acme"`, ""},
		{"X-API-Key", "GET", "/v1/runs", map[string]string{"X-API-Key": keyAcme}, 200, `"name":"acme-ci"`, ""},
		{"digest key", "GET", "/v1/runs/x/events", map[string]string{"X-API-Key": keyReader}, 200, `"tenant":"globex"`, ""},
		{"no credentials", "GET", "/v1/runs", nil, 401, "needs credentials", `Bearer realm="agentd"`},
		{"unknown key", "GET", "/v1/runs", map[string]string{"X-API-Key": "nope-0123456789abcdef"}, 401, "API key is not valid", `error="invalid_token"`},
		{"basic scheme", "GET", "/v1/runs", map[string]string{"Authorization": "Basic eDp5"}, 401, "must be Bearer", `error="invalid_token"`},
		{"wrong scope", "POST", "/v1/agents/echo/messages", map[string]string{"X-API-Key": keyReader}, 403, "needs the scope runs:write", `error="insufficient_scope"`},
		{"admin route", "GET", "/metrics", map[string]string{"X-API-Key": keyAcme}, 403, "needs the scope admin", `scope="admin"`},
		{"public card", "GET", "/agents/echo/.well-known/agent-card.json", nil, 200, `"tenant":"default"`, ""},
		{"healthz", "GET", "/healthz", nil, 200, "", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			a := call(t, c.method, srv.URL+c.path, c.header)
			if a.status != c.status || !strings.Contains(a.body, c.want) {
				t.Fatalf("%s %s: %d %s, want %d with %q", c.method, c.path, a.status, a.body, c.status, c.want)
			}
			if got := a.header.Get("WWW-Authenticate"); !strings.Contains(got, c.challenge) || (c.challenge == "" && got != "") {
				t.Errorf("WWW-Authenticate %q, want %q", got, c.challenge)
			}
			if strings.Contains(a.body, keyAcme) || strings.Contains(a.body, keyReader) {
				t.Errorf("the answer repeats a key: %s", a.body)
			}
		})
	}
}

// TestRefusalFormats: A2A routes are refused in their binding's format.
func TestRefusalFormats(t *testing.T) {
	srv := newServer(t, keyOptions())
	a := call(t, "POST", srv.URL+"/agents/echo/jsonrpc", nil)
	var rpc struct {
		JSONRPC string `json:"jsonrpc"`
		Error   struct {
			Code int `json:"code"`
		} `json:"error"`
	}
	if err := json.Unmarshal([]byte(a.body), &rpc); err != nil || a.status != 401 || rpc.Error.Code != -31401 || rpc.JSONRPC != "2.0" {
		t.Errorf("JSON-RPC: %d %s, want 401 with a JSON-RPC error -31401", a.status, a.body)
	}
	a = call(t, "GET", srv.URL+"/agents/echo/rest/tasks/1", nil)
	if a.status != 401 || !strings.Contains(a.body, `"status":"UNAUTHENTICATED"`) {
		t.Errorf("HTTP+JSON: %d %s, want 401 UNAUTHENTICATED", a.status, a.body)
	}
	a = call(t, "GET", srv.URL+"/v1/runs", nil)
	if a.status != 401 || a.header.Get("Content-Type") != "application/problem+json" || !strings.Contains(a.body, `"type":"urn:agentd:problem:unauthorized"`) {
		t.Errorf("REST: %d %s %s, want 401 problem details", a.status, a.header.Get("Content-Type"), a.body)
	}
}

func claims(mod func(map[string]any)) map[string]any {
	c := map[string]any{
		"iss": testIssuer, "aud": []string{"other", testAudience}, "sub": "alice",
		"exp": time.Now().Add(time.Hour).Unix(), "tenant": "acme", "scope": "runs:read runs:write",
	}
	if mod != nil {
		mod(c)
	}
	return c
}

func TestJWTHS256(t *testing.T) {
	srv := newServer(t, Options{JWT: &JWTOptions{Issuer: testIssuer, Audience: testAudience, HS256Secret: testSecret, Leeway: time.Second}})
	hs := signer{alg: "HS256", secret: testSecret}
	other := signer{alg: "HS256", secret: []byte("another-secret-another-secret-xx")}
	cases := []struct {
		name   string
		token  string
		path   string
		status int
		want   string
	}{
		{"valid", hs.token(t, claims(nil)), "/v1/runs", 200, `"tenant":"acme"`},
		{"audience string", hs.token(t, claims(func(c map[string]any) { c["aud"] = testAudience })), "/v1/runs", 200, `"name":"alice"`},
		{"scp array", hs.token(t, claims(func(c map[string]any) { delete(c, "scope"); c["scp"] = []string{"runs:read"} })), "/v1/runs", 200, `"method":"jwt"`},
		{"expired", hs.token(t, claims(func(c map[string]any) { c["exp"] = time.Now().Add(-time.Minute).Unix() })), "/v1/runs", 401, "token expired"},
		{"no exp", hs.token(t, claims(func(c map[string]any) { delete(c, "exp") })), "/v1/runs", 401, "no valid exp"},
		{"not yet valid", hs.token(t, claims(func(c map[string]any) { c["nbf"] = time.Now().Add(time.Hour).Unix() })), "/v1/runs", 401, "not valid before"},
		{"wrong audience", hs.token(t, claims(func(c map[string]any) { c["aud"] = "someone-else" })), "/v1/runs", 401, "audience does not include"},
		{"wrong issuer", hs.token(t, claims(func(c map[string]any) { c["iss"] = "https://evil.test" })), "/v1/runs", 401, "issuer"},
		{"no tenant", hs.token(t, claims(func(c map[string]any) { delete(c, "tenant") })), "/v1/runs", 401, "claim naming its tenant"},
		{"wrong scope", hs.token(t, claims(func(c map[string]any) { c["scope"] = "agents:read" })), "/v1/runs", 403, "needs the scope runs:read"},
		{"admin scope", hs.token(t, claims(func(c map[string]any) { c["scope"] = "admin" })), "/metrics", 200, `"tenant":"acme"`},
		{"bad signature", other.token(t, claims(nil)), "/v1/runs", 401, "signature does not verify"},
		{"alg none", signer{alg: "none"}.token(t, claims(nil)), "/v1/runs", 401, "is not accepted (HS256, RS256, ES256)"},
		{"RS256 without JWKS", rsaSigner(t, "k").token(t, claims(nil)), "/v1/runs", 401, "not accepted here"},
		{"garbage", "eyJ.garbage.x", "/v1/runs", 401, "token header"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			a := call(t, "GET", srv.URL+c.path, map[string]string{"Authorization": "Bearer " + c.token})
			if a.status != c.status || !strings.Contains(a.body, c.want) {
				t.Fatalf("%d %s, want %d with %q", a.status, a.body, c.status, c.want)
			}
			if c.status == 401 && !strings.Contains(a.header.Get("WWW-Authenticate"), `error="invalid_token"`) {
				t.Errorf("WWW-Authenticate %q lacks invalid_token", a.header.Get("WWW-Authenticate"))
			}
			if strings.Contains(a.body, c.token) {
				t.Error("the answer repeats the token")
			}
		})
	}
}

// TestJWKSRotation: RS256 and ES256 tokens verify against a JWKS on
// loopback; a token signed by a key rotated in later verifies once the
// unknown kid triggers a refetch; a retired key stops verifying; unknown
// kids refetch at most once per MinRefetch.
func TestJWKSRotation(t *testing.T) {
	oldKey, newKey := rsaSigner(t, "2026-01"), ecSigner(t, "2026-02")
	jw := newJWKSServer(t, oldKey)
	now := time.Now()
	clock := func() time.Time { return now }
	srv := newServer(t, Options{JWT: &JWTOptions{Issuer: testIssuer, Audience: testAudience, JWKSURL: jw.URL,
		MinRefetch: time.Minute, JWKSMaxAge: time.Hour, Now: clock}})
	get := func(tok string) answer {
		return call(t, "GET", srv.URL+"/v1/runs", map[string]string{"Authorization": "Bearer " + tok})
	}
	if a := get(oldKey.token(t, claims(nil))); a.status != 200 {
		t.Fatalf("RS256 token: %d %s", a.status, a.body)
	}
	if a := get(oldKey.token(t, claims(nil))); a.status != 200 || jw.fetches.Load() != 1 {
		t.Fatalf("second RS256 token: %d %s after %d fetches, want 200 from the cache (1 fetch)", a.status, a.body, jw.fetches.Load())
	}
	jw.rotate(newKey)
	now = now.Add(2 * time.Minute) // the last fetch is older than MinRefetch
	if a := get(newKey.token(t, claims(nil))); a.status != 200 || jw.fetches.Load() != 2 {
		t.Fatalf("ES256 token of the rotated-in key: %d %s after %d fetches, want 200 after a refetch", a.status, a.body, jw.fetches.Load())
	}
	if a := get(oldKey.token(t, claims(nil))); a.status != 401 || !strings.Contains(a.body, `key id \"2026-01\"`) {
		t.Fatalf("token of the retired key: %d %s, want 401 naming its key id", a.status, a.body)
	}
	for i := 0; i < 5; i++ { // forged key ids within MinRefetch: no fetch
		forged := rsaSigner(t, "forged")
		if a := get(forged.token(t, claims(nil))); a.status != 401 {
			t.Fatalf("forged kid: %d %s", a.status, a.body)
		}
	}
	if n := jw.fetches.Load(); n != 2 {
		t.Fatalf("%d JWKS fetches after forged key ids within MinRefetch, want 2", n)
	}
	now = now.Add(2 * time.Minute) // past MinRefetch: one more fetch may happen
	get(rsaSigner(t, "forged-again").token(t, claims(nil)))
	if n := jw.fetches.Load(); n != 3 {
		t.Fatalf("%d JWKS fetches after MinRefetch passed, want 3", n)
	}
	if a := get(rsaSigner(t, "2026-02").token(t, claims(nil))); a.status != 401 || !strings.Contains(a.body, "RS256 keys") {
		t.Fatalf("an RSA token under the EC key's id: %d %s, want 401 (key type decides the algorithm)", a.status, a.body)
	}
}

func TestNewRefusesUselessConfigurations(t *testing.T) {
	for name, o := range map[string]Options{
		"nothing":       {},
		"short key":     {APIKeys: []APIKey{{Name: "a", Tenant: "t", Key: "short"}}},
		"both":          {APIKeys: []APIKey{{Name: "a", Tenant: "t", Key: keyAcme, SHA256: strings.Repeat("0", 64)}}},
		"bad digest":    {APIKeys: []APIKey{{Name: "a", Tenant: "t", SHA256: "xyz"}}},
		"duplicate":     {APIKeys: []APIKey{{Name: "a", Tenant: "t", Key: keyAcme}, {Name: "b", Tenant: "u", Key: keyAcme}}},
		"no issuer":     {JWT: &JWTOptions{Audience: "a", HS256Secret: testSecret}},
		"short secret":  {JWT: &JWTOptions{Issuer: "i", Audience: "a", HS256Secret: []byte("short")}},
		"no key source": {JWT: &JWTOptions{Issuer: "i", Audience: "a"}},
	} {
		if _, err := New(o); err == nil {
			t.Errorf("%s: New accepted it", name)
		} else if strings.Contains(err.Error(), keyAcme) {
			t.Errorf("%s: the error repeats the key: %v", name, err)
		}
	}
}

func TestPublicAndScopes(t *testing.T) {
	for path, want := range map[string]bool{
		"/healthz": true, "/readyz": true, "/.well-known/agent-card.json": true,
		"/agents/echo/.well-known/agent-card.json": true, "/agents/echo/.well-known/agent.json": true,
		"/agents//.well-known/agent-card.json": false, "/agents/echo/jsonrpc": false, "/openapi.yaml": false,
		"/v1/agents": false, "/metrics": false,
	} {
		if Public(path) != want {
			t.Errorf("Public(%q) = %v, want %v", path, !want, want)
		}
	}
	for _, c := range []struct {
		method, path string
		want         Scope
	}{
		{"GET", "/v1/agents", AgentsRead}, {"HEAD", "/v1/agents/echo", AgentsRead},
		{"POST", "/v1/agents/echo/messages", RunsWrite}, {"GET", "/v1/runs/1/events", RunsRead},
		{"POST", "/v1/runs/1/cancel", RunsWrite}, {"POST", "/v1/runs/1/input", RunsWrite},
		{"GET", "/v1/contexts/c/messages", RunsRead}, {"GET", "/metrics", Admin},
		{"POST", "/v1/schedules", RunsWrite}, {"DELETE", "/v1/schedules/s", RunsWrite}, {"GET", "/v1/schedules", RunsRead},
		{"POST", "/lg/runs/crons", RunsWrite}, {"POST", "/lg/runs/crons/search", RunsRead},
		{"POST", "/agents/echo/jsonrpc", ""}, {"GET", "/openapi.yaml", ""},
		{"GET", "/v1/assistants", AgentsRead}, {"POST", "/v1/assistants", RunsWrite},
		{"PATCH", "/v1/assistants/a", RunsWrite}, {"GET", "/v1/assistants/a/versions", AgentsRead},
		{"POST", "/lg/assistants/search", AgentsRead}, {"POST", "/lg/assistants/a/versions", AgentsRead},
		{"POST", "/lg/assistants", RunsWrite}, {"DELETE", "/lg/assistants/a", RunsWrite},
		{"POST", "/lg/assistants/a/latest", RunsWrite}, {"GET", "/lg/assistants/a", AgentsRead},
	} {
		if got := RouteScope(c.method, c.path); got != c.want {
			t.Errorf("RouteScope(%s %s) = %q, want %q", c.method, c.path, got, c.want)
		}
	}
}
