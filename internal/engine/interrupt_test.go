package engine_test

import (
	"errors"
	"fmt"
	"testing"

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
