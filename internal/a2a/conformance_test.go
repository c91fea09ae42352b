package a2a_test

import (
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"
)

// TestConformanceBehaviours runs the test-kit prefixes of the conformance
// agent over every binding and checks what an A2A client sees.
func TestConformanceBehaviours(t *testing.T) {
	e := newEnv(t)
	blocking := []struct {
		prefix string
		check  func(t *testing.T, res a2a.SendMessageResult)
	}{
		{"tck-complete-task", func(t *testing.T, res a2a.SendMessageResult) {
			task := wantState(t, res, a2a.TaskStateCompleted)
			if last := task.History[len(task.History)-1]; !strings.HasPrefix(last.Parts[0].Text(), "Task completed: tck-complete-task") {
				t.Fatalf("response %q", last.Parts[0].Text())
			}
		}},
		{"tck-input-required", func(t *testing.T, res a2a.SendMessageResult) {
			task := wantState(t, res, a2a.TaskStateInputRequired)
			if task.Status.Message == nil || task.Status.Message.Role != a2a.MessageRoleAgent || task.Status.Message.Parts[0].Text() == "" {
				t.Fatalf("status message %+v, want the agent's question", task.Status.Message)
			}
		}},
		{"tck-reject-task", func(t *testing.T, res a2a.SendMessageResult) {
			task := wantState(t, res, a2a.TaskStateRejected)
			if task.Status.Message == nil || !strings.Contains(task.Status.Message.Parts[0].Text(), "rejected") {
				t.Fatalf("status message %+v", task.Status.Message)
			}
		}},
		{"tck-task-failure", func(t *testing.T, res a2a.SendMessageResult) {
			task := wantState(t, res, a2a.TaskStateFailed)
			if task.Status.Message == nil || !strings.Contains(task.Status.Message.Parts[0].Text(), "simulated failure") {
				t.Fatalf("status message %+v", task.Status.Message)
			}
		}},
		{"tck-message-response", func(t *testing.T, res a2a.SendMessageResult) {
			if m, ok := res.(*a2a.Message); !ok || m.Parts[0].Text() != "Direct message response" {
				t.Fatalf("got %T, want a Message", res)
			}
		}},
		{"tck-artifact-text", func(t *testing.T, res a2a.SendMessageResult) {
			p := onlyArtifactPart(t, wantState(t, res, a2a.TaskStateCompleted))
			if p.Text() != "Generated text content" {
				t.Fatalf("part %+v", p)
			}
		}},
		{"tck-artifact-file", func(t *testing.T, res a2a.SendMessageResult) {
			p := onlyArtifactPart(t, wantState(t, res, a2a.TaskStateCompleted))
			if string(p.Raw()) != "file content" || p.Filename != "output.txt" || p.MediaType != "text/plain" {
				t.Fatalf("part %+v", p)
			}
		}},
		{"tck-artifact-file-url", func(t *testing.T, res a2a.SendMessageResult) {
			p := onlyArtifactPart(t, wantState(t, res, a2a.TaskStateCompleted))
			if p.URL() != "https://example.com/output.txt" || p.Filename != "output.txt" {
				t.Fatalf("part %+v", p)
			}
		}},
		{"tck-artifact-data", func(t *testing.T, res a2a.SendMessageResult) {
			p := onlyArtifactPart(t, wantState(t, res, a2a.TaskStateCompleted))
			if want := map[string]any{"key": "value", "count": float64(42)}; !reflect.DeepEqual(p.Data(), want) {
				t.Fatalf("data %#v, want %#v", p.Data(), want)
			}
		}},
		{"tck-long-running", func(t *testing.T, res a2a.SendMessageResult) {
			task := wantState(t, res, a2a.TaskStateCompleted)
			var names []string
			for _, a := range task.Artifacts {
				names = append(names, a.Name)
			}
			if !slices.Contains(names, "long-running-artifact") {
				t.Fatalf("artifacts %v, want the long-running artifact", names)
			}
		}},
		{"tck-auth-required", func(t *testing.T, res a2a.SendMessageResult) {
			task := wantState(t, res, a2a.TaskStateAuthRequired)
			if task.Status.Message == nil || !strings.Contains(task.Status.Message.Parts[0].Text(), "credentials") {
				t.Fatalf("status message %+v, want a request for credentials", task.Status.Message)
			}
		}},
	}
	for _, b := range bindings {
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			c := e.client(t, "conformance", b)
			for _, tc := range blocking {
				t.Run(tc.prefix, func(t *testing.T) { tc.check(t, mustSend(t, c, sendReq(tc.prefix))) })
			}
			t.Run("tck-stream-basic", func(t *testing.T) {
				evs := collect(t, c.SendStreamingMessage(ctxT(t), sendReq("tck-stream-basic")))
				got := shape(evs)
				want := []string{"task", "status:TASK_STATE_WORKING", "artifact:stream-artifact", "status:TASK_STATE_COMPLETED"}
				if !isSubsequence(want, got) {
					t.Fatalf("stream %v, want in order %v", got, want)
				}
			})
			t.Run("tck-stream-chunked", func(t *testing.T) {
				evs := collect(t, c.SendStreamingMessage(ctxT(t), sendReq("tck-stream-chunked")))
				var chunks []*a2a.TaskArtifactUpdateEvent
				for _, ev := range evs {
					if a, ok := ev.(*a2a.TaskArtifactUpdateEvent); ok && a.Artifact.Name == "chunked-artifact" {
						chunks = append(chunks, a)
					}
				}
				if len(chunks) != 4 {
					t.Fatalf("%d chunks, want 4: %v", len(chunks), shape(evs))
				}
				for i, a := range chunks {
					if a.Append != (i > 0) || a.LastChunk != (i == 3) || a.Artifact.Parts[0].Text() == "" {
						t.Fatalf("chunk %d: append %v lastChunk %v", i, a.Append, a.LastChunk)
					}
				}
				if finalState(evs) != a2a.TaskStateCompleted {
					t.Fatalf("final %s", finalState(evs))
				}
			})
			t.Run("tck-cancel", func(t *testing.T) { checkCancel(t, c) })
		})
	}
}

