package a2a_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"
)

// TestSDKClients drives every binding (JSON-RPC and HTTP+JSON, v1.0 and
// v0.3) with a2a-go's clients against a real listener.
func TestSDKClients(t *testing.T) {
	e := newEnv(t)
	for _, b := range bindings {
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			c := e.client(t, "conformance", b)
			echo := e.client(t, "echo", b)
			ctx := ctxT(t)

			t.Run("send blocks until completed", func(t *testing.T) {
				task := taskOf(t, mustSend(t, c, sendReq("tck-complete-task hello")))
				if task.Status.State != a2a.TaskStateCompleted || task.ContextID == "" || task.Status.Timestamp == nil {
					t.Fatalf("task %+v", task.Status)
				}
				if n := len(task.History); n != 2 || !strings.HasPrefix(task.History[1].Parts[0].Text(), "Task completed") || task.History[1].Role != a2a.MessageRoleAgent {
					t.Fatalf("history %d %+v", n, task.History)
				}
			})
			t.Run("returnImmediately", func(t *testing.T) {
				req := sendReq("tck-long-running")
				req.Config = &a2a.SendMessageConfig{ReturnImmediately: true}
				task := taskOf(t, mustSend(t, c, req))
				if task.Status.State.Terminal() {
					t.Fatalf("state %s, want an active state at once", task.Status.State)
				}
				got, err := c.GetTask(ctx, &a2a.GetTaskRequest{ID: task.ID})
				if err != nil || got.ID != task.ID {
					t.Fatalf("get: %v %+v", err, got)
				}
			})
			t.Run("message response", func(t *testing.T) {
				res := mustSend(t, c, sendReq("tck-message-response"))
				m, ok := res.(*a2a.Message)
				if !ok || m.Parts[0].Text() != "Direct message response" || m.Role != a2a.MessageRoleAgent {
					t.Fatalf("got %T %+v, want the agent's message", res, res)
				}
			})
			t.Run("stream", func(t *testing.T) {
				evs := collect(t, echo.SendStreamingMessage(ctx, sendReq("stream 5")))
				if _, ok := evs[0].(*a2a.Task); !ok {
					t.Fatalf("first event %T, want the Task", evs[0])
				}
				if got := answerText(evs); got != "tok1 tok2 tok3 tok4 tok5" {
					t.Fatalf("answer %q", got)
				}
				var chunks []*a2a.TaskArtifactUpdateEvent
				for _, ev := range evs {
					if a, ok := ev.(*a2a.TaskArtifactUpdateEvent); ok {
						chunks = append(chunks, a)
					}
				}
				for i, a := range chunks {
					if a.Append != (i > 0) || a.LastChunk != (i == len(chunks)-1) || a.Artifact.ID != chunks[0].Artifact.ID {
						t.Fatalf("chunk %d of %d: append %v lastChunk %v id %s", i, len(chunks), a.Append, a.LastChunk, a.Artifact.ID)
					}
				}
				if st := finalState(evs); st != a2a.TaskStateCompleted {
					t.Fatalf("final state %s", st)
				}
			})
			t.Run("multi-turn", func(t *testing.T) {
				task := taskOf(t, mustSend(t, c, sendReq("tck-multi-turn")))
				if task.Status.State != a2a.TaskStateInputRequired || task.Status.Message == nil {
					t.Fatalf("status %+v, want input-required with the question", task.Status)
				}
				follow := textMessage("42")
				follow.TaskID = task.ID // contextId inferred from the task
				more := taskOf(t, mustSend(t, c, &a2a.SendMessageRequest{Message: follow}))
				if more.ID != task.ID || more.ContextID != task.ContextID || more.Status.State != a2a.TaskStateInputRequired {
					t.Fatalf("follow-up without done: %+v, want input-required again", more.Status)
				}
				follow = textMessage("done")
				follow.TaskID = task.ID
				done := taskOf(t, mustSend(t, c, &a2a.SendMessageRequest{Message: follow}))
				if done.ID != task.ID || done.Status.State != a2a.TaskStateCompleted {
					t.Fatalf("follow-up with done: %+v", done.Status)
				}
				if last := done.History[len(done.History)-1]; last.Parts[0].Text() != "Received: done" {
					t.Fatalf("last message %q", last.Parts[0].Text())
				}
				// The task is terminal now: another message is a direct error.
				again := textMessage("more")
				again.TaskID = task.ID
				_, err := c.SendMessage(ctx, &a2a.SendMessageRequest{Message: again})
				wantErr(t, err, a2a.ErrUnsupportedOperation)
			})
			t.Run("cancel and subscribe", func(t *testing.T) {
				req := sendReq("tck-cancel")
				req.Config = &a2a.SendMessageConfig{ReturnImmediately: true}
				task := taskOf(t, mustSend(t, c, req))
				sub := c.SubscribeToTask(ctx, &a2a.SubscribeToTaskRequest{ID: task.ID})
				canceled := make(chan *a2a.Task, 1)
				var evs []a2a.Event
				for ev, err := range sub {
					if err != nil {
						t.Fatal(err)
					}
					evs = append(evs, ev)
					if len(evs) == 1 {
						go func() {
							got, err := c.CancelTask(ctx, &a2a.CancelTaskRequest{ID: task.ID})
							if err != nil {
								t.Error(err)
							}
							canceled <- got
						}()
					}
				}
				if _, ok := evs[0].(*a2a.Task); !ok || finalState(evs) != a2a.TaskStateCanceled {
					t.Fatalf("subscription %T … %s, want Task … canceled", evs[0], finalState(evs))
				}
				if got := <-canceled; got == nil || got.Status.State != a2a.TaskStateCanceled {
					t.Fatalf("cancel answered %+v", got)
				}
				again, err := c.CancelTask(ctx, &a2a.CancelTaskRequest{ID: task.ID})
				if err != nil || again.Status.State != a2a.TaskStateCanceled {
					t.Fatalf("second cancel: %v %+v, want the canceled task (idempotent)", err, again)
				}
			})
			t.Run("errors", func(t *testing.T) {
				_, err := c.GetTask(ctx, &a2a.GetTaskRequest{ID: "no-such-task"})
				wantErr(t, err, a2a.ErrTaskNotFound)
				done := taskOf(t, mustSend(t, c, sendReq("tck-complete-task")))
				_, err = c.CancelTask(ctx, &a2a.CancelTaskRequest{ID: done.ID})
				wantErr(t, err, a2a.ErrTaskNotCancelable)
				for _, err := range c.SubscribeToTask(ctx, &a2a.SubscribeToTaskRequest{ID: done.ID}) {
					wantErr(t, err, a2a.ErrUnsupportedOperation)
					break
				}
				unknown := textMessage("hi")
				unknown.TaskID = "client-chosen-id"
				_, err = c.SendMessage(ctx, &a2a.SendMessageRequest{Message: unknown})
				wantErr(t, err, a2a.ErrTaskNotFound)
				_, err = c.CreateTaskPushConfig(ctx, &a2a.PushConfig{TaskID: "no-such-task", URL: "https://example.com/hook"})
				wantErr(t, err, a2a.ErrTaskNotFound)
			})
		})
	}
}

