package mcptool_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"agentd/internal/engine"
	"agentd/internal/engine/enginetest"
	"agentd/internal/engine/loop"
	"agentd/internal/llm/scripted"
	"agentd/internal/mcptool"
	"agentd/internal/model"
	"agentd/internal/tool"
)

// serverEnv makes the test binary an MCP server on stdio (TestMain).
const serverEnv = "MCPTOOL_TEST_SERVER"

func TestMain(m *testing.M) {
	if os.Getenv(serverEnv) != "" {
		if err := testServer().Run(context.Background(), &mcp.StdioTransport{}); err != nil {
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// testServer is an MCP server built with the SDK: greet answers, fail
// answers with an error result.
func testServer() *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "test", Version: "1"}, nil)
	type greetArgs struct {
		Name string `json:"name" jsonschema:"who to greet"`
	}
	mcp.AddTool(s, &mcp.Tool{Name: "greet", Description: "Greets someone."},
		func(_ context.Context, _ *mcp.CallToolRequest, a greetArgs) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "hello " + a.Name}}}, nil, nil
		})
	s.AddTool(&mcp.Tool{Name: "fail", Description: "Always fails.", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "the disk is on fire"}}}, nil
		})
	if log := os.Getenv(quitLogEnv); log != "" {
		// quit notes its call in the file, then ends the server
		// without answering (a stdio server that crashed).
		s.AddTool(&mcp.Tool{Name: "quit", Description: "Ends the server.", InputSchema: json.RawMessage(`{"type":"object"}`)},
			func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				f, err := os.OpenFile(log, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
				if err == nil {
					_, _ = f.WriteString("quit\n")
					_ = f.Close()
				}
				os.Exit(0)
				return nil, nil
			})
	}
	return s
}

// quitLogEnv names the file the stdio test server's quit tool notes its
// calls in (the tool exists only when it is set).
const quitLogEnv = "MCPTOOL_TEST_QUIT_LOG"

// A stdio server that exits is started again for the next call (once per
// call); the call in flight when it died fails and is not sent again.
func TestReconnectAfterTheServerExits(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	log := filepath.Join(t.TempDir(), "quit.log")
	c := connect(t, mcptool.Server{Name: "fs", Command: self, Args: []string{"-test.run=^$"}, Env: map[string]string{serverEnv: "1", quitLogEnv: log}})
	var reg tool.Registry
	for _, tl := range c.Tools() {
		if err := reg.Register(tl); err != nil {
			t.Fatal(err)
		}
	}
	greet := func(id string) tool.Result {
		return reg.Execute(t.Context(), tool.Call{ID: id, Name: "fs__greet", Arguments: json.RawMessage(`{"name":"Ada"}`)})
	}
	if r := greet("1"); r.IsError || r.Content != "hello Ada" {
		t.Fatalf("greet: %+v", r)
	}
	if r := reg.Execute(t.Context(), tool.Call{ID: "2", Name: "fs__quit", Arguments: json.RawMessage(`{}`)}); !r.IsError {
		t.Fatalf("quit: %+v, want an error (the server died answering it)", r)
	}
	if r := greet("3"); r.IsError || r.Content != "hello Ada" {
		t.Fatalf("greet after the server exited: %+v, want an answer from a new server", r)
	}
	b, err := os.ReadFile(log)
	if err != nil || string(b) != "quit\n" {
		t.Fatalf("quit ran %q (%v), want once: a call in flight is not sent again", b, err)
	}
}

// servers are the two ways to reach the test server: this binary re-run
// as a stdio server, and a streamable-HTTP endpoint on loopback.
func servers(t *testing.T) map[string]mcptool.Server {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return testServer() }, nil)
	var sawHeader bool
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sawHeader = sawHeader || r.Header.Get("X-Test") == "yes"
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(func() {
		srv.Close()
		if !sawHeader {
			t.Error("the configured header never reached the HTTP server")
		}
	})
	return map[string]mcptool.Server{
		"stdio": {Name: "fs", Command: self, Args: []string{"-test.run=^$"}, Env: map[string]string{serverEnv: "1"}},
		"http":  {Name: "fs", URL: srv.URL, Headers: map[string]string{"X-Test": "yes"}},
	}
}

