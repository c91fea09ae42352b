package mcpserver_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"agentd/internal/run"
)

// Runs followed through MCP: progress, a tool call inside, input through
// elicitation or another call, approvals, cancel.

func TestProgressStreamsTokens(t *testing.T) {
	e := newEnv(t)
	p := newProgressLog()
	cs := e.connect(t, "/mcp", &mcp.ClientOptions{ProgressNotificationHandler: p.handler})
	if v := cs.InitializeResult().ProtocolVersion; v != "2026-07-28" {
		t.Fatalf("the go-sdk client negotiated %q, want the sessionless 2026-07-28", v)
	}
	res, err := cs.CallTool(ctxT(t), &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"message": "stream 5 every 10ms"},
		Meta: mcp.Meta{"progressToken": "p1"}})
	if err != nil {
		t.Fatal(err)
	}
	if textOf(res) != "tok1 tok2 tok3 tok4 tok5" {
		t.Fatalf("answer %q", textOf(res))
	}
	tokensOf := func(notes []*mcp.ProgressNotificationParams) (tokens string) {
		for _, n := range notes {
			if strings.HasPrefix(n.Message, "tok") || strings.HasPrefix(n.Message, " tok") {
				tokens += n.Message
			}
		}
		return strings.TrimSpace(tokens)
	}
	notes := p.until(t, func(notes []*mcp.ProgressNotificationParams) bool {
		return tokensOf(notes) == "tok1 tok2 tok3 tok4 tok5"
	})
	if tokens := tokensOf(notes); tokens != "tok1 tok2 tok3 tok4 tok5" {
		t.Fatalf("progress tokens %q", tokens)
	}
	seen := map[float64]bool{}
	for _, n := range notes {
		if n.ProgressToken != "p1" || seen[n.Progress] || n.Meta["agentd/run_id"] != res.Meta["agentd/run_id"] {
			t.Fatalf("progress notification %+v (run %v)", n, res.Meta["agentd/run_id"])
		}
		seen[n.Progress] = true
	}
	if !slices.ContainsFunc(notes, func(n *mcp.ProgressNotificationParams) bool {
		return strings.HasPrefix(n.Message, "run ") && n.Progress == 0
	}) {
		t.Fatalf("no \"run … started\" notification at progress 0: %+v", notes[0])
	}
}

func TestAssistantCallsATool(t *testing.T) {
	e := newEnv(t)
	p := newProgressLog()
	cs := e.connect(t, "/mcp/agents/assistant", &mcp.ClientOptions{ProgressNotificationHandler: p.handler})
	res, err := cs.CallTool(ctxT(t), &mcp.CallToolParams{Name: "assistant", Arguments: map[string]any{"message": "calculate 2*(3+4)"},
		Meta: mcp.Meta{"progressToken": 7}})
	if err != nil {
		t.Fatal(err)
	}
	if textOf(res) != "The result is 14." {
		t.Fatalf("answer %q", textOf(res))
	}
	joinedOf := func(notes []*mcp.ProgressNotificationParams) string {
		var msgs []string
		for _, n := range notes {
			msgs = append(msgs, n.Message)
		}
		return strings.Join(msgs, "|")
	}
	want := func(notes []*mcp.ProgressNotificationParams) bool {
		j := joinedOf(notes)
		return strings.Contains(j, "calling tool calculator") && strings.Contains(j, "tool calculator answered")
	}
	if notes := p.until(t, want); !want(notes) {
		joined := joinedOf(notes)
		t.Fatalf("progress %q lacks the tool call", joined)
	}
}

func TestInputThroughElicitation(t *testing.T) {
	e := newEnv(t)
	var asked []string
	cs := e.connect(t, "/mcp", &mcp.ClientOptions{ElicitationHandler: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
		asked = append(asked, req.Params.Message)
		if strings.HasPrefix(req.Params.Message, "Approve") {
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"approve": true}}, nil
		}
		return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"answer": "more input"}}, nil
	}})
	res, err := cs.CallTool(ctxT(t), &mcp.CallToolParams{Name: "conformance", Arguments: map[string]any{"message": "tck-input-required"}})
	if err != nil {
		t.Fatal(err)
	}
	task, _ := e.rt.GetTask(ctxT(t), res.Meta["agentd/run_id"].(string))
	if res.IsError || task.State != run.StateCompleted || len(asked) != 1 || !strings.Contains(asked[0], "Please provide more input") {
		t.Fatalf("after elicitation: %s %q (asked %q)", task.State, textOf(res), asked)
	}

	res, err = cs.CallTool(ctxT(t), &mcp.CallToolParams{Name: "guarded", Arguments: map[string]any{"message": "delete notes.txt"}})
	if err != nil {
		t.Fatal(err)
	}
	if res.IsError || !strings.HasPrefix(textOf(res), "The tool answered:") || !strings.Contains(asked[1], "delete_file") {
		t.Fatalf("approved delete: %q (asked %q)", textOf(res), asked)
	}
}

func TestDeclinedApprovalRejectsTheCall(t *testing.T) {
	e := newEnv(t)
	cs := e.connect(t, "/mcp", &mcp.ClientOptions{ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
		return &mcp.ElicitResult{Action: "decline"}, nil
	}})
	res, err := cs.CallTool(ctxT(t), &mcp.CallToolParams{Name: "guarded", Arguments: map[string]any{"message": "delete notes.txt"}})
	if err != nil {
		t.Fatal(err)
	}
	if res.Meta["agentd/status"] != "completed" || !strings.Contains(textOf(res), "rejected") {
		t.Fatalf("declined delete: %v %q", res.Meta["agentd/status"], textOf(res))
	}
}

func TestInputWithoutElicitationNamesTheRun(t *testing.T) {
	e := newEnv(t)
	cs := e.connect(t, "/mcp", nil)
	res, err := cs.CallTool(ctxT(t), &mcp.CallToolParams{Name: "conformance", Arguments: map[string]any{"message": "tck-input-required"}})
	if err != nil {
		t.Fatal(err)
	}
	runID, _ := res.Meta["agentd/run_id"].(string)
	if res.IsError || res.Meta["agentd/status"] != "input-required" || !strings.Contains(textOf(res), `"run_id": "`+runID+`"`) {
		t.Fatalf("a run that waits: %v %q", res.Meta, textOf(res))
	}
	res, err = cs.CallTool(ctxT(t), &mcp.CallToolParams{Name: "conformance", Arguments: map[string]any{"message": "here you go", "run_id": runID}})
	if err != nil {
		t.Fatal(err)
	}
	if res.Meta["agentd/run_id"] != runID || res.Meta["agentd/status"] != "completed" {
		t.Fatalf("answered with run_id: %v %q", res.Meta, textOf(res))
	}
}

func TestCancelCancelsTheRun(t *testing.T) {
	e := newEnv(t)
	p := newProgressLog()
	cs := e.connect(t, "/mcp", &mcp.ClientOptions{ProgressNotificationHandler: p.handler})
	ctx, cancel := context.WithCancel(ctxT(t))
	done := make(chan error, 1)
	go func() {
		_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"message": "stream 200 every 20ms"},
			Meta: mcp.Meta{"progressToken": "c"}})
		done <- err
	}()
	<-p.first
	cancel()
	if err := <-done; err == nil {
		t.Fatal("the cancelled call returned no error")
	}
	runID := p.all()[0].Meta["agentd/run_id"].(string)
	task, err := e.rt.Wait(ctxT(t), runID)
	if err != nil || task.State != run.StateCanceled {
		t.Fatalf("the run of a cancelled call: %s, %v", task.State, err)
	}
}
