package mcpserver_test

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"agentd/internal/mcpserver"
	runv "agentd/internal/run"
)

// The tasks extension (SEP-2663) with the go-sdk client, which has no
// tasks of its own: it declares the extension, and calls tasks/get,
// tasks/update and tasks/cancel through its custom-method hook.

// taskAfter is how long the tests' calls hold a run before it becomes a
// task.
const taskAfter = 100 * time.Millisecond

type taskParams struct {
	mcp.ParamsBase
	TaskID         string         `json:"taskId"`
	InputResponses map[string]any `json:"inputResponses,omitempty"`
}

type task struct {
	mcp.ResultBase
	ResultType    string                     `json:"resultType"`
	TaskID        string                     `json:"taskId"`
	Status        string                     `json:"status"`
	StatusMessage string                     `json:"statusMessage"`
	TTLMs         *int64                     `json:"ttlMs"`
	PollIntervalM int64                      `json:"pollIntervalMs"`
	InputRequests map[string]json.RawMessage `json:"inputRequests"`
	Result        *mcp.CallToolResult        `json:"result"`
}

type ack struct {
	mcp.ResultBase
	ResultType string `json:"resultType"`
}

// taskClient connects a go-sdk client that declares the tasks extension
// to /mcp (or to path).
func taskClient(t *testing.T, e *env, path ...string) *mcp.ClientSession {
	t.Helper()
	caps := &mcp.ClientCapabilities{Extensions: map[string]any{"io.modelcontextprotocol/tasks": map[string]any{}}}
	c := mcp.NewClient(&mcp.Implementation{Name: "agentd-test", Version: "1"}, &mcp.ClientOptions{Capabilities: caps})
	for _, err := range []error{
		mcp.AddSendingCustomMethod[*taskParams, *task](c, "tasks/get"),
		mcp.AddSendingCustomMethod[*taskParams, *ack](c, "tasks/update"),
		mcp.AddSendingCustomMethod[*taskParams, *ack](c, "tasks/cancel"),
	} {
		if err != nil {
			t.Fatal(err)
		}
	}
	endpoint := e.base + "/mcp"
	if len(path) > 0 {
		endpoint = e.base + path[0]
	}
	cs, err := c.Connect(ctxT(t), &mcp.StreamableClientTransport{Endpoint: endpoint}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	return cs
}

func getTask(t *testing.T, cs *mcp.ClientSession, id string) *task {
	t.Helper()
	got, err := mcp.CallCustomMethod[*taskParams, *task](ctxT(t), cs, "tasks/get", &taskParams{TaskID: id})
	if err != nil {
		t.Fatalf("tasks/get %s: %v", id, err)
	}
	return got
}

// pollTask polls tasks/get until the task's status is one of want.
func pollTask(t *testing.T, cs *mcp.ClientSession, id string, want ...string) *task {
	t.Helper()
	deadline := time.Now().Add(testTimeout)
	for {
		got := getTask(t, cs, id)
		for _, w := range want {
			if got.Status == w {
				return got
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("task %s is %s, want %v", id, got.Status, want)
		}
		time.Sleep(20 * time.Millisecond) // polling is the protocol here
	}
}

func TestTaskPolledToCompletion(t *testing.T) {
	e := newEnvWith(t, mcpserver.Options{TaskAfter: taskAfter})
	cs := taskClient(t, e)
	// A quick run answers as usual.
	res, err := cs.CallTool(ctxT(t), &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"message": "hello"}})
	if err != nil || textOf(res) != "hello" {
		t.Fatalf("a quick call of a client that takes tasks: %v %v", res, err)
	}
	// A longer one becomes a task: the run.
	res, err = cs.CallTool(ctxT(t), &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"message": "stream 10 every 40ms"}})
	if err != nil {
		t.Fatal(err)
	}
	id, _ := res.Meta["agentd/run_id"].(string)
	if res.Meta["agentd/status"] != "working" || len(res.Content) != 0 {
		t.Fatalf("a long call: %v %q, want a task handle", res.Meta, textOf(res))
	}
	working := getTask(t, cs, id)
	if working.ResultType != "complete" || working.TTLMs != nil || working.PollIntervalM <= 0 || working.Result != nil {
		t.Fatalf("tasks/get of a working task: %+v", working)
	}
	done := pollTask(t, cs, id, "completed")
	if done.Result == nil || textOf(done.Result) != "tok1 tok2 tok3 tok4 tok5 tok6 tok7 tok8 tok9 tok10" {
		t.Fatalf("the completed task's result: %+v", done.Result)
	}
	if run, err := e.rt.GetTask(ctxT(t), id); err != nil || run.State != runv.StateCompleted {
		t.Fatalf("the task's run: %s %v", run.State, err)
	}
	if _, err := mcp.CallCustomMethod[*taskParams, *task](ctxT(t), cs, "tasks/get", &taskParams{TaskID: "no-such-task"}); err == nil ||
		!strings.Contains(err.Error(), "not found") {
		t.Fatalf("tasks/get of an unknown task: %v", err)
	}
}

