package engine_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"testing"

	"agentd/internal/engine"
	"agentd/internal/errdefs"
	"agentd/internal/event"
)

// sameEnvelope compares two envelopes but for their time.
func sameEnvelope(a, b event.Envelope) bool {
	return a.Subject == b.Subject && a.RunID == b.RunID && a.AgentID == b.AgentID && a.NodeID == b.NodeID &&
		a.ID == b.ID && len(a.Headers) == 0 && len(b.Headers) == 0 && bytes.Equal(a.Payload, b.Payload) &&
		!a.Time.IsZero() && !b.Time.IsZero()
}

func TestActorEventsMatchThePackageHelpers(t *testing.T) {
	ids := []struct{ run, actor string }{
		{"run-1", "agent"}, {"run.1", "agent.node.n1"}, {"", ""}, {"r *>", "a b.iter3"}, {"run", "x.node.y.iter2"},
	}
	details := []string{"", `{"iteration":1}`, ` { "a" : "<b>" } `, `{"tool":"calc","call_id":"c1"}`}
	errs := []error{nil, errors.New("boom"), errdefs.NotAvailablef("gone <now>")}
	deltas := []engine.StreamDeltaPayload{
		{Type: engine.StreamDeltaToken, Content: "hi <there>"},
		{Type: engine.StreamDeltaToolCall, ID: "c1", Name: "calc", Arguments: json.RawMessage(`{"x": 1}`)},
		{Type: engine.StreamDeltaToolResult, ToolCallID: "c1", Name: "calc", Content: "42", IsError: true, Cancelled: true},
		{Type: engine.StreamDeltaToken}, // invalid: both refuse it
	}
	for _, id := range ids {
		events := func(p *pubRecorder) *engine.ActorEvents {
			a := engine.NewActorEvents(p, id.run, id.actor)
			return &a
		}
		for _, d := range details {
			step := engine.StepInfo{Actor: id.actor, Kind: "model"}
			var raw json.RawMessage
			if d != "" {
				raw, step.Detail = json.RawMessage(d), json.RawMessage(d)
			}
			compare(t, "step start "+d,
				func(p *pubRecorder) error { return engine.PublishStepStart(t.Context(), p, id.run, step) },
				func(p *pubRecorder) error { return events(p).StepStart(t.Context(), "model", raw) })
			compare(t, "step complete "+d,
				func(p *pubRecorder) error { return engine.PublishStepComplete(t.Context(), p, id.run, step) },
				func(p *pubRecorder) error { return events(p).StepComplete(t.Context(), "model", raw) })
			for _, e := range errs {
				compare(t, "step error "+d,
					func(p *pubRecorder) error { return engine.PublishStepError(t.Context(), p, id.run, step, e) },
					func(p *pubRecorder) error { return events(p).StepError(t.Context(), "model", raw, e) })
			}
		}
		for _, delta := range deltas {
			compare(t, "delta "+string(delta.Type),
				func(p *pubRecorder) error { return engine.EmitStreamDelta(t.Context(), p, id.run, id.actor, delta) },
				func(p *pubRecorder) error { return events(p).Delta(t.Context(), delta) })
			compare(t, "token "+delta.Content,
				func(p *pubRecorder) error {
					return engine.EmitStreamToken(t.Context(), p, id.run, id.actor, delta.Content)
				},
				func(p *pubRecorder) error { return events(p).Token(t.Context(), delta.Content) })
		}
	}
}

// A step payload is json.Marshal output whatever detail it was given
// (compacted and escaped if need be).
func TestActorEventsStepPayloadsAreMarshalled(t *testing.T) {
	for _, d := range []string{"", `{"iteration":1}`, ` { "a" : "<b>" } `, "[1,\n2]"} {
		var p pubRecorder
		a := engine.NewActorEvents(&p, "run-1", "agent")
		if err := a.StepError(t.Context(), "model", json.RawMessage(d), errors.New("<boom>")); err != nil {
			t.Fatal(err)
		}
		env := p.envs[0]
		if enc, err := json.Marshal(env.Payload); err != nil || !bytes.Equal(enc, env.Payload) {
			t.Fatalf("detail %q: payload %s, json.Marshal makes %s (%v)", d, env.Payload, enc, err)
		}
	}
}

func TestActorEventsRefuseInvalidDetail(t *testing.T) {
	ev := engine.NewActorEvents(&pubRecorder{}, "run", "agent")
	err := ev.StepStart(t.Context(), "model", json.RawMessage(`{"a":`))
	want := engine.PublishStepStart(t.Context(), &pubRecorder{}, "run", engine.StepInfo{Actor: "agent", Kind: "model", Detail: json.RawMessage(`{"a":`)})
	if !errdefs.IsValidation(err) || err.Error() != want.Error() {
		t.Errorf("err = %v, want %v", err, want)
	}
}

// compare runs both publishers and checks they publish the same envelope
// or fail alike.
func compare(t *testing.T, what string, want, got func(p *pubRecorder) error) {
	t.Helper()
	pw, pg := &pubRecorder{}, &pubRecorder{}
	errW, errG := want(pw), got(pg)
	if (errW == nil) != (errG == nil) || errW != nil && errW.Error() != errG.Error() {
		t.Fatalf("%s: errors differ: %v, want %v", what, errG, errW)
	}
	if len(pw.envs) != len(pg.envs) {
		t.Fatalf("%s: published %d envelopes, want %d", what, len(pg.envs), len(pw.envs))
	}
	for i := range pw.envs {
		if !sameEnvelope(pw.envs[i], pg.envs[i]) {
			t.Fatalf("%s: published\n%+v\nwant\n%+v", what, pg.envs[i], pw.envs[i])
		}
	}
}
