package remote_test

import (
	"strings"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
)

// TestFederationOverA2A runs both sides on agentd's runtime and drives the
// local relay with a2a-go's client: the peer's input-required parks the
// relay's task, the answer sent to the relay's task reaches the peer task
// and completes both; a cancel of the relay's task cancels the peer's.
func TestFederationOverA2A(t *testing.T) {
	p := newPeer(t)
	l := newRelay(t, p.cardURL("conformance"))
	c := peerClient(t, l, "fed")
	ctx := ctxT(t)

	t.Run("input-required", func(t *testing.T) {
		res, err := c.SendMessage(ctx, &a2a.SendMessageRequest{Message: a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("tck-input-required"))})
		if err != nil {
			t.Fatal(err)
		}
		task := res.(*a2a.Task)
		if task.Status.State != a2a.TaskStateInputRequired || !contains(messageText(task.Status.Message), "Please provide more input") {
			t.Fatalf("task %s: %+v", task.Status.State, task.Status.Message)
		}
		reply := a2a.NewMessageForTask(a2a.MessageRoleUser, task, a2a.NewTextPart("forty-two"))
		res, err = c.SendMessage(ctx, &a2a.SendMessageRequest{Message: reply})
		if err != nil {
			t.Fatal(err)
		}
		task = res.(*a2a.Task)
		if task.Status.State != a2a.TaskStateCompleted {
			t.Fatalf("after the answer: %s", task.Status.State)
		}
		if got := artifactText(task); got != "Received: forty-two" {
			t.Fatalf("answer %q", got)
		}
	})

	t.Run("cancel while parked", func(t *testing.T) {
		res, err := c.SendMessage(ctx, &a2a.SendMessageRequest{Message: a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("tck-input-required"))})
		if err != nil {
			t.Fatal(err)
		}
		task := res.(*a2a.Task)
		if task.Status.State != a2a.TaskStateInputRequired {
			t.Fatalf("task %s", task.Status.State)
		}
		peerTasks := peerClient(t, p, "conformance")
		list, err := peerTasks.ListTasks(ctx, &a2a.ListTasksRequest{Status: a2a.TaskStateInputRequired})
		if err != nil || len(list.Tasks) != 1 {
			t.Fatalf("peer tasks waiting for input: %v %v", list, err)
		}
		peerID := list.Tasks[0].ID
		if _, err := c.CancelTask(ctx, &a2a.CancelTaskRequest{ID: task.ID}); err != nil {
			t.Fatal(err)
		}
		eventually(t, "the parked peer task is canceled", func() bool {
			pt, err := peerTasks.GetTask(ctx, &a2a.GetTaskRequest{ID: peerID})
			return err == nil && pt.Status.State == a2a.TaskStateCanceled
		})
	})

	t.Run("cancel", func(t *testing.T) {
		res, err := c.SendMessage(ctx, &a2a.SendMessageRequest{
			Message: a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("tck-cancel")),
			Config:  &a2a.SendMessageConfig{ReturnImmediately: true},
		})
		if err != nil {
			t.Fatal(err)
		}
		task := res.(*a2a.Task)
		peerTasks := peerClient(t, p, "conformance")
		working := func(state a2a.TaskState) func() bool {
			return func() bool {
				list, err := peerTasks.ListTasks(ctx, &a2a.ListTasksRequest{ContextID: "", Status: state})
				return err == nil && len(list.Tasks) > 0
			}
		}
		eventually(t, "the peer task works", working(a2a.TaskStateWorking))
		// The newest working peer task is this run's (task ids are
		// time-ordered); earlier subtests' tasks may still be winding down.
		list, err := peerTasks.ListTasks(ctx, &a2a.ListTasksRequest{Status: a2a.TaskStateWorking})
		if err != nil || len(list.Tasks) == 0 {
			t.Fatalf("working peer tasks: %v", err)
		}
		peerID := list.Tasks[0].ID
		for _, pt := range list.Tasks {
			if pt.ID > peerID {
				peerID = pt.ID
			}
		}
		if _, err := c.CancelTask(ctx, &a2a.CancelTaskRequest{ID: task.ID}); err != nil {
			t.Fatal(err)
		}
		eventually(t, "the peer task is canceled", func() bool {
			pt, err := peerTasks.GetTask(ctx, &a2a.GetTaskRequest{ID: peerID})
			return err == nil && pt.Status.State == a2a.TaskStateCanceled
		})
	})
}

// eventually polls cond until it holds or the test's deadline passes: the
// peer's state is only observable by asking it.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(testTimeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting until %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func contains(s, sub string) bool { return strings.Contains(s, sub) }

func messageText(m *a2a.Message) string {
	if m == nil {
		return ""
	}
	var b strings.Builder
	for _, p := range m.Parts {
		b.WriteString(p.Text())
	}
	return b.String()
}

func artifactText(task *a2a.Task) string {
	var b strings.Builder
	for _, a := range task.Artifacts {
		for _, p := range a.Parts {
			b.WriteString(p.Text())
		}
	}
	return b.String()
}
