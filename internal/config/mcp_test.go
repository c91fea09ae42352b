package config

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"agentd/internal/engine"
	"agentd/internal/model"
)

// An agent's mcp_servers are connected at Build: their tools are the
// agent's, named <server>__<tool>, and header values name environment
// variables. Close ends the sessions.
func TestMCPServersOfAnAgent(t *testing.T) {
	var auth string
	h := mcp.NewStreamableHTTPHandler(func(r *http.Request) *mcp.Server {
		s := mcp.NewServer(&mcp.Implementation{Name: "t", Version: "1"}, nil)
		type args struct {
			Text string `json:"text"`
		}
		mcp.AddTool(s, &mcp.Tool{Name: "shout", Description: "Shouts."}, func(_ context.Context, _ *mcp.CallToolRequest, a args) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: strings.ToUpper(a.Text)}}}, nil, nil
		})
		return s
	}, nil)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if v := r.Header.Get("Authorization"); v != "" {
			auth = v
		}
		h.ServeHTTP(w, r)
	}))
	defer srv.Close()
	c, err := Parse([]byte(`
providers:
  p:
    type: scripted
    rules:
      - {after_tool: '*', reply: '{{.ToolResult}}'}
      - {tool_calls: [{name: loud__shout, arguments: {text: hi}}]}
agents:
  - id: a
    engine: loop
    provider: p
    tools: [clock]
    tool_settings: {loud__shout: {approval: none}}
    mcp_servers:
      - name: loud
        url: `+srv.URL+`
        headers: {Authorization: "Bearer ${LOUD_TOKEN}"}
`), "agentd.yaml")
	if err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"LOUD_TOKEN": "s3cret"}
	agents, err := c.Build(BuildOptions{Getenv: func(k string) string { return env[k] }})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := c.Close(); err != nil {
			t.Error(err)
		}
	}()
	b := engine.NewBoard()
	b.AppendChannelMessage(engine.MainChannel, model.NewText(model.RoleUser, "go"))
	b, err = agents[0].Engine.Execute(t.Context(), engine.Run{ID: "r1"}, nil, b)
	if err != nil {
		t.Fatal(err)
	}
	msgs := b.ChannelView(engine.MainChannel)
	if got := msgs[len(msgs)-1].Text(); got != "HI" || auth != "Bearer s3cret" {
		t.Fatalf("answer %q, authorization %q; want HI from loud__shout, and the expanded header", got, auth)
	}
}

func TestMCPServerErrors(t *testing.T) {
	for _, c := range []struct{ servers, want string }{
		{`[{name: "a b", command: x}]`, `mcp_servers[0].name: "a b"`},
		{`[{name: a}]`, `mcp_servers[0]: give command (stdio) or url`},
		{`[{name: a, command: x, url: "http://h"}]`, `mcp_servers[0]: give command (stdio) or url`},
		{`[{name: a, url: "ftp://h"}]`, `mcp_servers[0].url: "ftp://h"`},
		{`[{name: a, command: x}, {name: a, command: z}]`, `mcp_servers[1].name: "a" is declared twice`},
		{`[{name: a, url: "http://h", env: {K: v}}]`, `args and env belong to a command`},
	} {
		_, err := Parse([]byte(`
providers:
  p: {type: scripted, rules: [{reply: hi}]}
agents:
  - {id: a, engine: loop, provider: p, mcp_servers: `+c.servers+`}
`), "agentd.yaml")
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.servers, err, c.want)
		}
	}
}
