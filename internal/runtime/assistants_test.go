package runtime

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"agentd/internal/engine"
	"agentd/internal/errdefs"
	"agentd/internal/model"
	"agentd/internal/run"
	"agentd/internal/store/memstore"
)

// sayer answers every message with text.
func sayer(text string) engine.Engine {
	return engine.EngineFunc(func(_ context.Context, _ engine.Run, _ engine.Host, b *engine.Board) (*engine.Board, error) {
		b.AppendChannelMessage(engine.MainChannel, model.NewText(model.RoleAssistant, text))
		return b, nil
	})
}

// configurable is an agent whose Configure takes one override, "say",
// and refuses anything else as a configuration would; broken, when set,
// makes it refuse everything (a configuration changed since).
func configurable(broken *bool) *Agent {
	a := testAgent("talker", sayer("as configured"))
	a.Configure = func(field string, o map[string]any) (engine.Engine, error) {
		if *broken {
			return nil, fmt.Errorf("%s.say: no longer offered", field)
		}
		for k := range o {
			if k != "say" {
				return nil, fmt.Errorf("%s.%s: unknown field", field, k)
			}
		}
		s, _ := o["say"].(string)
		return sayer(s), nil
	}
	return a
}

// answerOf sends text on assistant id (none when empty) and answers the
// run's last message, or its error.
func answerOf(t *testing.T, r *Runtime, id string, md map[string]any) string {
	t.Helper()
	sub, err := r.Send(ctxT(t), SendRequest{AgentID: "talker", AssistantID: id, Message: model.NewText(model.RoleUser, "hi"), Metadata: md})
	if err != nil {
		t.Fatal(err)
	}
	done := wait(t, r, sub.Task.ID)
	if done.Error != nil {
		return "error: " + done.Error.Message
	}
	page, err := r.ListMessages(ctxT(t), run.MessageQuery{ContextID: done.ContextID, TaskID: done.ID})
	if err != nil || len(page.Messages) == 0 {
		t.Fatalf("messages: %v", err)
	}
	return page.Messages[len(page.Messages)-1].Text()
}

// TestAssistantRuns: a run on an assistant runs the engine its overrides
// configure, at the latest version; the agent alone runs as configured;
// a client cannot smuggle overrides in through the metadata key; a
// refused override stores nothing.
func TestAssistantRuns(t *testing.T) {
	st := memstore.New()
	working, broken := false, true
	r := newTestRuntime(t, st, configurable(&working))
	ctx := ctxT(t)
	if _, err := r.CreateAssistant(ctx, run.Assistant{AgentID: "talker", Context: map[string]any{"sya": "x"}}); !errdefs.IsValidation(err) ||
		errdefs.FieldOf(err) != "context.sya" {
		t.Fatalf("a refused override: %v (field %q)", err, errdefs.FieldOf(err))
	}
	if page, total, _ := r.SearchAssistants(ctx, run.AssistantQuery{}); total != 0 || len(page) != 0 {
		t.Fatalf("stored after a refusal: %v", page)
	}
	a, err := r.CreateAssistant(ctx, run.Assistant{AgentID: "talker", Context: map[string]any{"say": "one"}})
	if err != nil {
		t.Fatal(err)
	}
	if got := answerOf(t, r, a.ID, nil); got != "one" {
		t.Fatalf("version 1 said %q", got)
	}
	if _, err := r.UpdateAssistant(ctx, a.ID, AssistantPatch{Context: map[string]any{"say": "two"}}); err != nil {
		t.Fatal(err)
	}
	if got := answerOf(t, r, a.ID, nil); got != "two" {
		t.Fatalf("version 2 said %q", got)
	}
	smuggled := map[string]any{MetaAssistant: map[string]any{"assistant_id": "x", "version": 1, "context": map[string]any{"say": "smuggled"}}}
	if got := answerOf(t, r, "", smuggled); got != "as configured" {
		t.Fatalf("the agent with a client's %s said %q", MetaAssistant, got)
	}
	// A replica whose configuration no longer takes version 2's override
	// fails the run, naming the assistant, rather than run something else.
	changed := newTestRuntime(t, st, configurable(&broken))
	sub, err := changed.Send(ctx, SendRequest{AgentID: "talker", AssistantID: a.ID, Message: model.NewText(model.RoleUser, "hi")})
	if err != nil {
		t.Fatal(err)
	}
	if done := wait(t, changed, sub.Task.ID); done.State != run.StateRejected || done.Error == nil ||
		!strings.Contains(done.Error.Message, "assistant "+a.ID+" version 2: context.say: no longer offered") {
		t.Fatalf("a run on an override now refused: %s %+v", done.State, done.Error)
	}
}

// TestAssistantUnknown: a run on a missing assistant, or on one of another
// agent, is refused naming assistant_id; nothing starts.
func TestAssistantUnknown(t *testing.T) {
	working := false
	other := testAgent("other", sayer("other"))
	r := newTestRuntime(t, memstore.New(), configurable(&working), other)
	ctx := ctxT(t)
	_, err := r.Send(ctx, SendRequest{AgentID: "talker", AssistantID: "nope", Message: model.NewText(model.RoleUser, "hi")})
	if !errdefs.IsNotFound(err) || errdefs.FieldOf(err) != "assistant_id" {
		t.Fatalf("a missing assistant: %v", err)
	}
	a, err := r.CreateAssistant(ctx, run.Assistant{AgentID: "other"})
	if err != nil {
		t.Fatal(err)
	}
	_, err = r.Send(ctx, SendRequest{AgentID: "talker", AssistantID: a.ID, Message: model.NewText(model.RoleUser, "hi")})
	if !errdefs.IsValidation(err) || errdefs.FieldOf(err) != "assistant_id" {
		t.Fatalf("another agent's assistant: %v", err)
	}
	if _, err := r.CreateAssistant(ctx, run.Assistant{AgentID: "other", Context: map[string]any{"say": "x"}}); !errdefs.IsValidation(err) {
		t.Fatalf("an override of an agent that takes none: %v", err)
	}
	if _, err := r.CreateAssistant(ctx, run.Assistant{ID: "talker", AgentID: "talker"}); !errdefs.IsConflict(err) {
		t.Fatalf("an agent's id: %v", err)
	}
	if _, err := r.CreateAssistant(ctx, run.Assistant{AgentID: "talker", Config: map[string]any{"tags": []any{"x"}}}); errdefs.FieldOf(err) != "config.tags" {
		t.Fatalf("config: %v", err)
	}
	if _, err := r.CreateAssistant(ctx, run.Assistant{AgentID: "talker", Config: map[string]any{"configurable": map[string]any{}}}); err != nil {
		t.Fatalf("an empty configurable: %v", err)
	}
}
