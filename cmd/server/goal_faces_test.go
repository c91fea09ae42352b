package main

import (
	"strings"
	"testing"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"
)

// The demo's goal agent over A2A (a2a-go's client): the task waits in
// input-required with the plan in its status message and as its "plan"
// artifact; "approve" runs it, and the completed task's "result" artifact
// lists both steps.
func TestGoalOverA2A(t *testing.T) {
	s := start(t)
	iface := &a2a.AgentInterface{URL: s.base + "/agents/goal/jsonrpc", ProtocolBinding: a2a.TransportProtocolJSONRPC, ProtocolVersion: a2a.Version}
	c, err := a2aclient.NewFromEndpoints(t.Context(), []*a2a.AgentInterface{iface})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Destroy() })

	res, err := c.SendMessage(t.Context(), &a2a.SendMessageRequest{Message: a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("tell me the time twice"))})
	if err != nil {
		t.Fatal(err)
	}
	task, ok := res.(*a2a.Task)
	if !ok || task.Status.State != a2a.TaskStateInputRequired || task.Status.Message == nil ||
		!strings.Contains(task.Status.Message.Parts[0].Text(), "name: time-report") {
		t.Fatalf("goal over A2A: %#v, want input-required with the plan", res)
	}
	got, err := c.GetTask(t.Context(), &a2a.GetTaskRequest{ID: task.ID})
	if err != nil {
		t.Fatal(err)
	}
	if a := namedArtifact(got, "plan"); !strings.Contains(a, "  - id: clock\n") {
		t.Fatalf("plan artifact %q", a)
	}

	answer := a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("approve"))
	answer.TaskID = task.ID
	if res, err = c.SendMessage(t.Context(), &a2a.SendMessageRequest{Message: answer}); err != nil {
		t.Fatal(err)
	}
	if done := res.(*a2a.Task); done.Status.State != a2a.TaskStateCompleted {
		t.Fatalf("after approve: %s", done.Status.State)
	}
	if got, err = c.GetTask(t.Context(), &a2a.GetTaskRequest{ID: task.ID}); err != nil {
		t.Fatal(err)
	}
	if a := namedArtifact(got, "result"); !strings.Contains(a, "- clock: completed\n- repeat: completed") {
		t.Fatalf("result artifact %q", a)
	}
}

// namedArtifact is the text of task's artifact name.
func namedArtifact(task *a2a.Task, name string) string {
	for _, a := range task.Artifacts {
		if a.Name == name {
			return artifactText(a)
		}
	}
	return ""
}

// TestGoalInteropJS runs interop/js/goal.mjs against the demo: the goal
// agent through @ag-ui/client, the ai package, @langchain/langgraph-sdk and
// @modelcontextprotocol/sdk — each sees the plan, approves it its way,
// and the plan runs.
func TestGoalInteropJS(t *testing.T) {
	node, dir := nodeScript(t, "@ag-ui/client")
	s := start(t)
	runNode(t, node, dir, s.base, "goal.mjs")
}
