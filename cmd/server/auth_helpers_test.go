package main

// Helpers of the authentication, tenant and limit tests: a server run
// in-process with an auth section and keys in its environment, keyed HTTP
// calls, and a2a-go clients that present a key.

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
	"testing"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"
	"github.com/a2aproject/a2a-go/v2/a2aclient/agentcard"
	"github.com/a2aproject/a2a-go/v2/a2acompat/a2av0"

	"agentd/internal/config"
)

// The tenants' keys, as their environment variables hold them.
const (
	acmeKey   = "acme-key-0123456789abcdef0123"
	globexKey = "globex-key-0123456789abcdef01"
	readerKey = "reader-key-0123456789abcdef01"
)

var authEnv = map[string]string{"ACME_KEY": acmeKey, "GLOBEX_KEY": globexKey, "READER_KEY": readerKey}

// authYAML declares three keys: two tenants with every run scope, and a
// read-only key of acme.
const authYAML = `
auth:
  api_keys:
    - {name: acme-app, tenant: acme, scopes: [agents:read, runs:read, runs:write], key_env: ACME_KEY}
    - {name: globex-app, tenant: globex, scopes: [agents:read, runs:read, runs:write], key_env: GLOBEX_KEY}
    - {name: acme-reader, tenant: acme, scopes: [runs:read], key_env: READER_KEY}
`

// startWithAuth runs the demo configuration plus extra (YAML appended at
// the top level) in-process; dsn, when set, is its DATABASE_URL.
func startWithAuth(t *testing.T, dsn, extra string) *server {
	t.Helper()
	env := func(k string) string {
		if k == "DATABASE_URL" {
			return dsn
		}
		return authEnv[k]
	}
	return startEnv(t, env, "--config", writeAuthConfig(t, extra))
}

// startWithAuthArgs is startWithAuth on memstore with more arguments.
func startWithAuthArgs(t *testing.T, extra string, args ...string) *server {
	t.Helper()
	env := func(k string) string { return authEnv[k] }
	return startEnv(t, env, append([]string{"--config", writeAuthConfig(t, extra)}, args...)...)
}

// writeAuthConfig writes the demo configuration with extra appended.
func writeAuthConfig(t *testing.T, extra string) string {
	t.Helper()
	path, err := config.WriteDemo(t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	_, err = f.WriteString(extra)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		t.Fatal(err)
	}
	return path
}

// reply is an HTTP answer, read whole.
type reply struct {
	status int
	header http.Header
	body   string
}

func (r reply) json(t *testing.T, v any) {
	t.Helper()
	if err := json.Unmarshal([]byte(r.body), v); err != nil {
		t.Fatalf("decode %s: %v", r.body, err)
	}
}

// call makes one request with key in X-API-Key (none when empty) and
// extra headers as name, value pairs.
func (s *server) call(t *testing.T, key, method, path, body string, header ...string) reply {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, s.base+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	if key != "" {
		req.Header.Set("X-API-Key", key)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	res, err := s.client.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return reply{res.StatusCode, res.Header, string(b)}
}

// keyTransport presents an API key as a bearer token on every request.
type keyTransport struct{ key string }

func (k keyTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+k.key)
	return http.DefaultTransport.RoundTrip(r)
}

// a2aBinding is one transport and protocol version of the A2A tests.
type a2aBinding struct {
	name     string
	protocol a2a.TransportProtocol
	path     string
	version  a2a.ProtocolVersion
}

// a2aBindings are the v1.0 bindings the A2A tests go through;
// allA2ABindings adds v0.3's.
var (
	a2aBindings = []a2aBinding{
		{"jsonrpc", a2a.TransportProtocolJSONRPC, "/jsonrpc", a2a.Version},
		{"rest", a2a.TransportProtocolHTTPJSON, "/rest", a2a.Version},
	}
	allA2ABindings = append(a2aBindings[:2:2],
		a2aBinding{"jsonrpc-0.3", a2a.TransportProtocolJSONRPC, "/jsonrpc", a2av0.Version},
		a2aBinding{"rest-0.3", a2a.TransportProtocolHTTPJSON, "/rest", a2av0.Version})
)

// a2aClient is a2a-go's client for agent over one binding, presenting
// key; its card is the server's public card.
func (s *server) a2aClient(t *testing.T, agent, key string, protocol a2a.TransportProtocol, path string) *a2aclient.Client {
	t.Helper()
	return s.a2aClientOf(t, agent, key, a2aBinding{protocol: protocol, path: path, version: a2a.Version})
}

// a2aClientOf is a2aClient over any binding, v0.3's included.
func (s *server) a2aClientOf(t *testing.T, agent, key string, b a2aBinding) *a2aclient.Client {
	t.Helper()
	card, err := agentcard.DefaultResolver.Resolve(context.Background(), s.base+"/agents/"+agent)
	if err != nil {
		t.Fatalf("resolve the card of %s: %v", agent, err)
	}
	hc := &http.Client{Transport: keyTransport{key}}
	u, _ := url.Parse(s.base + "/agents/" + agent + b.path)
	iface := &a2a.AgentInterface{URL: u.String(), ProtocolBinding: b.protocol, ProtocolVersion: b.version}
	c, err := a2aclient.NewFromEndpoints(context.Background(), []*a2a.AgentInterface{iface},
		a2aclient.WithJSONRPCTransport(hc), a2aclient.WithRESTTransport(hc),
		a2av0.WithJSONRPCTransport(a2av0.JSONRPCTransportConfig{Client: hc}),
		a2av0.WithRESTTransport(a2av0.RESTTransportConfig{Client: hc}))
	if err != nil {
		t.Fatal(err)
	}
	if err := c.UpdateCard(card); err != nil {
		t.Fatalf("card: %v", err)
	}
	t.Cleanup(func() { _ = c.Destroy() })
	return c
}
