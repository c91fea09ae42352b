package a2a_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"
)

// The refund flow's question/answer loop through a2a-go's client, over
// every binding: each question is an input-required task whose status
// message carries the question and a data part with its constraints; the
// answers, sent to the task, walk the flow to its end, and the flow's
// context comes back as the task's artifact. A task canceled while it
// waits for an answer goes through the flow's interrupt handler: it ends
// canceled, saying the flow's goodbye.
func TestRefundFlowOverA2A(t *testing.T) {
	e := newEnv(t)
	for _, b := range bindings {
		t.Run(b.name, func(t *testing.T) {
			c := e.client(t, "refund", b)
			task := taskOf(t, mustSend(t, c, sendReq("I want a refund")))
			steps := []struct {
				answer string
				asks   string // a word of the next question
				input  string // its input_type
			}{
				{"", "Which order", "text"},
				{"A-1001", "Why do you want a refund", "choice"},
				{"damaged", "Refund 42.5 EUR for order A-1001 (damaged)?", "confirm"},
			}
			for _, s := range steps {
				if s.answer != "" {
					task = answer(t, c, task, s.answer)
				}
				if task.Status.State != a2a.TaskStateInputRequired {
					t.Fatalf("after %q: state %s, want input-required", s.answer, task.Status.State)
				}
				text, data := questionOf(t, task.Status.Message)
				if !strings.Contains(text, s.asks) || data["input_type"] != s.input {
					t.Fatalf("after %q: asked %q with %v; want %q (%s)", s.answer, text, data, s.asks, s.input)
				}
				if s.input == "choice" && len(data["options"].([]any)) != 4 {
					t.Errorf("choice without its four options: %v", data)
				}
			}
			done := answer(t, c, task, "yes")
			if done.Status.State != a2a.TaskStateCompleted {
				t.Fatalf("after yes: state %s (%v), want completed", done.Status.State, done.Status.Message)
			}
			if last := done.History[len(done.History)-1]; !strings.Contains(last.Parts[0].Text(), "is on its way to") {
				t.Errorf("last message %q, want the refund done", last.Parts[0].Text())
			}
			var flowContext *a2a.Artifact
			for _, a := range done.Artifacts {
				if a.ID == "flow-context" {
					flowContext = a
				}
			}
			if flowContext == nil || !strings.Contains(string(mustJSON(flowContext.Parts)), `"refund_id"`) {
				t.Errorf("no flow-context artifact with the refund: %+v", done.Artifacts)
			}

			parked := taskOf(t, mustSend(t, c, sendReq("refund please")))
			canceled, err := c.CancelTask(ctxT(t), &a2a.CancelTaskRequest{ID: parked.ID})
			if err != nil {
				t.Fatal(err)
			}
			if canceled.Status.State != a2a.TaskStateCanceled || canceled.Status.Message == nil ||
				!strings.Contains(canceled.Status.Message.Parts[0].Text(), "Goodbye!") {
				t.Fatalf("canceled parked flow: %s %v, want canceled with the goodbye", canceled.Status.State, canceled.Status.Message)
			}
		})
	}
}

// answer sends text to the task that waits for it.
func answer(t *testing.T, c *a2aclient.Client, task *a2a.Task, text string) *a2a.Task {
	t.Helper()
	m := textMessage(text)
	m.TaskID = task.ID
	return taskOf(t, mustSend(t, c, &a2a.SendMessageRequest{Message: m}))
}

// questionOf returns a prompt's text and its data part's object.
func questionOf(t *testing.T, m *a2a.Message) (string, map[string]any) {
	t.Helper()
	if m == nil {
		t.Fatal("no status message")
	}
	var text string
	var data map[string]any
	for _, p := range m.Parts {
		if s := p.Text(); s != "" {
			text += s
		}
		if d := p.Data(); d != nil {
			b, _ := json.Marshal(d)
			_ = json.Unmarshal(b, &data)
		}
	}
	return text, data
}