// TestListTasks pages through an agent's tasks newest first.
func TestListTasks(t *testing.T) {
	e := newEnv(t)
	for _, b := range bindings[:2] { // ListTasks is a v1.0 method
		t.Run(b.name, func(t *testing.T) {
			c := e.client(t, "conformance", b)
			ctx := ctxT(t)
			first := taskOf(t, mustSend(t, c, sendReq("tck-complete-task 1")))
			ctxID := first.ContextID
			var ids []a2a.TaskID
			ids = append(ids, first.ID)
			for i := 0; i < 4; i++ {
				m := textMessage("tck-artifact-text")
				m.ContextID = ctxID
				ids = append(ids, taskOf(t, mustSend(t, c, &a2a.SendMessageRequest{Message: m})).ID)
			}
			var got []a2a.TaskID
			token := ""
			for pages := 0; ; pages++ {
				res, err := c.ListTasks(ctx, &a2a.ListTasksRequest{ContextID: ctxID, PageSize: 2, PageToken: token})
				if err != nil {
					t.Fatal(err)
				}
				if res.TotalSize != 5 || res.PageSize != 2 {
					t.Fatalf("total %d page size %d", res.TotalSize, res.PageSize)
				}
				for _, task := range res.Tasks {
					got = append(got, task.ID)
					if len(task.Artifacts) != 0 || len(task.History) != 0 {
						t.Fatalf("artifacts and history must be omitted unless asked: %+v", task)
					}
				}
				if token = res.NextPageToken; token == "" {
					break
				}
			}
			for i := range ids {
				if got[i] != ids[len(ids)-1-i] {
					t.Fatalf("order %v, want newest first of %v", got, ids)
				}
			}
			res, err := c.ListTasks(ctx, &a2a.ListTasksRequest{ContextID: ctxID, Status: a2a.TaskStateCompleted, IncludeArtifacts: true, HistoryLength: intp(1)})
			if err != nil || len(res.Tasks) != 5 || len(res.Tasks[0].Artifacts) != 1 || len(res.Tasks[0].History) != 1 {
				t.Fatalf("filtered: %v %+v", err, res)
			}
			_, err = c.ListTasks(ctx, &a2a.ListTasksRequest{PageToken: "garbage"})
			wantErr(t, err, a2a.ErrInvalidParams)
		})
	}
}

