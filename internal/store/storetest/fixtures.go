package storetest

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"agentd/internal/engine"
	"agentd/internal/model"
	"agentd/internal/run"
	"agentd/internal/store"
)

// newTask returns a minimal valid task to create.
func newTask(id, contextID string, createdAt int) *run.Task {
	return &run.Task{
		ID:        id,
		ContextID: contextID,
		AgentID:   "agent-a",
		State:     run.StateSubmitted,
		Attempt:   1,
		CreatedAt: at(createdAt),
	}
}

// createTask creates task in ctx's tenant and returns it as stored.
func createTask(t *testing.T, ctx context.Context, s store.Store, task *run.Task) run.Task {
	t.Helper()
	apply(t, ctx, s, store.Change{TaskID: task.ID, CreateTask: task})
	return getTask(t, ctx, s, task.ID)
}

func getTask(t *testing.T, ctx context.Context, s store.Store, id string) run.Task {
	t.Helper()
	got, err := s.GetTask(ctx, id)
	wantNoError(t, err, "GetTask("+id+")")
	return got
}

// fullTask sets every field of a task, nested parts of every kind included.
func fullTask(id, contextID string) *run.Task {
	status := richMessage("status-1")
	return &run.Task{
		ID:            id,
		ContextID:     contextID,
		AgentID:       "agent-full",
		Tenant:        "ignored-by-the-store",
		State:         run.StateInputRequired,
		StatusMessage: &status,
		Error:         &run.TaskError{Class: "validation", Message: "field x is missing"},
		Artifacts: []model.Artifact{{
			ID:          "art-1",
			Name:        "report.md",
			Description: "the answer",
			Parts:       richParts(),
			Metadata:    map[string]any{"pages": 3, "tags": []any{"a", "b"}},
		}},
		Usage: model.TokenUsage{InputTokens: 120, OutputTokens: 30, TotalTokens: 150},
		ModelUsage: map[string]model.TokenUsage{
			"gpt-small": {InputTokens: 100, OutputTokens: 20, TotalTokens: 120},
			"":          {InputTokens: 20, OutputTokens: 10, TotalTokens: 30},
		},
		Attempt:         2,
		CancelRequested: true,
		Signals: []run.PendingSignal{
			{ID: "sig-1", Type: "pause", Text: "lunch", At: at(2)},
			{ID: "sig-2", Type: "feedback", Text: "steer left " + nulText, At: at(3)},
		},
		Metadata:  map[string]any{"z": "last", "a": map[string]any{"nested": true, "n": 1.5}, "list": []any{1, "two", nil}},
		CreatedAt: at(1),
	}
}

// richParts returns one part of every kind, each with metadata.
func richParts() []model.Part {
	data := model.Part{Type: model.PartData, Data: json.RawMessage(`{"b": [1, 2, {"c": null}], "a": "x"}`), MediaType: "application/json"}
	file := model.FileBytesPart("blob.bin", "application/octet-stream", []byte{0, 1, 2, 254, 255})
	file.Metadata = map[string]any{"sha": "abc"}
	return []model.Part{
		{Type: model.PartText, Text: "hello, world", Metadata: map[string]any{"lang": "en"}},
		data,
		file,
		model.FileURLPart("pic.png", "image/png", "https://example.com/pic.png"),
		model.ToolCallPart(model.ToolCall{ID: "call-1", Name: "clock", Arguments: json.RawMessage(`{"tz": "UTC", "fmt": 24}`)}),
		model.ToolResultPart(model.ToolResult{ToolCallID: "call-1", Name: "clock", Content: "12:00", IsError: true}),
	}
}

// richMessage returns a model message with every optional field set.
func richMessage(id string) model.Message {
	return model.Message{
		ID:        id,
		Role:      model.RoleAssistant,
		Parts:     richParts(),
		Name:      "agent-full",
		Metadata:  map[string]any{"k": "v", "n": 2},
		CreatedAt: at(2),
	}
}

// textMessage returns a transcript message of contextID with one text part.
func textMessage(contextID, id, text string) run.Message {
	m := model.NewText(model.RoleUser, text)
	m.ID = id
	m.CreatedAt = at(3)
	return run.Message{ContextID: contextID, Message: m}
}

