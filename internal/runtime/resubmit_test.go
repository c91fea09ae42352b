package runtime

import (
	"strings"
	"testing"

	"agentd/internal/errdefs"
	"agentd/internal/model"
	"agentd/internal/run"
)

// withID is a user message with a client-chosen id.
func withID(id, text string) model.Message {
	m := model.NewText(model.RoleUser, text)
	m.ID = id
	return m
}

// A retried message gets the task it started, and a stream of the retry
// starts where the attempt that message opened started: from the first
// event for the message that created the task, before the resumed
// run.start for an answer.
func TestRetryStreamsTheAttemptItsMessageOpened(t *testing.T) {
	r := newTestRuntime(t, nil, testAgent("a", asker{}))
	first, err := r.Send(ctxT(t), SendRequest{AgentID: "a", Message: withID("m1", "hi")})
	if err != nil {
		t.Fatal(err)
	}
	task := first.Task
	wait(t, r, task.ID)
	answer, err := r.Send(ctxT(t), SendRequest{AgentID: "a", TaskID: task.ID, Message: withID("m2", "Ada")})
	if err != nil {
		t.Fatal(err)
	}
	if done := wait(t, r, task.ID); done.State != run.StateCompleted {
		t.Fatalf("state %s", done.State)
	}
	for _, c := range []struct {
		name string
		req  SendRequest
		want int64
	}{
		{"the first message", SendRequest{AgentID: "a", ContextID: task.ContextID, Message: withID("m1", "hi")}, 0},
		{"the answer", SendRequest{AgentID: "a", TaskID: task.ID, Message: withID("m2", "Ada")}, answer.StartSeq},
		{"the answer, without its task", SendRequest{AgentID: "a", ContextID: task.ContextID, Message: withID("m2", "Ada")}, answer.StartSeq},
	} {
		sub, err := r.Send(ctxT(t), c.req)
		if err != nil {
			t.Fatalf("%s again: %v", c.name, err)
		}
		if !sub.Duplicate || sub.Task.ID != task.ID || sub.Task.State != run.StateCompleted || sub.StartSeq != c.want {
			t.Errorf("%s again: duplicate %v, task %s %s, start %d; want a duplicate of %s (completed) starting at %d",
				c.name, sub.Duplicate, sub.Task.ID, sub.Task.State, sub.StartSeq, task.ID, c.want)
		}
	}
	evs := storedEvents(t, r.st, task.ID)
	if got := evs[answer.StartSeq]; answer.StartSeq == 0 || got.Type != EventRunStart {
		t.Fatalf("the answer's attempt starts at seq %d with %s, want run.start", answer.StartSeq+1, got.Type)
	}
}

// The same message id on another message, to another agent or for another
// task is a conflict naming message.id, and stores nothing.
func TestReusedMessageIDIsAConflict(t *testing.T) {
	r := newTestRuntime(t, nil, testAgent("a", asker{}), testAgent("b", asker{}))
	first, err := r.Send(ctxT(t), SendRequest{AgentID: "a", Message: withID("m1", "hi")})
	if err != nil {
		t.Fatal(err)
	}
	task := first.Task
	wait(t, r, task.ID)
	other, err := r.Send(ctxT(t), SendRequest{AgentID: "a", ContextID: "elsewhere", Message: withID("o1", "hi")})
	if err != nil {
		t.Fatal(err)
	}
	wait(t, r, other.Task.ID)
	before := len(storedEvents(t, r.st, task.ID))
	for _, c := range []struct {
		name    string
		req     SendRequest
		mention string
	}{
		{"other text", SendRequest{AgentID: "a", ContextID: task.ContextID, Message: withID("m1", "DIFFERENT")}, "different content"},
		{"other agent", SendRequest{AgentID: "b", ContextID: task.ContextID, Message: withID("m1", "hi")}, "for agent a"},
		{"an answer reusing the question's id", SendRequest{AgentID: "a", TaskID: task.ID, Message: withID("m1", "Ada")}, "different content"},
	} {
		_, err := r.Send(ctxT(t), c.req)
		if !errdefs.IsConflict(err) || errdefs.FieldOf(err) != "message.id" || !strings.Contains(err.Error(), c.mention) {
			t.Errorf("%s: %v (field %q), want a conflict on message.id mentioning %q", c.name, err, errdefs.FieldOf(err), c.mention)
		}
	}
	got, err := r.GetTask(ctxT(t), task.ID)
	if err != nil || got.State != run.StateInputRequired || len(storedEvents(t, r.st, task.ID)) != before {
		t.Fatalf("task %s after the conflicts (%v), %d events (was %d): want it untouched, input-required", got.State, err, len(storedEvents(t, r.st, task.ID)), before)
	}
	// The answer that is really new still resumes it.
	if _, err := r.Send(ctxT(t), SendRequest{AgentID: "a", TaskID: task.ID, Message: withID("m2", "Ada")}); err != nil {
		t.Fatal(err)
	}
	if done := wait(t, r, task.ID); done.State != run.StateCompleted {
		t.Fatalf("state %s after the answer", done.State)
	}
}

func TestSubmissionFieldErrors(t *testing.T) {
	r := newTestRuntime(t, nil, testAgent("a", asker{}))
	task := send(t, r, "a", "hi")
	wait(t, r, task.ID)
	long := strings.Repeat("c", maxClientID+1)
	for _, c := range []struct {
		name  string
		req   SendRequest
		field string
	}{
		{"context id with a space", SendRequest{AgentID: "a", ContextID: "my ctx", Message: model.NewText(model.RoleUser, "hi")}, "context_id"},
		{"blank context id", SendRequest{AgentID: "a", ContextID: "   ", Message: model.NewText(model.RoleUser, "hi")}, "context_id"},
		{"context id too long", SendRequest{AgentID: "a", ContextID: long, Message: model.NewText(model.RoleUser, "hi")}, "context_id"},
		{"answer in another context", SendRequest{AgentID: "a", ContextID: "other", TaskID: task.ID, Message: model.NewText(model.RoleUser, "Ada")}, "context_id"},
		{"message id with a newline", SendRequest{AgentID: "a", Message: withID("m\n1", "hi")}, "message.id"},
		{"blank text", SendRequest{AgentID: "a", Message: model.NewText(model.RoleUser, " \n\t")}, "message.parts[0].text"},
		{"text part with data", SendRequest{AgentID: "a", Message: model.Message{Role: model.RoleUser, Parts: []model.Part{{Type: model.PartText, Text: "x", Data: []byte(`1`)}}}}, "message.parts[0].data"},
	} {
		_, err := r.Send(ctxT(t), c.req)
		if !errdefs.IsValidation(err) || errdefs.FieldOf(err) != c.field {
			t.Errorf("%s: %v (field %q), want a validation error on %s", c.name, err, errdefs.FieldOf(err), c.field)
		}
	}
	page, err := r.ListTasks(ctxT(t), run.TaskQuery{})
	if err != nil || len(page.Tasks) != 1 {
		t.Fatalf("%d tasks stored (%v), want only the first", len(page.Tasks), err)
	}
}