// TestHistoryLength checks unset = default, 0 = none, n = the last n.
func TestHistoryLength(t *testing.T) {
	e := newEnv(t)
	c := e.client(t, "conformance", bindings[0])
	ctx := ctxT(t)
	task := taskOf(t, mustSend(t, c, sendReq("tck-input-required")))
	follow := textMessage("yes")
	follow.TaskID = task.ID
	mustSend(t, c, &a2a.SendMessageRequest{Message: follow})
	for _, tc := range []struct {
		n    *int
		want int
	}{{nil, 4}, {intp(0), 0}, {intp(1), 1}, {intp(3), 3}, {intp(50), 4}} {
		got, err := c.GetTask(ctx, &a2a.GetTaskRequest{ID: task.ID, HistoryLength: tc.n})
		if err != nil || len(got.History) != tc.want {
			t.Fatalf("historyLength %v: %v, %d messages, want %d", tc.n, err, len(got.History), tc.want)
		}
	}
	got, _ := c.GetTask(ctx, &a2a.GetTaskRequest{ID: task.ID, HistoryLength: intp(1)})
	if got.History[0].Parts[0].Text() != "Received: yes" {
		t.Fatalf("last message %q", got.History[0].Parts[0].Text())
	}
	_, err := c.GetTask(ctx, &a2a.GetTaskRequest{ID: task.ID, HistoryLength: intp(-1)})
	wantErr(t, err, a2a.ErrInvalidParams)
}

// TestContextID checks generation, inference and mismatch rejection.
func TestContextID(t *testing.T) {
	e := newEnv(t)
	c := e.client(t, "conformance", bindings[0])
	ctx := ctxT(t)
	a := taskOf(t, mustSend(t, c, sendReq("tck-input-required")))
	b := taskOf(t, mustSend(t, c, sendReq("tck-complete-task")))
	if a.ContextID == "" || a.ContextID == b.ContextID {
		t.Fatalf("contexts %q %q, want two fresh ones", a.ContextID, b.ContextID)
	}
	m := textMessage("answer")
	m.TaskID, m.ContextID = a.ID, b.ContextID
	_, err := c.SendMessage(ctx, &a2a.SendMessageRequest{Message: m})
	wantErr(t, err, a2a.ErrInvalidParams)
	if got, _ := c.GetTask(ctx, &a2a.GetTaskRequest{ID: a.ID}); got.Status.State != a2a.TaskStateInputRequired {
		t.Fatalf("a rejected message must change nothing; state %s", got.Status.State)
	}
}

func mustSend(t testing.TB, c *a2aclient.Client, req *a2a.SendMessageRequest) a2a.SendMessageResult {
	t.Helper()
	res, err := c.SendMessage(ctxT(t), req)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func wantErr(t testing.TB, err, want error) {
	t.Helper()
	if !errors.Is(err, want) {
		t.Fatalf("got error %v, want %v", err, want)
	}
}

// finalState is the state of the last status update (or Task) of a stream.
func finalState(evs []a2a.Event) a2a.TaskState {
	var st a2a.TaskState
	for _, ev := range evs {
		switch v := ev.(type) {
		case *a2a.Task:
			st = v.Status.State
		case *a2a.TaskStatusUpdateEvent:
			st = v.Status.State
		}
	}
	return st
}

func intp(n int) *int { return &n }
