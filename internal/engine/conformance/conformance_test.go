package conformance

import (
	"context"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"agentd/internal/engine"
	"agentd/internal/engine/enginetest"
	"agentd/internal/errdefs"
	"agentd/internal/model"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func boardWith(text string) *engine.Board {
	b := engine.NewBoard()
	b.AppendChannelMessage(engine.MainChannel, model.NewText(model.RoleUser, text))
	return b
}

func answer(context.Context, engine.UserPrompt) (engine.UserReply, error) {
	return engine.UserReply{Parts: []model.Part{model.TextPart("42")}}, nil
}

func TestEngineContract(t *testing.T) {
	enginetest.RunSuite(t, func(testing.TB) enginetest.Case {
		return enginetest.Case{
			Engine:  New("conformance").WithDelay(10 * time.Millisecond),
			Succeed: func() enginetest.Input { return enginetest.Input{Board: boardWith("tck-multi-turn"), AskUser: answer} },
			Fail:    func() enginetest.Input { return enginetest.Input{Board: boardWith("tck-task-failure")} },
			Block:   func() enginetest.Input { return enginetest.Input{Board: boardWith("tck-cancel")} },
		}
	})
}

func run(t *testing.T, text string, ask func(context.Context, engine.UserPrompt) (engine.UserReply, error)) (*engine.Board, *enginetest.RecordingHost, error) {
	t.Helper()
	h := enginetest.NewRecordingHost()
	h.AskUserFn = ask
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	b, err := New("conformance").WithDelay(time.Millisecond).Execute(ctx, engine.Run{ID: "r1"}, h, boardWith(text))
	return b, h, err
}

func last(b *engine.Board) model.Message {
	msgs := b.Channel(engine.MainChannel)
	return msgs[len(msgs)-1]
}

func artifacts(t *testing.T, h *enginetest.RecordingHost) []engine.ArtifactUpdate {
	var out []engine.ArtifactUpdate
	for _, ev := range h.Events() {
		if a, ok := ev.(engine.ArtifactUpdate); ok {
			out = append(out, a)
		}
	}
	return out
}

func TestBehaviours(t *testing.T) {
	t.Run("complete", func(t *testing.T) {
		b, _, err := run(t, "tck-complete-task please", nil)
		if err != nil || !strings.HasPrefix(last(b).Text(), "Task completed") {
			t.Fatalf("%v %q", err, last(b).Text())
		}
	})
	t.Run("reject", func(t *testing.T) {
		if _, _, err := run(t, "tck-reject-task", nil); !errdefs.IsValidation(err) {
			t.Fatalf("got %v, want a validation error (rejected)", err)
		}
	})
	t.Run("failure", func(t *testing.T) {
		if _, _, err := run(t, "tck-task-failure", nil); err == nil || errdefs.IsValidation(err) {
			t.Fatalf("got %v, want a failure", err)
		}
	})
	t.Run("input", func(t *testing.T) {
		_, h, err := run(t, "tck-input-required", nil)
		if err == nil || len(h.Prompts()) != 1 || len(h.Checkpoints()) != 1 {
			t.Fatalf("err %v prompts %d checkpoints %d: want a checkpoint, a prompt and the host's refusal", err, len(h.Prompts()), len(h.Checkpoints()))
		}
	})
	t.Run("message response", func(t *testing.T) {
		b, _, _ := run(t, "tck-message-response", nil)
		if last(b).Metadata[model.MetaResponseKind] != "message" {
			t.Fatalf("metadata %v", last(b).Metadata)
		}
	})
	for _, c := range []struct {
		prefix string
		kind   model.PartType
	}{{"tck-artifact-text", model.PartText}, {"tck-artifact-file", model.PartFile}, {"tck-artifact-file-url", model.PartFile}, {"tck-artifact-data", model.PartData}} {
		t.Run(c.prefix, func(t *testing.T) {
			_, h, err := run(t, c.prefix, nil)
			as := artifacts(t, h)
			if err != nil || len(as) != 1 || as[0].Artifact.Parts[0].Type != c.kind || !as[0].LastChunk {
				t.Fatalf("err %v artifacts %+v", err, as)
			}
			if c.prefix == "tck-artifact-file-url" && as[0].Artifact.Parts[0].File.URL == "" {
				t.Fatal("want a URL file part")
			}
		})
	}
	t.Run("chunked", func(t *testing.T) {
		_, h, err := run(t, "tck-stream-chunked", nil)
		as := artifacts(t, h)
		if err != nil || len(as) != 4 || as[0].Append || !as[1].Append || !as[3].LastChunk || as[2].LastChunk {
			t.Fatalf("err %v chunks %+v", err, as)
		}
	})
	t.Run("long running", func(t *testing.T) {
		b, _, err := run(t, "tck-long-running", nil)
		if err != nil || last(b).Text() != "Long-running task completed" {
			t.Fatalf("%v %q", err, last(b).Text())
		}
	})
}
