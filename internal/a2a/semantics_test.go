package a2a_test

import (
	"context"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"

	agenta2a "agentd/internal/a2a"
	"agentd/internal/runtime"
)

// TestWireFormat: camelCase members, enum names as strings, UTC
// millisecond timestamps with Z, and unknown request members ignored.
func TestWireFormat(t *testing.T) {
	e := newEnv(t)
	body := `{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"futureField":1,"message":{"messageId":"m1","role":"ROLE_USER","parts":[{"text":"tck-complete-task","futurePartField":true}],"futureMessageField":"x"}}}`
	status, _, out := e.rawCall(t, "POST", "/agents/conformance/jsonrpc", []byte(body), map[string]string{"A2A-Version": "1.0"})
	if status != 200 || out["error"] != nil {
		t.Fatalf("%d %v", status, out)
	}
	task := out["result"].(map[string]any)["task"].(map[string]any)
	st := task["status"].(map[string]any)
	if st["state"] != "TASK_STATE_COMPLETED" || task["contextId"] == nil {
		t.Fatalf("task %v", task)
	}
	if ts, _ := st["timestamp"].(string); !regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{1,3})?Z$`).MatchString(ts) {
		t.Fatalf("timestamp %q, want UTC with at most millisecond precision and Z", ts)
	}
	hist := task["history"].([]any)
	if hist[1].(map[string]any)["role"] != "ROLE_AGENT" {
		t.Fatalf("history %v", hist)
	}
	// v0.3 speaks kind discriminators and kebab-case enums.
	v03 := `{"jsonrpc":"2.0","id":2,"method":"message/send","params":{"message":{"kind":"message","messageId":"m2","role":"user","parts":[{"kind":"text","text":"tck-complete-task"}]}}}`
	_, _, out = e.rawCall(t, "POST", "/agents/conformance/jsonrpc", []byte(v03), nil)
	res := out["result"].(map[string]any)
	if res["kind"] != "task" || res["status"].(map[string]any)["state"] != "completed" {
		t.Fatalf("v0.3 result %v", res)
	}
}

// TestConcurrentSubscribers: every subscriber receives every update, and
// closing one stream affects neither the others nor the task.
func TestConcurrentSubscribers(t *testing.T) {
	e := newEnv(t)
	c := e.client(t, "echo", bindings[0])
	req := sendReq("stream 20 every 3ms")
	req.Config = &a2a.SendMessageConfig{ReturnImmediately: true}
	task := taskOf(t, mustSend(t, c, req))
	fromStart := a2aclient.AttachServiceParams(ctxT(t), a2aclient.ServiceParams{agenta2a.LastEventIDHeader: {"0"}})
	var wg sync.WaitGroup
	answers := make([]string, 3)
	for i := range answers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var evs []a2a.Event
			for ev, err := range c.SubscribeToTask(fromStart, &a2a.SubscribeToTaskRequest{ID: task.ID}) {
				if err != nil {
					t.Error(err)
					return
				}
				evs = append(evs, ev)
			}
			answers[i] = answerText(evs)
		}()
	}
	// A fourth subscriber that leaves after its first update.
	ctx, cancel := context.WithCancel(fromStart)
	for range c.SubscribeToTask(ctx, &a2a.SubscribeToTaskRequest{ID: task.ID}) {
		break
	}
	cancel()
	wg.Wait()
	toks := make([]string, 20)
	for i := range toks {
		toks[i] = "tok" + strconv.Itoa(i+1)
	}
	want := strings.Join(toks, " ")
	for i, got := range answers {
		if got != want {
			t.Fatalf("subscriber %d got %q, want %q", i, got, want)
		}
	}
	if got, _ := c.GetTask(ctxT(t), &a2a.GetTaskRequest{ID: task.ID}); got.Status.State != a2a.TaskStateCompleted {
		t.Fatalf("task %s", got.Status.State)
	}
}

// TestStreamEndsWhenInterrupted: a stream closes at input-required, and the
// follow-up message streams the rest of the task.
func TestStreamEndsWhenInterrupted(t *testing.T) {
	e := newEnv(t)
	c := e.client(t, "conformance", bindings[1])
	evs := collect(t, c.SendStreamingMessage(ctxT(t), sendReq("tck-input-required")))
	if finalState(evs) != a2a.TaskStateInputRequired {
		t.Fatalf("stream %v, want it to end at input-required", shape(evs))
	}
	follow := textMessage("go on")
	follow.TaskID = evs[0].(*a2a.Task).ID
	rest := collect(t, c.SendStreamingMessage(ctxT(t), &a2a.SendMessageRequest{Message: follow}))
	if finalState(rest) != a2a.TaskStateCompleted || answerText(rest) != "Received: go on" {
		t.Fatalf("follow-up stream %v %q", shape(rest), answerText(rest))
	}
}

// TestCapabilityGating: an agent that does not stream refuses the
// streaming methods with -32004, and its card says so.
func TestCapabilityGating(t *testing.T) {
	e := newEnvServer(t, 0, func(agents []*runtime.Agent) {
		for _, a := range agents {
			if a.ID == "conformance" {
				a.Card.Capabilities.Streaming = false
			}
		}
	})
	if e.card(t, "conformance").Capabilities.Streaming {
		t.Fatal("card claims streaming")
	}
	c := e.client(t, "conformance", bindings[0])
	_, _, out := e.rawCall(t, "POST", "/agents/conformance/jsonrpc", []byte(`{"jsonrpc":"2.0","id":1,"method":"SendStreamingMessage","params":{"message":{"messageId":"m","role":"ROLE_USER","parts":[{"text":"x"}]}}}`), map[string]string{"A2A-Version": "1.0"})
	if rpcCode(out) != -32004 {
		t.Fatalf("streaming on a non-streaming agent: %v", out)
	}
	task := taskOf(t, mustSend(t, c, sendReq("tck-input-required")))
	_, _, out = e.rawCall(t, "POST", "/agents/conformance/jsonrpc", []byte(`{"jsonrpc":"2.0","id":1,"method":"SubscribeToTask","params":{"id":"`+string(task.ID)+`"}}`), map[string]string{"A2A-Version": "1.0"})
	if rpcCode(out) != -32004 {
		t.Fatalf("subscribe on a non-streaming agent: %v", out)
	}
	res, err := c.ListTasks(ctxT(t), &a2a.ListTasksRequest{PageSize: 500})
	if err != nil || res.PageSize != 100 || res.NextPageToken != "" || res.TotalSize != 1 {
		t.Fatalf("list with an oversized page: %v %+v", err, res)
	}
}

// TestToolCallsAsStatusUpdates: the assistant's tool call and result reach
// a stream as working status updates with data parts, the answer as the
// answer artifact.
func TestToolCallsAsStatusUpdates(t *testing.T) {
	e := newEnv(t)
	c := e.client(t, "assistant", bindings[0])
	evs := collect(t, c.SendStreamingMessage(ctxT(t), sendReq("calculate 2*(3+4)")))
	var tools []string
	for _, ev := range evs {
		if s, ok := ev.(*a2a.TaskStatusUpdateEvent); ok && s.Status.Message != nil {
			data, _ := s.Status.Message.Parts[0].Data().(map[string]any)
			for k := range data {
				tools = append(tools, k)
			}
			if s.Status.State != a2a.TaskStateWorking {
				t.Fatalf("tool update in state %s", s.Status.State)
			}
		}
	}
	if strings.Join(tools, ",") != "toolCall,toolResult" || answerText(evs) != "The result is 14." {
		t.Fatalf("tool updates %v, answer %q", tools, answerText(evs))
	}
}
