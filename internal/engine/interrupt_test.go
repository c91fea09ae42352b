package engine_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"agentd/internal/engine"
	"agentd/internal/errdefs"
)

func TestInterruptedError(t *testing.T) {
	sent := engine.Interrupt{Cause: engine.CauseHostShutdown, Detail: "drain"}
	err := fmt.Errorf("step 3: %w", engine.Interrupted(sent))
	if !errdefs.IsInterrupted(err) {
		t.Fatalf("IsInterrupted(%v) = false", err)
	}
	var ie engine.InterruptedError
	if !errors.As(err, &ie) || ie.Interrupt != sent {
		t.Fatalf("errors.As gave %+v, want %+v", ie, sent)
	}
	if got := err.Error(); got != "step 3: interrupted: host_shutdown: drain" {
		t.Errorf("message %q", got)
	}
	if got := engine.Interrupted(engine.Interrupt{}).Error(); got != "interrupted" {
		t.Errorf("zero interrupt message %q", got)
	}
}

// recv waits for a value or closure on ch with a deadline.
func recv(t *testing.T, ch <-chan engine.Interrupt) (engine.Interrupt, bool) {
	t.Helper()
	select {
	case v, ok := <-ch:
		return v, ok
	case <-time.After(5 * time.Second):
		t.Fatal("timed out waiting on the merged channel")
		return engine.Interrupt{}, false
	}
}

func TestMergeInterruptsForwardsAndClosesWhenSourcesClose(t *testing.T) {
	a, b := make(chan engine.Interrupt), make(chan engine.Interrupt)
	out := engine.MergeInterrupts(t.Context(), a, nil, b)
	a <- engine.Interrupt{Cause: engine.CauseUserCancel}
	if got, _ := recv(t, out); got.Cause != engine.CauseUserCancel {
		t.Errorf("got %v", got)
	}
	b <- engine.Interrupt{Cause: engine.CauseHostShutdown}
	if got, _ := recv(t, out); got.Cause != engine.CauseHostShutdown {
		t.Errorf("got %v", got)
	}
	close(a)
	close(b)
	if _, ok := recv(t, out); ok {
		t.Errorf("merged channel open after every source closed")
	}
}

func TestMergeInterruptsClosesOnCtxDone(t *testing.T) {
	for _, sources := range [][]<-chan engine.Interrupt{
		{make(chan engine.Interrupt)}, // a source that never closes
		nil,                           // no source at all
		{nil, nil},                    // only nil sources
	} {
		ctx, cancel := context.WithCancel(t.Context())
		out := engine.MergeInterrupts(ctx, sources...)
		select {
		case <-out:
			t.Fatalf("merge of %d sources closed before ctx ended", len(sources))
		default:
		}
		cancel()
		if _, ok := recv(t, out); ok {
			t.Errorf("merge of %d sources delivered a value after cancel", len(sources))
		}
	}
}