// textMessages returns n text messages of contextID named prefix-1…n.
func textMessages(contextID, prefix string, n int) []run.Message {
	msgs := make([]run.Message, n)
	for i := range msgs {
		msgs[i] = textMessage(contextID, fmt.Sprintf("%s-%d", prefix, i+1), fmt.Sprintf("%s text %d", prefix, i+1))
	}
	return msgs
}

// runEvents returns the events from..to of runID, with the JSON Data the
// runtime would write.
func runEvents(runID string, from, to int64) []run.Event {
	var evs []run.Event
	for seq := from; seq <= to; seq++ {
		data := fmt.Sprintf(`{"run_id": %q, "seq": %d, "type": "step", "payload": {"z": [1, "two"], "a": {"ok": true}}}`, runID, seq)
		evs = append(evs, run.Event{RunID: runID, Seq: seq, Type: "step", Time: at(int(seq)), Data: json.RawMessage(data)})
	}
	return evs
}

// appendEvents appends the events from..to of runID in one Apply.
func appendEvents(t *testing.T, ctx context.Context, s store.Store, runID string, from, to int64) {
	t.Helper()
	apply(t, ctx, s, store.Change{Events: runEvents(runID, from, to)})
}

// checkpoint returns a checkpoint of runID written by attempt, with every
// field set.
func checkpoint(runID string, attempt, step int) engine.Checkpoint {
	return engine.Checkpoint{
		ExecID:    runID,
		Step:      fmt.Sprintf("step-%d", step),
		Iteration: step,
		Board: &engine.BoardSnapshot{
			Vars: map[string]any{"count": step, "name": "board", "nested": map[string]any{"b": []any{1, 2}, "a": nil}},
			Channels: map[string][]model.Message{
				"main": {model.NewText(model.RoleUser, "hi"), richMessage("ch-1")},
			},
		},
		Payload:           json.RawMessage(fmt.Sprintf(`{"z": %d, "a": {"cursor": "c-%d"}}`, step, step)),
		Attributes:        map[string]string{store.AttrAttempt: fmt.Sprint(attempt), "k": "v"},
		Timestamp:         at(10 + step),
		OriginalStartedAt: at(5),
		SpecVersion:       "v3",
	}
}

// normTask makes a task comparable: times in UTC to the microsecond.
func normTask(task run.Task) run.Task {
	task.CreatedAt = micro(task.CreatedAt)
	task.UpdatedAt = micro(task.UpdatedAt)
	if task.StatusMessage != nil {
		m := normModelMessage(*task.StatusMessage)
		task.StatusMessage = &m
	}
	return task
}

func normModelMessage(m model.Message) model.Message {
	m.CreatedAt = micro(m.CreatedAt)
	return m
}

func normMessages(msgs []run.Message) []run.Message {
	out := make([]run.Message, len(msgs))
	for i, m := range msgs {
		m.Message = normModelMessage(m.Message)
		out[i] = m
	}
	return out
}

func normEvents(evs []run.Event) []run.Event {
	out := make([]run.Event, len(evs))
	for i, e := range evs {
		e.Time = micro(e.Time)
		out[i] = e
	}
	return out
}

func normCheckpoint(cp engine.Checkpoint) engine.Checkpoint {
	cp.Timestamp = micro(cp.Timestamp)
	cp.OriginalStartedAt = micro(cp.OriginalStartedAt)
	if cp.Board != nil {
		b := *cp.Board
		b.Channels = make(map[string][]model.Message, len(cp.Board.Channels))
		for k, msgs := range cp.Board.Channels {
			out := make([]model.Message, len(msgs))
			for i, m := range msgs {
				out[i] = normModelMessage(m)
			}
			b.Channels[k] = out
		}
		cp.Board = &b
	}
	return cp
}

// ids returns the ids of tasks, for compact failure messages.
func ids(tasks []run.Task) []string {
	out := make([]string, len(tasks))
	for i, task := range tasks {
		out[i] = task.ID
	}
	return out
}

// positions returns the positions of msgs.
func positions(msgs []run.Message) []int64 {
	out := make([]int64, len(msgs))
	for i, m := range msgs {
		out[i] = m.Position
	}
	return out
}

// seqs returns the seqs of evs.
func seqs(evs []run.Event) []int64 {
	out := make([]int64, len(evs))
	for i, e := range evs {
		out[i] = e.Seq
	}
	return out
}

// span returns from, from+1, …, to.
func span(from, to int64) []int64 {
	var out []int64
	for i := from; i <= to; i++ {
		out = append(out, i)
	}
	return out
}