func TestTaskAnsweredThroughUpdate(t *testing.T) {
	e := newEnvWith(t, mcpserver.Options{TaskAfter: taskAfter})
	cs := taskClient(t, e)
	res, err := cs.CallTool(ctxT(t), &mcp.CallToolParams{Name: "conformance", Arguments: map[string]any{"message": "tck-input-required"}})
	if err != nil {
		t.Fatal(err)
	}
	id, _ := res.Meta["agentd/run_id"].(string)
	waiting := pollTask(t, cs, id, "input_required")
	var key string
	for k, req := range waiting.InputRequests {
		key = k
		if !strings.Contains(string(req), `"method":"elicitation/create"`) || !strings.Contains(string(req), "Please provide more input") {
			t.Fatalf("input request %s: %s", k, req)
		}
	}
	if len(waiting.InputRequests) != 1 {
		t.Fatalf("input requests %v", waiting.InputRequests)
	}
	// Another agent's endpoint does not know the task.
	if _, err := mcp.CallCustomMethod[*taskParams, *task](ctxT(t), taskClient(t, e, "/mcp/agents/echo"), "tasks/get", &taskParams{TaskID: id}); err == nil {
		t.Fatal("echo's endpoint answers tasks/get of a conformance run")
	}
	if _, err := mcp.CallCustomMethod[*taskParams, *ack](ctxT(t), cs, "tasks/update", &taskParams{TaskID: id,
		InputResponses: map[string]any{key: map[string]any{"action": "accept", "content": map[string]any{"answer": "more input"}}}}); err != nil {
		t.Fatal(err)
	}
	done := pollTask(t, cs, id, "completed")
	if done.Result == nil || done.Result.IsError {
		t.Fatalf("the answered task: %+v", done.Result)
	}
}

func TestTaskCancelled(t *testing.T) {
	e := newEnvWith(t, mcpserver.Options{TaskAfter: taskAfter})
	cs := taskClient(t, e)
	res, err := cs.CallTool(ctxT(t), &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"message": "stream 200 every 50ms"}})
	if err != nil {
		t.Fatal(err)
	}
	id, _ := res.Meta["agentd/run_id"].(string)
	if _, err := mcp.CallCustomMethod[*taskParams, *ack](ctxT(t), cs, "tasks/cancel", &taskParams{TaskID: id}); err != nil {
		t.Fatal(err)
	}
	pollTask(t, cs, id, "cancelled")
}

// The wire shape of a task handle, as SEP-2663 spells it.
func TestTaskHandleOnTheWire(t *testing.T) {
	e := newEnvWith(t, mcpserver.Options{TaskAfter: taskAfter})
	body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"message":"stream 5 every 100ms"},` +
		`"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"extensions":{"io.modelcontextprotocol/tasks":{}}}}}}`
	req, _ := http.NewRequestWithContext(ctxT(t), http.MethodPost, e.base+"/mcp", strings.NewReader(body))
	for k, v := range map[string]string{"Content-Type": "application/json", "Accept": "application/json, text/event-stream",
		"Mcp-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": "echo"} {
		req.Header.Set(k, v)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := io.ReadAll(res.Body)
	res.Body.Close()
	for _, want := range []string{`"resultType":"task"`, `"status":"working"`, `"ttlMs":null`, `"pollIntervalMs":1000`, `"taskId":"`, `"createdAt":"`} {
		if !strings.Contains(string(raw), want) {
			t.Errorf("the task handle lacks %s: %s", want, raw)
		}
	}
	if strings.Contains(string(raw), `"content"`) {
		t.Errorf("the task handle carries a result: %s", raw)
	}
}
