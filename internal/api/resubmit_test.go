package api_test

import (
	"bytes"
	"net/http"
	"testing"

	"agentd/internal/api"
)

// A retried streaming send (same message id, same context) replays the
// run it started from the first event, even after the run ended; the same
// id on other text is a 409 naming message.id.
func TestRetriedStreamingSendReplaysTheRun(t *testing.T) {
	e := newEnv(t, api.Options{})
	first := e.send("echo", "", map[string]any{"message": map[string]any{"id": "m1", "role": "user", "parts": []any{map[string]any{"type": "text", "text": "hello there"}}}})
	retry := map[string]any{"context_id": first.ContextID, "message": map[string]any{"id": "m1", "role": "user", "parts": []any{map[string]any{"type": "text", "text": "hello there"}}}}
	r := e.do(http.MethodPost, "/v1/agents/echo/messages?stream=true", retry)
	if r.status != http.StatusOK {
		t.Fatalf("retry: %s", r)
	}
	evs := newSSE(bytes.NewReader(r.body)).readAll(t)
	checkDense(t, evs)
	if evs[0].dseq != 1 || tokens(evs) != "hello there" {
		t.Fatalf("retry streamed from seq %d the text %q, want the whole run", evs[0].dseq, tokens(evs))
	}
	if v := e.run(first.ID); len(v.Messages) != 2 {
		t.Fatalf("the retry added messages: %d, want 2", len(v.Messages))
	}
	other := map[string]any{"context_id": first.ContextID, "message": map[string]any{"id": "m1", "role": "user", "parts": []any{map[string]any{"type": "text", "text": "DIFFERENT"}}}}
	p := decode[api.Problem](t, e.do(http.MethodPost, "/v1/agents/echo/messages", other), http.StatusConflict)
	if p.Field != "message.id" {
		t.Fatalf("reused id: %+v, want a 409 on message.id", p)
	}
}
