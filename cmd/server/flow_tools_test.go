package main

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A flow on the server's real tools: http_get against a loopback server,
// an MCP server's tool (started here) behind an approval, and a peer
// agent on another agentd server as a tool.
func TestFlowCallsRealTools(t *testing.T) {
	web := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		_, _ = fmt.Fprint(w, "the weather is fine")
	}))
	t.Cleanup(web.Close)
	mcpURL, mcpCalls := mcpTestServer(t)
	peer := start(t)

	dir := t.TempDir()
	flowYAML := `
name: errands
nodes:
  - id: start
    do: {name: http_get, args: {url: "` + web.URL + `/weather"}}
    save_to: weather
    to: greet
  - id: greet
    do: {name: people__greet, args: {name: Ada}}
    metadata: {confirm_msg: "Greet Ada through the people directory?"}
    save_to: greeting
    to: ask
  - id: ask
    do: {name: ask_echo, args: {message: "relay this"}}
    save_to: echoed
    to: done
  - id: done
    content: "web: {{ toJson .weather }} | mcp: {{ toJson .greeting }} | peer: {{ toJson .echoed }}"
`
	cfgYAML := `
federation: {allow_private: true}
tools:
  http_get: {allow_hosts: ["127.0.0.1"], allow_private: true}
agents:
  - id: errands
    engine: flow
    flow: errands.yaml
    mcp_servers: [{name: people, url: "` + mcpURL + `"}]
    peer_tools: [{name: ask_echo, card: "` + peer.base + `/agents/echo/.well-known/agent-card.json"}]
`
	for name, text := range map[string]string{"errands.yaml": flowYAML, "agentd.yaml": cfgYAML} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	s := start(t, "--config", filepath.Join(dir, "agentd.yaml"))
	run := readJSON[refundRun](t, s.post(t, "/v1/agents/errands/messages", `{"text":"go"}`), http.StatusOK)
	if q, _ := run.question(); run.Status != "input-required" || !strings.Contains(q, "Greet Ada") {
		t.Fatalf("run %s %q, want the MCP call waiting for approval", run.Status, q)
	}
	if n := mcpCalls(); n != 0 {
		t.Fatalf("the MCP tool ran %d times before its approval", n)
	}
	done := readJSON[runJSON](t, s.post(t, "/v1/runs/"+run.ID+"/input", `{"text":"yes"}`), http.StatusOK)
	if done.Status != "completed" {
		t.Fatalf("after the approval: %+v", done)
	}
	answer := lastText(done)
	for _, want := range []string{"the weather is fine", "hello Ada", "relay this"} {
		if !strings.Contains(answer, want) {
			t.Errorf("answer %q lacks %q", answer, want)
		}
	}
	if n := mcpCalls(); n != 1 {
		t.Errorf("the MCP tool ran %d times, want once", n)
	}
}
