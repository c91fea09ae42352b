package mcpserver_test

import (
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"agentd/internal/mcpserver"
	"agentd/internal/run"
)

// The go-sdk client against a real server on loopback: the tools, a call,
// a conversation, structured output and a wrong argument.

func TestListTools(t *testing.T) {
	e := newEnv(t)
	res, err := e.connect(t, "/mcp", nil).ListTools(ctxT(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	byName := map[string]*mcp.Tool{}
	for _, tl := range res.Tools {
		names = append(names, tl.Name)
		byName[tl.Name] = tl
	}
	if want := e.rt.AgentIDs(); !slices.Equal(sorted(names), want) {
		t.Fatalf("tools %v, want one per agent %v", names, want)
	}
	echo := byName["echo"]
	if !strings.Contains(echo.Description, "Echoes your message back") || !strings.Contains(echo.Description, `"stream 20 every 50ms"`) {
		t.Fatalf("echo's description lacks its card or skills: %q", echo.Description)
	}
	schema, _ := json.Marshal(echo.InputSchema)
	if !strings.Contains(string(schema), `"required":["message"]`) || echo.OutputSchema != nil {
		t.Fatalf("echo's schemas: input %s, output %v", schema, echo.OutputSchema)
	}
	if out, _ := json.Marshal(byName["point"].OutputSchema); !strings.Contains(string(out), `"width"`) {
		t.Fatalf("point's outputSchema %s, want its response schema", out)
	}

	one, err := e.connect(t, "/mcp/agents/echo", nil).ListTools(ctxT(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(one.Tools) != 1 || one.Tools[0].Name != "echo" {
		t.Fatalf("/mcp/agents/echo lists %d tools, want echo alone", len(one.Tools))
	}
	res2, err := http.Post(e.base+"/mcp/agents/nobody", "application/json", strings.NewReader(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res2.Body)
	res2.Body.Close()
	if res2.StatusCode != http.StatusNotFound || !strings.Contains(string(body), `agent "nobody" not found`) {
		t.Fatalf("an unknown agent's endpoint: %d %s", res2.StatusCode, body)
	}
}

func sorted(s []string) []string { s = slices.Clone(s); slices.Sort(s); return s }

func TestToolName(t *testing.T) {
	for id, want := range map[string]string{"echo": "echo", "a-b_c": "a-b_c", "a b/c": "a_b_c", strings.Repeat("x", 130): strings.Repeat("x", 128)} {
		if got := mcpserver.ToolName(id); got != want {
			t.Errorf("ToolName(%q) = %q, want %q", id, got, want)
		}
	}
}

func TestCallEchoIsARun(t *testing.T) {
	e := newEnv(t)
	cs := e.connect(t, "/mcp", nil)
	res, err := cs.CallTool(ctxT(t), &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"message": "hello there"}})
	if err != nil {
		t.Fatal(err)
	}
	if res.IsError || textOf(res) != "hello there" {
		t.Fatalf("echo answered %q (error %v)", textOf(res), res.IsError)
	}
	runID, _ := res.Meta["agentd/run_id"].(string)
	contextID, _ := res.Meta["agentd/context_id"].(string)
	task, err := e.rt.GetTask(ctxT(t), runID)
	if err != nil || task.State != run.StateCompleted || task.ContextID != contextID || task.AgentID != "echo" {
		t.Fatalf("the run behind the call: %+v, %v (meta %v)", task, err, res.Meta)
	}
	if res.Meta["agentd/status"] != "completed" {
		t.Fatalf("_meta status %v", res.Meta["agentd/status"])
	}

	// The conversation goes on in the same context.
	res, err = cs.CallTool(ctxT(t), &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"message": "again", "context_id": contextID}})
	if err != nil {
		t.Fatal(err)
	}
	if res.Meta["agentd/context_id"] != contextID || res.Meta["agentd/run_id"] == runID {
		t.Fatalf("a second call in context %s: %v", contextID, res.Meta)
	}
	page, err := e.rt.ListMessages(ctxT(t), run.MessageQuery{ContextID: contextID, Limit: 10})
	if err != nil || len(page.Messages) != 4 {
		t.Fatalf("the context's transcript has %d messages (%v), want 4", len(page.Messages), err)
	}
}

func TestStructuredOutput(t *testing.T) {
	e := newEnv(t)
	res, err := e.connect(t, "/mcp/agents/point", nil).CallTool(ctxT(t), &mcp.CallToolParams{Name: "point", Arguments: map[string]any{"message": "a point please"}})
	if err != nil {
		t.Fatal(err)
	}
	got, _ := json.Marshal(res.StructuredContent)
	if res.IsError || string(got) != `{"height":4,"width":3}` {
		t.Fatalf("structured content %s (error %v, text %q)", got, res.IsError, textOf(res))
	}
}

func TestWrongArgumentTypeRunsNothing(t *testing.T) {
	e := newEnv(t)
	cs := e.connect(t, "/mcp", nil)
	for _, tc := range []struct {
		args map[string]any
		want string
	}{
		{map[string]any{"message": 42}, "arguments.message: must be a string, got number"},
		{map[string]any{"message": "hi", "data": "x"}, "arguments.data: must be an object, got string"},
		{map[string]any{"message": "hi", "context_id": true}, "arguments.context_id: must be a string, got boolean"},
		{map[string]any{"text": "hi"}, "arguments.text: unknown argument"},
		{map[string]any{}, "arguments.message: required"},
	} {
		res, err := cs.CallTool(ctxT(t), &mcp.CallToolParams{Name: "echo", Arguments: tc.args})
		if err != nil {
			t.Fatal(err)
		}
		if !res.IsError || !strings.Contains(textOf(res), tc.want) {
			t.Errorf("%v: error %v %q, want a tool error with %q", tc.args, res.IsError, textOf(res), tc.want)
		}
	}
	page, err := e.rt.ListTasks(ctxT(t), run.TaskQuery{Limit: 10})
	if err != nil || len(page.Tasks) != 0 {
		t.Fatalf("%d runs after calls with wrong arguments (%v), want none", len(page.Tasks), err)
	}
}
