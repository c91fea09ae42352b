package mcptool_test

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"agentd/internal/engine"
	"agentd/internal/engine/enginetest"
	"agentd/internal/engine/loop"
	"agentd/internal/llm/scripted"
	"agentd/internal/mcptool"
	"agentd/internal/model"
	"agentd/internal/tool"
)

// TestInteropServerEverything runs the reference MCP server
// @modelcontextprotocol/server-everything (pinned in interop/js) over
// stdio: a loop agent lists its tools, calls echo and get-sum, and an
// error the server answers (get-resource-reference with an id it refuses)
// reaches the model as an error result. It skips only when node or the
// installed packages are missing and REQUIRE_INTEROP is unset.
func TestInteropServerEverything(t *testing.T) {
	required := os.Getenv("REQUIRE_INTEROP") != ""
	node, err := exec.LookPath("node")
	if err != nil {
		if required {
			t.Fatal("REQUIRE_INTEROP is set but node is not installed")
		}
		t.Skip("node is not installed; the server-everything interop test needs it (set REQUIRE_INTEROP=1 to make this a failure)")
	}
	dir, err := filepath.Abs(filepath.Join("..", "..", "interop", "js"))
	if err != nil {
		t.Fatal(err)
	}
	script := filepath.Join(dir, "node_modules", "@modelcontextprotocol", "server-everything", "dist", "index.js")
	if _, err := os.Stat(script); err != nil {
		if required {
			t.Fatalf("REQUIRE_INTEROP is set but %s is missing: run `npm ci` in %s", script, dir)
		}
		t.Skipf("%s is missing: run `npm ci` in %s to enable the server-everything interop test", script, dir)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	c, err := mcptool.Connect(ctx, mcptool.Server{Name: "everything", Command: node, Args: []string{script, "stdio"}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	var reg tool.Registry
	for _, tl := range c.Tools() {
		if err := reg.Register(tl); err != nil {
			t.Fatal(err)
		}
	}
	names := []string{"everything__echo", "everything__get-sum", "everything__get-resource-reference"}
	for _, n := range names {
		if !slices.Contains(reg.Names(), n) {
			t.Fatalf("the server's tools %q lack %s", reg.Names(), n)
		}
	}

	p, err := scripted.New(scripted.Config{Rules: []scripted.Rule{
		{Prefix: "go", ToolCalls: []scripted.ToolCall{
			{Name: "everything__echo", Arguments: json.RawMessage(`{"message":"hi there"}`)},
			{Name: "everything__get-sum", Arguments: json.RawMessage(`{"a":2,"b":3}`)},
		}},
		{Prefix: "break", ToolCalls: []scripted.ToolCall{
			{Name: "everything__get-resource-reference", Arguments: json.RawMessage(`{"resourceType":"Text","resourceId":0}`)},
		}},
		{AfterTool: "*", Reply: "the tool said: {{.ToolResult}}"},
	}})
	if err != nil {
		t.Fatal(err)
	}
	eng, err := loop.New(loop.Config{Provider: p, Tools: &reg, ToolNames: names, AgentID: "a"})
	if err != nil {
		t.Fatal(err)
	}
	results, _ := runOn(t, ctx, eng, "go")
	if len(results) != 2 || results[0].Content != "Echo: hi there" || results[1].Content != "The sum of 2 and 3 is 5." {
		t.Fatalf("tool results %+v", results)
	}
	results, answer := runOn(t, ctx, eng, "break")
	if len(results) != 1 || !results[0].IsError || !strings.Contains(results[0].Content, "Invalid resourceId: 0") {
		t.Fatalf("the refused call's result %+v, want the server's error", results)
	}
	if !strings.Contains(answer, "Invalid resourceId: 0") {
		t.Fatalf("the model answered %q: the server's error did not reach it", answer)
	}
}

// runOn runs eng on one user message and returns the tool results and the
// final answer.
func runOn(t *testing.T, ctx context.Context, eng engine.Engine, text string) ([]model.ToolResult, string) {
	t.Helper()
	b := engine.NewBoard()
	b.AppendChannelMessage(engine.MainChannel, model.NewText(model.RoleUser, text))
	b, err := eng.Execute(ctx, engine.Run{ID: "r-" + text}, enginetest.NewRecordingHost(), b)
	if err != nil {
		t.Fatal(err)
	}
	var results []model.ToolResult
	msgs := b.ChannelView(engine.MainChannel)
	for _, m := range msgs {
		for _, part := range m.Parts {
			if part.ToolResult != nil {
				results = append(results, *part.ToolResult)
			}
		}
	}
	return results, msgs[len(msgs)-1].Text()
}
