package loop_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"agentd/internal/engine"
	"agentd/internal/engine/enginetest"
	"agentd/internal/engine/loop"
	"agentd/internal/errdefs"
	"agentd/internal/llm"
	"agentd/internal/llm/scripted"
	"agentd/internal/model"
	"agentd/internal/tool"
)

// result is what an Execute running in the background returned.
type result struct {
	board *engine.Board
	err   error
}

// startBlocked runs the "block" script (one token, then a minute's wait)
// in the background and returns once its first token is published.
func startBlocked(t *testing.T, ctx context.Context, host *enginetest.RecordingHost) <-chan result {
	t.Helper()
	eng := newEngine(t, loop.Config{})
	done := make(chan result, 1)
	go func() {
		b, err := eng.Execute(ctx, engine.Run{ID: "run-block"}, host, userBoard("block"))
		done <- result{b, err}
	}()
	waitFor(t, host, "the first token", isToken)
	return done
}

func TestInterruptMidStreamKeepsPartialText(t *testing.T) {
	host := enginetest.NewRecordingHost()
	done := startBlocked(t, t.Context(), host)
	sent := engine.Interrupt{Cause: engine.CauseUserInput, Detail: "barge-in"}
	host.Fire(sent)
	res := <-done

	var ie engine.InterruptedError
	if !errors.As(res.err, &ie) || ie.Interrupt != sent {
		t.Fatalf("err = %v, want Interrupted(%+v)", res.err, sent)
	}
	msgs := res.board.Channel(engine.MainChannel)
	last := msgs[len(msgs)-1]
	if last.Role != model.RoleAssistant || last.Text() != "tok1" || last.Metadata[loop.MetadataPartial] != true || last.ID == "" {
		t.Errorf("last message = %+v, want the partial assistant text %q marked partial", last, "tok1")
	}
	if n := len(host.Checkpoints()); n != 0 {
		t.Errorf("an interrupted first turn wrote %d checkpoint(s); the iteration never completed", n)
	}
}

func TestCancelMidStreamReturnsCtxErr(t *testing.T) {
	host := enginetest.NewRecordingHost()
	ctx, cancel := context.WithCancel(t.Context())
	done := startBlocked(t, ctx, host)
	cancel()
	res := <-done
	if !errors.Is(res.err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", res.err)
	}
	evs := host.Events()
	if last, ok := evs[len(evs)-1].(engine.StepFailed); !ok || !errors.Is(last.Err, context.Canceled) {
		t.Errorf("last event %s, want the model step failing with the cancellation", enginetest.Describe(evs[len(evs)-1]))
	}
}

// An interrupt that arrives while tools run lets the running call finish,
// answers the calls not yet started as not run, checkpoints the complete
// iteration and then stops.
func TestInterruptDuringToolsAnswersEveryCall(t *testing.T) {
	host := enginetest.NewRecordingHost()
	cnt := &counter{}
	stopper := tool.New(tool.Spec{Name: "stopper", Description: "asks the host to stop the run"},
		func(ctx context.Context, _ json.RawMessage) (tool.Result, error) {
			host.Fire(engine.Interrupt{Cause: engine.CauseHostShutdown})
			<-ctx.Done() // the loop cancels running tools on an interrupt
			return tool.Text("stopped"), nil
		})
	prov := newScripted(t, scripted.Rule{Prefix: "go", ToolCalls: []scripted.ToolCall{{Name: "stopper"}, {Name: "counter"}}})
	eng := newEngine(t, loop.Config{Provider: prov, Tools: registry(t, cnt, stopper), ToolNames: []string{"stopper", "counter"}})

	out, err := execute(t, eng, engine.Run{ID: "run-stop"}, userBoard("go"), host)
	if !errdefs.IsInterrupted(err) {
		t.Fatalf("err = %v, want an interrupt", err)
	}
	if n := cnt.calls.Load(); n != 0 {
		t.Errorf("the call after the interrupt ran %d times", n)
	}
	msgs := out.Channel(engine.MainChannel)
	if got := roles(msgs); got != "user assistant tool tool" {
		t.Fatalf("main channel roles = %q, want both calls answered", got)
	}
	if r := msgs[3].Parts[0].ToolResult; !r.IsError || !strings.Contains(r.Content, "not run") {
		t.Errorf("result of the call never started = %+v", r)
	}
	if cps := host.Checkpoints(); len(cps) != 1 || cps[0].Step != "iter:1" {
		t.Errorf("checkpoints = %v, want iter:1 so a resume does not repeat the calls", steps(cps))
	}
}

