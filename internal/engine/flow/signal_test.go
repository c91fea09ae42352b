package flow_test

import (
	"context"
	"strings"
	"testing"

	"agentd/internal/engine"
	"agentd/internal/engine/enginetest"
	"agentd/internal/errdefs"
)

// startBlocked starts eng on a host whose AskUser waits for its context,
// and returns once the run waits for its first answer.
func startBlocked(t *testing.T, eng engine.Engine) (*enginetest.RecordingHost, <-chan error, func() *engine.Board) {
	t.Helper()
	h := enginetest.NewRecordingHost()
	asked := make(chan struct{}, 1)
	h.AskUserFn = func(ctx context.Context, p engine.UserPrompt) (engine.UserReply, error) {
		select {
		case asked <- struct{}{}:
		default:
		}
		return waitForever(ctx, p)
	}
	done := make(chan error, 1)
	var board *engine.Board
	go func() {
		b, err := eng.Execute(t.Context(), engine.Run{ID: "r"}, h, userBoard("go"))
		board = b
		done <- err
	}()
	<-asked
	return h, done, func() *engine.Board { return board }
}

// Signals raised while a node waits: a cancel goes to on_signal.interrupt
// and the flow says goodbye and completes; a drain goes to the entry's
// on_signal_default.shutdown; a handler that would wait for input ends
// the run with the interrupt; an unhandled cancel ends it with the
// interrupt, named as unhandled.
func TestSignals(t *testing.T) {
	reg := registry(t, &effects{})
	withHandlers := newEngine(t, compile(t, "signals", reg), reg)
	askAgain, _ := oneFile(t, `
nodes:
  - {id: start, wait: true, on_interrupt: sure, to: done}
  - {id: sure, input_type: confirm, content: "Really leave?", to: done}
  - {id: done, content: done}`)
	bare, _ := oneFile(t, `
nodes:
  - {id: start, wait: true, to: done}
  - {id: done, content: done}`)
	tests := []struct {
		name string
		eng  engine.Engine
		intr engine.Interrupt
		said string
		err  string // "" for success
	}{
		{name: "cancel goes to the interrupt handler", eng: withHandlers, intr: engine.Interrupt{Cause: engine.CauseUserCancel},
			said: "Goodbye, and thanks for your time."},
		{name: "drain goes to the default shutdown handler", eng: withHandlers, intr: engine.Interrupt{Cause: engine.CauseHostShutdown},
			said: "State saved; see you on another replica."},
		{name: "a handler that waits for input ends the run", eng: askAgain, intr: engine.Interrupt{Cause: engine.CauseUserCancel},
			err: `node "sure" waits for input after a cancel: interrupted: user_cancel`},
		{name: "an unhandled cancel", eng: bare, intr: engine.Interrupt{Cause: engine.CauseUserCancel, Detail: "bye"},
			err: `node "start": unhandled signal "interrupt": interrupted: user_cancel: bye`},
		{name: "an unhandled drain", eng: bare, intr: engine.Interrupt{Cause: engine.CauseHostShutdown},
			err: `interrupted: host_shutdown`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h, done, board := startBlocked(t, tc.eng)
			h.Fire(tc.intr)
			err := <-done
			if tc.err == "" && err != nil || tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)) {
				t.Fatalf("err = %v, want %q", err, tc.err)
			}
			if tc.err != "" && !errdefs.IsInterrupted(err) {
				t.Errorf("err %v is not an interrupt", err)
			}
			if s := said(board()); tc.said != "" && (len(s) == 0 || s[len(s)-1] != tc.said) {
				t.Errorf("said %q, want %q", s, tc.said)
			}
		})
	}
}

// A drain's handler may ask (the run parks and resumes elsewhere), and
// once the user answers, the handlers are armed again.
func TestDrainHandlerAsks(t *testing.T) {
	eng, _ := oneFile(t, `
nodes:
  - {id: start, wait: true, on_signal: {shutdown: resume}, to: done}
  - {id: resume, wait: true, content: "Still there?", to: done}
  - {id: done, content: done}`)
	h := enginetest.NewRecordingHost()
	asked := make(chan struct{})
	h.AskUserFn = func(ctx context.Context, p engine.UserPrompt) (engine.UserReply, error) {
		if p.Parts[0].Text == "Still there?" {
			return *replyOf("yes"), nil
		}
		close(asked)
		return waitForever(ctx, p)
	}
	done := make(chan error, 1)
	go func() {
		_, err := eng.Execute(t.Context(), engine.Run{ID: "r"}, h, userBoard("go"))
		done <- err
	}()
	<-asked
	h.Fire(engine.Interrupt{Cause: engine.CauseHostShutdown})
	if err := <-done; err != nil {
		t.Fatalf("err = %v, want the handler's question answered and the flow done", err)
	}
	if n := len(h.Prompts()); n != 2 {
		t.Errorf("%d prompts, want 2", n)
	}
}