// checkCancel: tck-cancel stays working until it is canceled.
func checkCancel(t *testing.T, c *a2aclient.Client) {
	ctx := ctxT(t)
	req := sendReq("tck-cancel")
	req.Config = &a2a.SendMessageConfig{ReturnImmediately: true}
	task := taskOf(t, mustSend(t, c, req))
	var sawWorking bool
	for ev, err := range c.SubscribeToTask(ctx, &a2a.SubscribeToTaskRequest{ID: task.ID}) {
		if err != nil {
			t.Fatal(err)
		}
		if tk, ok := ev.(*a2a.Task); ok {
			if tk.Status.State != a2a.TaskStateWorking && tk.Status.State != a2a.TaskStateSubmitted {
				t.Fatalf("state %s before cancel", tk.Status.State)
			}
			got, err := c.GetTask(ctx, &a2a.GetTaskRequest{ID: task.ID})
			if err != nil || got.Status.State.Terminal() {
				t.Fatalf("get before cancel: %v %s", err, got.Status.State)
			}
			canceled, err := c.CancelTask(ctx, &a2a.CancelTaskRequest{ID: task.ID})
			if err != nil || canceled.Status.State != a2a.TaskStateCanceled {
				t.Fatalf("cancel: %v %+v", err, canceled)
			}
			sawWorking = true
		}
	}
	got, err := c.GetTask(ctx, &a2a.GetTaskRequest{ID: task.ID})
	if !sawWorking || err != nil || got.Status.State != a2a.TaskStateCanceled {
		t.Fatalf("after cancel: %v %+v", err, got)
	}
}

func wantState(t *testing.T, res a2a.SendMessageResult, want a2a.TaskState) *a2a.Task {
	t.Helper()
	task := taskOf(t, res)
	if task.Status.State != want {
		t.Fatalf("state %s, want %s (status message %+v)", task.Status.State, want, task.Status.Message)
	}
	return task
}

func onlyArtifactPart(t *testing.T, task *a2a.Task) *a2a.Part {
	t.Helper()
	if len(task.Artifacts) != 1 || len(task.Artifacts[0].Parts) != 1 {
		t.Fatalf("artifacts %+v, want one with one part", task.Artifacts)
	}
	return task.Artifacts[0].Parts[0]
}