func connect(t *testing.T, s mcptool.Server) *mcptool.Conn {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	c, err := mcptool.Connect(ctx, s)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

func TestToolsOfAServer(t *testing.T) {
	for name, s := range servers(t) {
		t.Run(name, func(t *testing.T) {
			c := connect(t, s)
			var reg tool.Registry
			for _, tl := range c.Tools() {
				if err := reg.Register(tl); err != nil {
					t.Fatal(err)
				}
			}
			if got := strings.Join(reg.Names(), ","); got != "fs__fail,fs__greet" {
				t.Fatalf("tools %s", got)
			}
			specs, err := reg.Specs("fs__greet")
			if err != nil || !strings.Contains(string(specs[0].Parameters), `"name"`) || specs[0].Description != "Greets someone." {
				t.Fatalf("spec %+v (%v), want the server's schema and description", specs, err)
			}
			ctx := t.Context()
			if r := reg.Execute(ctx, tool.Call{ID: "1", Name: "fs__greet", Arguments: json.RawMessage(`{"name":"Ada"}`)}); r.IsError || r.Content != "hello Ada" {
				t.Fatalf("greet: %+v", r)
			}
			if r := reg.Execute(ctx, tool.Call{ID: "2", Name: "fs__greet", Arguments: json.RawMessage(`{"name":42}`)}); !r.IsError || !strings.Contains(r.Content, "name") {
				t.Fatalf("greet with a number: %+v, want the schema's refusal", r)
			}
			if r := reg.Execute(ctx, tool.Call{ID: "3", Name: "fs__fail", Arguments: json.RawMessage(`{}`)}); !r.IsError || r.Content != "fs__fail: the disk is on fire" {
				t.Fatalf("fail: %+v, want the server's error", r)
			}
		})
	}
}

// A loop agent calls the server's tools like built-ins: governed (a deny
// rule on fs__fail) and approved (fs__greet needs approval).
func TestLoopAgentOnMCPTools(t *testing.T) {
	for name, s := range servers(t) {
		t.Run(name, func(t *testing.T) {
			c := connect(t, s)
			var reg tool.Registry
			for _, tl := range c.Tools() {
				if err := reg.Register(tl); err != nil {
					t.Fatal(err)
				}
			}
			p, err := scripted.New(scripted.Config{Rules: []scripted.Rule{
				{Prefix: "go", ToolCalls: []scripted.ToolCall{{Name: "fs__greet", Arguments: json.RawMessage(`{"name":"Ada"}`)}, {Name: "fs__fail"}}},
				{AfterTool: "*", Reply: "{{.ToolResult}}"},
			}})
			if err != nil {
				t.Fatal(err)
			}
			eng, err := loop.New(loop.Config{Provider: p, Tools: &reg, ToolNames: []string{"fs__greet", "fs__fail"}, AgentID: "a",
				ApprovalTools: []string{"fs__greet"},
				Governance:    loop.Governance{Mode: "enforce", Rules: []loop.GovernanceRule{{Name: "no failing", Tool: "fs__f*", Verdict: "deny"}}}})
			if err != nil {
				t.Fatal(err)
			}
			h := enginetest.NewRecordingHost()
			h.AskUserFn = func(_ context.Context, pr engine.UserPrompt) (engine.UserReply, error) {
				pending := engine.PendingApprovals(pr.Parts)
				if len(pending) != 1 || pending[0].Tool != "fs__greet" {
					t.Errorf("asked about %+v, want fs__greet alone", pending)
				}
				return engine.UserReply{Parts: []model.Part{model.TextPart("approve")}}, nil
			}
			b := engine.NewBoard()
			b.AppendChannelMessage(engine.MainChannel, model.NewText(model.RoleUser, "go"))
			b, err = eng.Execute(t.Context(), engine.Run{ID: "r1"}, h, b)
			if err != nil {
				t.Fatal(err)
			}
			var results []string
			for _, m := range b.ChannelView(engine.MainChannel) {
				for _, part := range m.Parts {
					if part.ToolResult != nil {
						results = append(results, part.ToolResult.Content)
					}
				}
			}
			if strings.Join(results, "|") != "hello Ada|fs__fail: denied by policy: no failing" {
				t.Fatalf("results %q", results)
			}
		})
	}
}