func TestProviderErrorsKeepTheirClass(t *testing.T) {
	tests := []struct {
		name  string
		prov  funcProvider
		class errdefs.Class
		turn  string
	}{
		{
			name: "rate limited before the first chunk",
			prov: func(context.Context, llm.Request) (llm.Stream, error) {
				return nil, errdefs.RateLimitf("429 from the model")
			},
			class: errdefs.ClassRateLimit, turn: "model turn 1",
		},
		{
			name: "unauthorized",
			prov: func(context.Context, llm.Request) (llm.Stream, error) {
				return nil, errdefs.Unauthorizedf("bad key")
			},
			class: errdefs.ClassUnauthorized, turn: "model turn 1",
		},
		{
			name: "idle timeout mid-stream",
			prov: func(context.Context, llm.Request) (llm.Stream, error) {
				return &chunkStream{chunks: []llm.Chunk{{Text: "half an"}}, err: errdefs.Timeoutf("no chunk for 30s")}, nil
			},
			class: errdefs.ClassTimeout, turn: "model turn 1",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			host := enginetest.NewRecordingHost()
			out, err := execute(t, newEngine(t, loop.Config{Provider: tc.prov}), engine.Run{ID: "run-err"}, userBoard("hi"), host)
			if errdefs.ClassOf(err) != tc.class || !strings.Contains(fmtErr(err), tc.turn) {
				t.Errorf("err = %v (class %q), want class %q mentioning %q", err, errdefs.ClassOf(err), tc.class, tc.turn)
			}
			msgs := out.Channel(engine.MainChannel)
			if last := msgs[len(msgs)-1]; last.Role == model.RoleAssistant && last.Metadata[loop.MetadataPartial] != true {
				t.Errorf("a failed turn left a non-partial assistant message: %+v", last)
			}
		})
	}
}

func fmtErr(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// pollingStream streams tokens for as long as its context allows,
// checking Err between chunks and never blocking on Done.
type pollingStream struct{ ctx context.Context }

func (s pollingStream) Next() (llm.Chunk, error) {
	if err := s.ctx.Err(); err != nil {
		return llm.Chunk{}, err
	}
	return llm.Chunk{Text: "x"}, nil
}

func (pollingStream) Close() error { return nil }

// A provider that only polls Err is stopped by an interrupt too.
func TestInterruptReachesAPollingProvider(t *testing.T) {
	host := enginetest.NewRecordingHost()
	prov := funcProvider(func(ctx context.Context, _ llm.Request) (llm.Stream, error) { return pollingStream{ctx}, nil })
	eng := newEngine(t, loop.Config{Provider: prov})
	done := make(chan result, 1)
	go func() {
		b, err := eng.Execute(t.Context(), engine.Run{ID: "run-poll"}, host, userBoard("hi"))
		done <- result{b, err}
	}()
	waitFor(t, host, "the first token", isToken)
	host.Fire(engine.Interrupt{Cause: engine.CauseUserCancel})
	res := <-done
	if !errdefs.IsInterrupted(res.err) {
		t.Fatalf("err = %v, want an interrupt", res.err)
	}
	msgs := res.board.Channel(engine.MainChannel)
	if last := msgs[len(msgs)-1]; last.Metadata[loop.MetadataPartial] != true || !strings.HasPrefix(last.Text(), "x") {
		t.Errorf("last message = %+v, want the partial text", last)
	}
}

// An interrupt waiting before the run starts stops it before the first
// model turn.
func TestInterruptBeforeTheFirstTurn(t *testing.T) {
	host := enginetest.NewRecordingHost()
	host.Fire(engine.Interrupt{Cause: engine.CauseHostShutdown})
	out, err := execute(t, newEngine(t, loop.Config{}), engine.Run{ID: "run-early"}, userBoard("say"), host)
	if !errdefs.IsInterrupted(err) {
		t.Fatalf("err = %v, want an interrupt", err)
	}
	if got := roles(out.Channel(engine.MainChannel)); got != "user" {
		t.Errorf("main channel roles = %q, want no model turn", got)
	}
}
