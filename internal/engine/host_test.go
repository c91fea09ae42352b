package engine_test

import (
	"testing"

	"agentd/internal/engine"
	"agentd/internal/model"
)

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