// shape names each event: task, message, status:<state>, artifact:<name>.
func shape(evs []a2a.Event) []string {
	out := make([]string, len(evs))
	for i, ev := range evs {
		switch v := ev.(type) {
		case *a2a.Task:
			out[i] = "task"
		case *a2a.Message:
			out[i] = "message"
		case *a2a.TaskStatusUpdateEvent:
			out[i] = "status:" + string(v.Status.State)
		case *a2a.TaskArtifactUpdateEvent:
			out[i] = "artifact:" + v.Artifact.Name
		}
	}
	return out
}

func isSubsequence(want, got []string) bool {
	i := 0
	for _, g := range got {
		if i < len(want) && g == want[i] {
			i++
		}
	}
	return i == len(want)
}

// The test kit's multi-turn and auth behaviours over every binding:
// tck-multi-turn asks again until a message says "done"; tck-auth-required
// waits in AUTH_REQUIRED until a message brings credentials.
func TestConformanceConversations(t *testing.T) {
	e := newEnv(t)
	for _, b := range bindings {
		t.Run(b.name, func(t *testing.T) {
			c := e.client(t, "conformance", b)
			reply := func(task *a2a.Task, text string) *a2a.Task {
				m := textMessage(text)
				m.TaskID = task.ID
				return taskOf(t, mustSend(t, c, &a2a.SendMessageRequest{Message: m}))
			}
			task := taskOf(t, mustSend(t, c, sendReq("tck-multi-turn")))
			for _, text := range []string{"one", "two"} {
				if task = reply(task, text); task.Status.State != a2a.TaskStateInputRequired {
					t.Fatalf("multi-turn after %q: %s, want input-required", text, task.Status.State)
				}
			}
			if task = reply(task, "I am done"); task.Status.State != a2a.TaskStateCompleted {
				t.Fatalf("multi-turn after done: %s, want completed", task.Status.State)
			}
			auth := taskOf(t, mustSend(t, c, sendReq("tck-auth-required")))
			if auth.Status.State != a2a.TaskStateAuthRequired {
				t.Fatalf("auth-required: %s", auth.Status.State)
			}
			if auth = reply(auth, "token=s3cret"); auth.Status.State != a2a.TaskStateCompleted {
				t.Fatalf("auth-required with credentials: %s, want completed", auth.Status.State)
			}
		})
	}
}

// TestConformanceMessageOnlyStream (test kit STREAM-MSG-001): a streaming
// send the agent answers with a Message streams that Message alone — no
// Task, no updates — on every binding and version.
func TestConformanceMessageOnlyStream(t *testing.T) {
	e := newEnv(t)
	for _, b := range bindings {
		t.Run(b.name, func(t *testing.T) {
			c := e.client(t, "conformance", b)
			evs := collect(t, c.SendStreamingMessage(ctxT(t), sendReq("tck-message-response")))
			if len(evs) != 1 {
				t.Fatalf("stream %v, want one Message", shape(evs))
			}
			m, ok := evs[0].(*a2a.Message)
			if !ok || m.Role != a2a.MessageRoleAgent || len(m.Parts) != 1 || m.Parts[0].Text() != "Direct message response" {
				t.Fatalf("final event %#v, want the agent's Message", evs[0])
			}
		})
	}
}

// tck-stream-basic paces its updates so that a second subscriber attaches
// while it runs and sees it complete.
func TestConformanceStreams(t *testing.T) {
	e := newEnv(t)
	c := e.client(t, "conformance", bindings[0])
	var second []a2a.Event
	for ev, err := range c.SendStreamingMessage(ctxT(t), sendReq("tck-stream-basic")) {
		if err != nil {
			t.Fatal(err)
		}
		if task, ok := ev.(*a2a.Task); ok {
			second = collect(t, c.SubscribeToTask(ctxT(t), &a2a.SubscribeToTaskRequest{ID: task.ID}))
		}
	}
	if finalState(second) != a2a.TaskStateCompleted {
		t.Fatalf("the second subscriber saw %v, want the task complete", shape(second))
	}
}
