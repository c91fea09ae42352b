package engine_test

import (
	"context"
	"strings"
	"testing"

	"agentd/internal/engine"
	"agentd/internal/errdefs"
	"agentd/internal/model"
)

func TestHostFuncsFallsBackToNoop(t *testing.T) {
	var h engine.Host = engine.HostFuncs{}
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

// logHost is a middleware that records the order calls pass through it.
func logHost(name string, log *[]string) engine.HostMiddleware {
	return func(inner engine.Host) engine.Host {
		return engine.HostFuncs{Inner: inner, PublishFn: func(ctx context.Context, ev engine.Event) error {
			*log = append(*log, name)
			return inner.Publish(ctx, ev)
		}}
	}
}

func TestComposeHostFirstIsOutermost(t *testing.T) {
	var log []string
	base := engine.HostFuncs{
		PublishFn: func(context.Context, engine.Event) error { log = append(log, "base"); return nil },
		AskUserFn: func(context.Context, engine.UserPrompt) (engine.UserReply, error) {
			return engine.UserReply{Parts: []model.Part{model.TextPart("yes")}}, nil
		},
	}
	h := engine.ComposeHost(base, logHost("A", &log), nil, logHost("B", &log))
	if err := h.Publish(t.Context(), engine.Token{Text: "x"}); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(log, ","); got != "A,B,base" {
		t.Errorf("call order %s, want A,B,base", got)
	}
	// Undecorated methods pass through every layer unchanged.
	if r, err := h.AskUser(t.Context(), engine.UserPrompt{}); err != nil || r.Text() != "yes" {
		t.Errorf("AskUser through middlewares = %q, %v", r.Text(), err)
	}
	if got := engine.ComposeHost(base); got == nil {
		t.Errorf("ComposeHost without middleware returned nil")
	}
}

func TestHostOnContext(t *testing.T) {
	if _, ok := engine.HostFromContext(t.Context()); ok {
		t.Errorf("host found on a bare context")
	}
	if ctx := engine.WithHost(t.Context(), nil); ctx != t.Context() {
		t.Errorf("WithHost(nil) changed the context")
	}
	h := engine.NoopHost{}
	got, ok := engine.HostFromContext(engine.WithHost(t.Context(), h))
	if !ok || got != engine.Host(h) {
		t.Errorf("HostFromContext = %v, %v", got, ok)
	}
}

func TestUserReplyText(t *testing.T) {
	data, _ := model.DataPart(map[string]int{"n": 1})
	r := engine.UserReply{Parts: []model.Part{model.TextPart("a"), data, model.TextPart("b")}}
	if got := r.Text(); got != "ab" {
		t.Errorf("Text() = %q", got)
	}
}

func TestNoopCheckpointStore(t *testing.T) {
	var s engine.CheckpointStore = engine.NoopCheckpointStore{}
	if err := s.Save(t.Context(), engine.Checkpoint{ExecID: "r"}); err != nil {
		t.Fatal(err)
	}
	if cp, err := s.Load(t.Context(), "r"); cp != nil || err != nil {
		t.Errorf("Load = %v, %v; want nil, nil", cp, err)
	}
}
