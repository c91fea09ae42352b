package a2a_test

import (
	"agentd/internal/calltree"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2acompat/a2av0"

	agenta2a "agentd/internal/a2a"
)

func getCard(t *testing.T, url string, header map[string]string) (*http.Response, []byte) {
	t.Helper()
	req, _ := http.NewRequestWithContext(ctxT(t), "GET", url, nil)
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, b
}

func TestCards(t *testing.T) {
	e := newEnv(t)
	resp, body := getCard(t, e.base+"/.well-known/agent-card.json", nil)
	if resp.StatusCode != 200 || resp.Header.Get("ETag") == "" || !strings.Contains(resp.Header.Get("Cache-Control"), "max-age=") {
		t.Fatalf("%d, headers %v", resp.StatusCode, resp.Header)
	}
	var card a2a.AgentCard
	if err := json.Unmarshal(body, &card); err != nil {
		t.Fatal(err)
	}
	if card.Name != "Echo" || card.Version != "1.0.0" || card.Description == "" || len(card.Skills) == 0 || len(card.Skills[0].Tags) == 0 {
		t.Fatalf("default card %+v", card)
	}
	root := e.base + "/agents/echo"
	want := []a2a.AgentInterface{
		{URL: root + "/jsonrpc", ProtocolBinding: a2a.TransportProtocolJSONRPC, ProtocolVersion: "1.0"},
		{URL: root + "/rest", ProtocolBinding: a2a.TransportProtocolHTTPJSON, ProtocolVersion: "1.0"},
		{URL: root + "/jsonrpc", ProtocolBinding: a2a.TransportProtocolJSONRPC, ProtocolVersion: "0.3"},
		{URL: root + "/rest", ProtocolBinding: a2a.TransportProtocolHTTPJSON, ProtocolVersion: "0.3"},
	}
	for i, w := range want {
		if *card.SupportedInterfaces[i] != w {
			t.Fatalf("interface %d: %+v, want %+v", i, card.SupportedInterfaces[i], w)
		}
	}
	caps := card.Capabilities
	if !caps.Streaming || !caps.PushNotifications || caps.ExtendedAgentCard || len(caps.Extensions) != 2 || caps.Extensions[0].URI != agenta2a.ExtensionURI || caps.Extensions[1].URI != calltree.ExtensionURI {
		t.Fatalf("capabilities %+v", caps)
	}
	// The v0.3 members of the combined card.
	var v03 struct {
		URL                string `json:"url"`
		PreferredTransport string `json:"preferredTransport"`
		ProtocolVersion    string `json:"protocolVersion"`
	}
	_ = json.Unmarshal(body, &v03)
	if v03.URL != root+"/jsonrpc" || v03.PreferredTransport != "JSONRPC" || v03.ProtocolVersion != "0.3" {
		t.Fatalf("v0.3 fields %+v", v03)
	}
	old, err := a2av0.NewAgentCardParser()(body)
	if err != nil || old.Name != "Echo" {
		t.Fatalf("v0.3 parser: %v %+v", err, old)
	}

	t.Run("etag", func(t *testing.T) {
		resp, body := getCard(t, e.base+"/.well-known/agent-card.json", map[string]string{"If-None-Match": resp.Header.Get("ETag")})
		if resp.StatusCode != http.StatusNotModified || len(body) != 0 {
			t.Fatalf("%d with %d bytes, want 304", resp.StatusCode, len(body))
		}
	})
	t.Run("per agent", func(t *testing.T) {
		resp, body := getCard(t, e.base+"/agents/conformance/.well-known/agent-card.json", nil)
		if resp.StatusCode != 200 || !strings.Contains(string(body), e.base+"/agents/conformance/jsonrpc") {
			t.Fatalf("%d %s", resp.StatusCode, body)
		}
		if resp, _ := getCard(t, e.base+"/agents/nobody/.well-known/agent-card.json", nil); resp.StatusCode != 404 {
			t.Fatalf("unknown agent: %d", resp.StatusCode)
		}
	})
	t.Run("behind a proxy", func(t *testing.T) {
		_, body := getCard(t, e.base+"/.well-known/agent-card.json", map[string]string{"X-Forwarded-Proto": "https", "X-Forwarded-Host": "agents.example.com"})
		var c a2a.AgentCard
		_ = json.Unmarshal(body, &c)
		if got := c.SupportedInterfaces[0].URL; got != "https://agents.example.com/agents/echo/jsonrpc" {
			t.Fatalf("url %s", got)
		}
	})
	t.Run("public URL", func(t *testing.T) {
		p := newEnv(t, func(o *agentOptions) { o.PublicURL = "https://a2a.example.org/base/"; o.DefaultAgent = "conformance" })
		_, body := getCard(t, p.base+"/.well-known/agent-card.json", map[string]string{"X-Forwarded-Host": "ignored.example"})
		var c a2a.AgentCard
		_ = json.Unmarshal(body, &c)
		if c.Name != "Conformance" || c.SupportedInterfaces[1].URL != "https://a2a.example.org/base/agents/conformance/rest" {
			t.Fatalf("card %s %+v", c.Name, c.SupportedInterfaces[1])
		}
	})
}

// Cards answer HEAD like GET, without a body.
func TestCardsAnswerHEAD(t *testing.T) {
	e := newEnv(t)
	for _, path := range []string{"/.well-known/agent-card.json", "/agents/echo/.well-known/agent-card.json"} {
		req, _ := http.NewRequestWithContext(ctxT(t), http.MethodHead, e.base+path, nil)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != http.StatusOK || res.Header.Get("ETag") == "" {
			t.Errorf("HEAD %s: %d (ETag %q), want 200 with the card's headers", path, res.StatusCode, res.Header.Get("ETag"))
		}
	}
}
