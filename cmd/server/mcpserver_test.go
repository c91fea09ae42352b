package main

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Federation over MCP, end to end: a loop agent of one agentd server
// calls another agentd server's assistant through its MCP endpoint (the
// existing mcp_servers tool config, with an API key of the second
// server's tenant acme as the MCP bearer token). The call is an ordinary
// run on the second server, in acme's tenant; the endpoint refuses a
// caller without a key.

const mcpPeerConfig = `
providers:
  host:
    type: scripted
    rules:
      - {after_tool: '*', reply: 'The peer said: {{.ToolResult}}'}
      - {match: '^ask the peer (.+)$', tool_calls: [{name: peer__assistant, arguments: '{"message": {{index .Groups 1 | json}}}'}]}
      - {reply: 'Say "ask the peer X".'}
agents:
  - id: host
    engine: loop
    provider: host
    mcp_servers:
      - name: peer
        url: %s/mcp/agents/assistant
        headers: {Authorization: 'Bearer ${PEER_KEY}'}
`

func TestAgentUsesAnotherServersAgentOverMCP(t *testing.T) {
	eachStore(t, func(t *testing.T, dsn string) {
		peer := startWithAuth(t, dsn, authYAML)
		if r := peer.call(t, "", http.MethodPost, "/mcp", `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}`); r.status != http.StatusUnauthorized {
			t.Fatalf("/mcp without a key: %d %s", r.status, r.body)
		}
		env := func(k string) string {
			if k == "PEER_KEY" {
				return acmeKey
			}
			return ""
		}
		acmeBefore, globexBefore := runsOf(t, peer, acmeKey), runsOf(t, peer, globexKey)
		host := startEnv(t, env, "--config", writeYAML(t, fmt.Sprintf(mcpPeerConfig, peer.base)))
		_, run := host.postJSONRun(t, "/v1/agents/host/messages", `{"text":"ask the peer calculate 2*(3+4)"}`)
		if run.Status != "completed" || run.lastText() != "The peer said: The result is 14." {
			t.Fatalf("host over MCP: %s %q", run.Status, run.lastText())
		}
		acme, globex := runsOf(t, peer, acmeKey), runsOf(t, peer, globexKey)
		var added []string
		for id, r := range acme {
			if _, ok := acmeBefore[id]; !ok {
				added = append(added, r)
			}
		}
		if len(added) != 1 || added[0] != "assistant completed" || len(globex) != len(globexBefore) {
			t.Fatalf("the peer's new runs: acme %v, globex %d → %d; want the one call, in acme's tenant", added, len(globexBefore), len(globex))
		}
	})
}

// runsOf lists the runs key's tenant sees on s: id → "agent status".
func runsOf(t *testing.T, s *server, key string) map[string]string {
	t.Helper()
	var page struct {
		Runs []struct {
			ID      string `json:"id"`
			AgentID string `json:"agent_id"`
			Status  string `json:"status"`
		} `json:"runs"`
	}
	s.call(t, key, http.MethodGet, "/v1/runs?limit=100", "").json(t, &page)
	out := map[string]string{}
	for _, r := range page.Runs {
		out[r.ID] = r.AgentID + " " + r.Status
	}
	return out
}

// keyed adds an API key to every request of an MCP client: as a bearer
// token, or in X-API-Key.
type keyed struct {
	key    string
	header bool
}

func (k keyed) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	if k.header {
		r.Header.Set("X-API-Key", k.key)
	} else {
		r.Header.Set("Authorization", "Bearer "+k.key)
	}
	return http.DefaultTransport.RoundTrip(r)
}

// mcpSession connects the go-sdk client to s's /mcp with key (bearer).
func mcpSession(t *testing.T, s *server, key string) (*mcp.ClientSession, error) {
	return mcpSessionWith(t, s, keyed{key: key})
}

func mcpSessionWith(t *testing.T, s *server, k keyed) (*mcp.ClientSession, error) {
	// The client takes tasks (io.modelcontextprotocol/tasks), and polls
	// them through the SDK's custom methods.
	caps := &mcp.ClientCapabilities{Extensions: map[string]any{"io.modelcontextprotocol/tasks": map[string]any{}}}
	c := mcp.NewClient(&mcp.Implementation{Name: "agentd-test", Version: "1"}, &mcp.ClientOptions{Capabilities: caps})
	if err := mcp.AddSendingCustomMethod[*mcpTaskParams, *mcpTask](c, "tasks/get"); err != nil {
		t.Fatal(err)
	}
	if err := mcp.AddSendingCustomMethod[*mcpTaskParams, *mcpTask](c, "tasks/cancel"); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: s.base + "/mcp", HTTPClient: &http.Client{Transport: k}}, nil)
	if err == nil {
		t.Cleanup(func() { _ = cs.Close() })
	}
	return cs, err
}

