package mcpserver_test

import (
	"context"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"agentd/internal/run"
)

// The go-sdk client held to protocol 2025-11-25: a session of the
// stateful handler, elicitation as the server's own request,
// notifications/cancelled, and a session that ends without cancelling.

func (e *env) connectLegacy(t *testing.T, opts *mcp.ClientOptions) *mcp.ClientSession {
	t.Helper()
	c := mcp.NewClient(&mcp.Implementation{Name: "agentd-test", Version: "1"}, opts)
	cs, err := c.Connect(ctxT(t), &mcp.StreamableClientTransport{Endpoint: e.base + "/mcp"}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	if v := cs.InitializeResult().ProtocolVersion; v != "2025-11-25" || cs.ID() == "" {
		t.Fatalf("a legacy session: version %q, session %q", v, cs.ID())
	}
	t.Cleanup(func() { _ = cs.Close() })
	return cs
}

func TestLegacySessionElicits(t *testing.T) {
	e := newEnv(t)
	var asked []string
	cs := e.connectLegacy(t, &mcp.ClientOptions{ElicitationHandler: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
		asked = append(asked, req.Params.Message)
		return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"answer": "more input"}}, nil
	}})
	res, err := cs.CallTool(ctxT(t), &mcp.CallToolParams{Name: "conformance", Arguments: map[string]any{"message": "tck-input-required"}})
	if err != nil {
		t.Fatal(err)
	}
	if res.Meta["agentd/status"] != "completed" || len(asked) != 1 {
		t.Fatalf("a legacy elicitation: %v %q (asked %q)", res.Meta, textOf(res), asked)
	}
}

func TestLegacyCancelCancelsTheRun(t *testing.T) {
	e := newEnv(t)
	p := newProgressLog()
	cs := e.connectLegacy(t, &mcp.ClientOptions{ProgressNotificationHandler: p.handler})
	ctx, cancel := context.WithCancel(ctxT(t))
	done := make(chan error, 1)
	go func() {
		_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"message": "stream 200 every 20ms"},
			Meta: mcp.Meta{"progressToken": "c"}})
		done <- err
	}()
	<-p.first
	cancel()
	<-done
	runID := p.all()[0].Meta["agentd/run_id"].(string)
	if task, err := e.rt.Wait(ctxT(t), runID); err != nil || task.State != run.StateCanceled {
		t.Fatalf("the run of a cancelled legacy call: %s, %v", task.State, err)
	}
}

// A session that ends (here the server's Close; an idle timeout alike)
// ends its calls but not their runs: they stay reachable by their run ids.
func TestLegacySessionEndLeavesTheRun(t *testing.T) {
	e := newEnv(t)
	p := newProgressLog()
	cs := e.connectLegacy(t, &mcp.ClientOptions{ProgressNotificationHandler: p.handler})
	done := make(chan error, 1)
	go func() {
		_, err := cs.CallTool(ctxT(t), &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"message": "stream 10 every 20ms"},
			Meta: mcp.Meta{"progressToken": "s"}})
		done <- err
	}()
	<-p.first
	e.ms.Close()
	if err := <-done; err == nil {
		t.Fatal("the call of a closed session returned no error")
	}
	runID := p.all()[0].Meta["agentd/run_id"].(string)
	task, err := e.rt.Wait(ctxT(t), runID)
	if err != nil || task.State != run.StateCompleted {
		t.Fatalf("the run of a call whose session ended: %s, %v", task.State, err)
	}
	if msgs, _ := e.rt.ListMessages(ctxT(t), run.MessageQuery{ContextID: task.ContextID, TaskID: runID, Limit: 10}); !strings.Contains(msgs.Messages[len(msgs.Messages)-1].Message.Text(), "tok10") {
		t.Fatalf("the run's answer: %+v", msgs.Messages)
	}
}
