package storetest

import (
	"encoding/json"
	"testing"

	"agentd/internal/model"
	"agentd/internal/run"
	"agentd/internal/store"
)

// nulText holds U+0000, which encoding/json writes as \u0000: a tool that
// read a binary file, or a model echoing one, produces such text. Every
// store keeps it (PostgreSQL's jsonb would refuse it).
const nulText = "bytes: \x00\x01 end"

func testNUL(t *testing.T, f Factory) {
	subtests(t, f, map[string]func(*testing.T, store.Store){
		"InMessagesAndTasks": testNULMessages,
		"InCheckpoints":      testNULCheckpoint,
		"InPushConfigs":      testNULPushConfig,
	})
}

// A run's final commit carries the NUL in the transcript, the status
// message, the artifacts and the metadata: all of it round-trips.
func testNULMessages(t *testing.T, s store.Store) {
	ctx := t.Context()
	m := model.NewText(model.RoleAssistant, nulText)
	m.ID, m.CreatedAt = "m-nul", at(3)
	m.Metadata = map[string]any{"raw": nulText, nulText: "as a key"}
	task := newTask("t-nul", "c-nul", 1)
	task.State = run.StateFailed
	task.StatusMessage = &m
	task.Error = &run.TaskError{Class: "internal", Message: nulText}
	task.Artifacts = []model.Artifact{{ID: "a-nul", Name: nulText, Parts: []model.Part{model.TextPart(nulText)}}}
	task.Metadata = map[string]any{"note": nulText}
	apply(t, ctx, s, store.Change{TaskID: task.ID, CreateTask: task, Messages: []run.Message{{ContextID: "c-nul", Message: m}}})

	got := getTask(t, ctx, s, "t-nul")
	want := *task
	want.Tenant, want.Version, want.UpdatedAt = got.Tenant, got.Version, got.UpdatedAt
	wantSameJSON(t, "task with NUL characters read back", normTask(got), normTask(want))
	page := listMessages(t, ctx, s, run.MessageQuery{ContextID: "c-nul"})
	wantSameJSON(t, "message with NUL characters read back", normMessages(page.Messages),
		normMessages([]run.Message{{ContextID: "c-nul", TaskID: "t-nul", Position: 1, Message: m}}))
	if len(page.Messages) == 1 && page.Messages[0].Parts[0].Text != nulText {
		t.Errorf("text read back = %q, want %q", page.Messages[0].Parts[0].Text, nulText)
	}
}

func testNULCheckpoint(t *testing.T, s store.Store) {
	ctx := t.Context()
	want := checkpoint("r-nul", 1, 1)
	want.Board.Vars["blob"] = nulText
	want.Board.Channels["main"] = append(want.Board.Channels["main"], model.NewText(model.RoleTool, nulText))
	saveCheckpoint(t, ctx, s, want)
	got, err := s.LoadCheckpoint(ctx, "r-nul")
	wantNoError(t, err, "LoadCheckpoint(r-nul)")
	if got == nil {
		t.Fatal("LoadCheckpoint(r-nul) = nil after a save, want the checkpoint")
	}
	if v := got.Board.Vars["blob"]; v != nulText {
		t.Errorf("board var read back = %q, want %q", v, nulText)
	}
	wantSameJSON(t, "checkpoint with NUL characters read back", normCheckpoint(*got), normCheckpoint(want))
}

func testNULPushConfig(t *testing.T, s store.Store) {
	ctx := t.Context()
	createTask(t, ctx, s, newTask("t-nul", "c-nul", 1))
	cfg, err := json.Marshal(map[string]string{"url": "https://example.com/hook", "token": nulText})
	wantNoError(t, err, "marshal push config")
	wantNoError(t, s.PutPushConfig(ctx, run.PushConfig{TaskID: "t-nul", ID: "p-nul", Config: cfg, CreatedAt: at(1)}), "PutPushConfig with a NUL character")
	got, err := s.GetPushConfig(ctx, "t-nul", "p-nul")
	wantNoError(t, err, "GetPushConfig(t-nul, p-nul)")
	var back map[string]string
	wantNoError(t, json.Unmarshal(got.Config, &back), "decode push config read back")
	if back["token"] != nulText {
		t.Errorf("push config token read back = %q, want %q", back["token"], nulText)
	}
}