type mcpTaskParams struct {
	mcp.ParamsBase
	TaskID string `json:"taskId"`
}

type mcpTask struct {
	mcp.ResultBase
	Status string `json:"status"`
}

// The bearer token's tenant and scopes hold on /mcp: a key without
// agents:read lists no tools, one tenant neither answers nor polls
// another's run, a runs:read key polls a task but cannot cancel it.
func TestMCPScopesAndTenants(t *testing.T) {
	s := startWithAuth(t, "", authYAML)
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	reader, err := mcpSession(t, s, readerKey)
	if err == nil {
		_, err = reader.ListTools(ctx, nil)
	}
	if err == nil || !strings.Contains(err.Error(), "needs the scope agents:read") {
		t.Fatalf("tools/list with a runs:read key: %v", err)
	}
	acme, err := mcpSession(t, s, acmeKey)
	if err != nil {
		t.Fatal(err)
	}
	res, err := acme.CallTool(ctx, &mcp.CallToolParams{Name: "conformance", Arguments: map[string]any{"message": "tck-input-required"}})
	if err != nil || res.Meta["agentd/status"] != "input-required" {
		t.Fatalf("acme's call: %v %v", res, err)
	}
	taskID := &mcpTaskParams{TaskID: res.Meta["agentd/run_id"].(string)}
	if got, err := mcp.CallCustomMethod[*mcpTaskParams, *mcpTask](ctx, acme, "tasks/get", taskID); err != nil || got.Status != "input_required" {
		t.Fatalf("acme polls its task: %+v %v", got, err)
	}
	readerTasks, err := mcpSession(t, s, readerKey)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := mcp.CallCustomMethod[*mcpTaskParams, *mcpTask](ctx, readerTasks, "tasks/get", taskID); err != nil {
		t.Fatalf("tasks/get with acme's runs:read key: %v", err)
	}
	if _, err := mcp.CallCustomMethod[*mcpTaskParams, *mcpTask](ctx, readerTasks, "tasks/cancel", taskID); err == nil ||
		!strings.Contains(err.Error(), "needs the scope runs:write") {
		t.Fatalf("tasks/cancel with a runs:read key: %v", err)
	}
	globex, err := mcpSessionWith(t, s, keyed{key: globexKey, header: true}) // X-API-Key works too
	if err != nil {
		t.Fatal(err)
	}
	res, err = globex.CallTool(ctx, &mcp.CallToolParams{Name: "conformance", Arguments: map[string]any{"message": "mine now", "run_id": res.Meta["agentd/run_id"]}})
	if err != nil || !res.IsError || !strings.Contains(fmt.Sprint(res.Content[0]), "not found") {
		t.Fatalf("globex answering acme's run: %+v %v", res, err)
	}
	if _, err := mcp.CallCustomMethod[*mcpTaskParams, *mcpTask](ctx, globex, "tasks/get", taskID); err == nil || !strings.Contains(err.Error(), "not found") {
		t.Fatalf("globex polling acme's task: %v", err)
	}
}

// A tools/call starts a run: it counts against the tenant's concurrent
// runs (limits.concurrent_runs) as a REST or A2A send does; listing the
// tools does not.
func TestMCPCallsCountAgainstRunLimits(t *testing.T) {
	s := startWithAuth(t, "", authYAML+"limits: {concurrent_runs: 1}\n")
	r := s.call(t, acmeKey, "POST", "/v1/agents/echo/messages?wait=false", `{"text":"stream 50 every 200ms"}`)
	if r.status != 202 {
		t.Fatalf("acme's long run: %d %s", r.status, r.body)
	}
	var long runJSON
	r.json(t, &long)
	defer s.call(t, acmeKey, "POST", "/v1/runs/"+long.ID+"/cancel", "")
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	acme, err := mcpSession(t, s, acmeKey)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := acme.ListTools(ctx, nil); err != nil {
		t.Fatalf("tools/list at the run limit: %v", err)
	}
	_, err = acme.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"message": "hi"}})
	if err == nil || !strings.Contains(err.Error(), "429") && !strings.Contains(err.Error(), "Too Many Requests") {
		t.Fatalf("acme's tools/call at its run limit: %v, want refused (429)", err)
	}
	globex, err := mcpSession(t, s, globexKey)
	if err != nil {
		t.Fatal(err)
	}
	if res, err := globex.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"message": "hi"}}); err != nil || textOfResult(res) != "hi" {
		t.Fatalf("globex under its limit: %v %v", res, err)
	}
}

func textOfResult(res *mcp.CallToolResult) string {
	var s string
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			s += tc.Text
		}
	}
	return s
}
