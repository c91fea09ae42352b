package main

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// A loop agent on an MCP server's tools, through the HTTP API of a real
// server (REST and a2a-go's client), on memstore and on PostgreSQL: the
// server (built with the go-sdk, streamable HTTP on loopback) is connected
// at start, its tool is called by the agent's model, and an error result
// from it reaches the model, which reports it.

// mcpTestServer serves a go-sdk MCP server with greet (answers) and
// fail (an error result); calls counts the tool calls it ran.
func mcpTestServer(t *testing.T) (url string, calls func() int) {
	t.Helper()
	var n int
	ch := make(chan struct{}, 100)
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server {
		s := mcp.NewServer(&mcp.Implementation{Name: "people", Version: "1"}, nil)
		type greetArgs struct {
			Name string `json:"name" jsonschema:"who to greet"`
		}
		mcp.AddTool(s, &mcp.Tool{Name: "greet", Description: "Greets someone."},
			func(_ context.Context, _ *mcp.CallToolRequest, a greetArgs) (*mcp.CallToolResult, any, error) {
				ch <- struct{}{}
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "hello " + a.Name}}}, nil, nil
			})
		s.AddTool(&mcp.Tool{Name: "fail", Description: "Always fails.", InputSchema: json.RawMessage(`{"type":"object"}`)},
			func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				ch <- struct{}{}
				return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "the people directory is down"}}}, nil
			})
		return s
	}, nil)
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv.URL, func() int {
		for {
			select {
			case <-ch:
				n++
			default:
				return n
			}
		}
	}
}

const mcpAgentConfig = `
providers:
  host:
    type: scripted
    rules:
      - {after_tool: '*', reply: 'The tool said: {{.ToolResult}}'}
      - {match: '^greet (\w+)$', tool_calls: [{name: people__greet, arguments: '{"name": {{index .Groups 1 | json}}}'}]}
      - {match: '^break$', tool_calls: [{name: people__fail, arguments: {}}]}
      - {reply: 'Say "greet NAME" or "break".'}
agents:
  - id: host
    engine: loop
    provider: host
    mcp_servers: [{name: people, url: %s}]
`

func TestMCPToolsThroughTheServer(t *testing.T) {
	eachStore(t, func(t *testing.T, dsn string) {
		url, calls := mcpTestServer(t)
		s := startStore(t, writeYAML(t, strings.Replace(mcpAgentConfig, "%s", url, 1)), dsn)
		_, run := s.postJSONRun(t, "/v1/agents/host/messages", `{"text":"greet Ada"}`)
		if run.Status != "completed" || run.lastText() != "The tool said: hello Ada" {
			t.Fatalf("greet over REST: %s %q", run.Status, run.lastText())
		}
		_, run = s.postJSONRun(t, "/v1/agents/host/messages", `{"text":"break"}`)
		if run.Status != "completed" || !strings.Contains(run.lastText(), "the people directory is down") {
			t.Fatalf("a failing MCP tool over REST: %s %q; want the error reported by the model", run.Status, run.lastText())
		}
		got := readJSON[runJSON](t, s.get(t, "/v1/runs/"+run.ID), http.StatusOK)
		var sawError bool
		for _, m := range got.Messages {
			for _, p := range m.Parts {
				var tr struct {
					IsError bool `json:"is_error"`
				}
				if p.Type == "tool_result" && json.Unmarshal(p.ToolResult, &tr) == nil && tr.IsError {
					sawError = true
				}
			}
		}
		if !sawError {
			t.Fatalf("the failing call's result is not an error result: %+v", got.Messages)
		}

		res, err := agentA2A(t, s, "host").SendMessage(t.Context(), &a2a.SendMessageRequest{Message: a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("greet Grace"))})
		if err != nil {
			t.Fatal(err)
		}
		task := res.(*a2a.Task)
		if last := task.History[len(task.History)-1]; task.Status.State != a2a.TaskStateCompleted || last.Parts[0].Text() != "The tool said: hello Grace" {
			t.Fatalf("greet over A2A: %s %#v", task.Status.State, last)
		}
		if n := calls(); n != 3 {
			t.Fatalf("the MCP server ran %d tool calls, want 3", n)
		}
	})
}
