package enginetest

import (
	"testing"

	"agentd/internal/engine"
	"agentd/internal/errdefs"
	"agentd/internal/model"
)

func TestHostFuncsFallsBackToNoop(t *testing.T) {
	var h engine.Host = HostFuncs{}
	ctx := t.Context()
	if err := h.Publish(ctx, engine.Token{Text: "x"}); err != nil {
		t.Errorf("Publish: %v", err)
	}
	if h.Interrupts() != nil {
		t.Errorf("Interrupts not nil")
	}
	if _, err := h.AskUser(ctx, engine.UserPrompt{}); !errdefs.IsNotAvailable(err) {
		t.Errorf("AskUser: %v, want NotAvailable", err)
	}
	if err := h.Checkpoint(ctx, engine.Checkpoint{}); err != nil {
		t.Errorf("Checkpoint: %v", err)
	}
	if err := h.ReportUsage(ctx, "", model.TokenUsage{}); err != nil {
		t.Errorf("ReportUsage: %v", err)
	}
}
