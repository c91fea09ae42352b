package runtime

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"

	"agentd/internal/engine"
	"agentd/internal/event"
	"agentd/internal/runlog"
)

// TestTokenBodyMatchesDecodedDelta checks the token fast path against the
// general one: the same delta, whatever the text.
func TestTokenBodyMatchesDecodedDelta(t *testing.T) {
	texts := []string{"hello", " tok1", `q"uote\`, "tab\t<b>&", "é ✓ 🎉", "bad \xff utf8", "sep\u2028"}
	for _, actor := range []string{"echo", "echo_iter1", "a-b:c"} {
		for _, text := range texts {
			payload, err := json.Marshal(engine.StreamDeltaPayload{Type: engine.StreamDeltaToken, Content: text})
			if err != nil {
				t.Fatal(err)
			}
			rest := "stream." + actor + ".delta"
			fast, ok := tokenBody(rest, payload)
			if !ok {
				t.Fatalf("tokenBody(%q, %s): fast path not taken", rest, payload)
			}
			d, err := engine.DecodeStreamDelta(envelopeFor(payload))
			if err != nil {
				t.Fatal(err)
			}
			slow, err := encodeDelta(actor, d)
			if err != nil {
				t.Fatal(err)
			}
			var a, b DeltaData
			if err := json.Unmarshal(runlogJSON(fast), &a); err != nil {
				t.Fatalf("fast body %s: %v", fast, err)
			}
			if err := json.Unmarshal(slow, &b); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(a, b) {
				t.Fatalf("fast body %s decodes to %+v, the general path's %s to %+v", runlogJSON(fast), a, slow, b)
			}
		}
	}
	for _, tc := range []struct{ rest, payload string }{
		{"stream.echo.delta", `{"type":"tool_call","id":"c","name":"n"}`},
		{"stream.echo.delta", `{"type":"token","content":""}`},
		{"stream.e\"cho.delta", `{"type":"token","content":"x"}`},
		{"step.echo.start", `{"type":"token","content":"x"}`},
		{"stream..delta", `{"type":"token","content":"x"}`},
	} {
		if body, ok := tokenBody(tc.rest, []byte(tc.payload)); ok {
			t.Errorf("tokenBody(%q, %s) = %s, want the general path", tc.rest, tc.payload, runlogJSON(body))
		}
	}
}

func envelopeFor(payload []byte) event.Envelope {
	return event.Envelope{Subject: engine.SubjectStreamDelta("run-1", "echo"), Payload: payload}
}

// TestStepBodyMatchesEncodedStep checks the step fast path against the
// general one, byte for byte, and that it declines what it cannot splice
// unchanged.
func TestStepBodyMatchesEncodedStep(t *testing.T) {
	for _, payload := range []string{
		`{"run_id":"r","actor":"echo","kind":"model","detail":{"iteration":1}}`,
		`{"error":"\u003cb\u003ebad\u003c/b\u003e \u0026 \"worse\"","detail":{"é":"✓"}}`,
		`{}`,
	} {
		slow, err := encodeBody(StepData{Actor: "echo", Payload: json.RawMessage(payload)})
		if err != nil {
			t.Fatal(err)
		}
		for _, marshalled := range []bool{false, true} { // checked, or vouched for
			fast, ok := stepBody("echo", []byte(payload), marshalled)
			if !ok {
				t.Fatalf("stepBody(%s, %v): fast path not taken", payload, marshalled)
			}
			if got := runlogJSON(fast); !bytes.Equal(got, slow) {
				t.Fatalf("fast body %s, general path %s", got, slow)
			}
		}
	}
	for _, tc := range []struct{ actor, payload string }{
		{"echo", "{\"a\":\n1}"},                // would break an SSE data line
		{"echo", `{"a": 1}`},                   // json.Marshal would compact it
		{"echo", `{"error":"<b>bad</b> & x"}`}, // … or escape it
		{"echo", `{"a":`},                      // not JSON
		{"echo", ``},
		{`e"cho`, `{}`},
	} {
		if body, ok := stepBody(tc.actor, []byte(tc.payload), false); ok {
			t.Errorf("stepBody(%q, %q) = %s, want the general path", tc.actor, tc.payload, runlogJSON(body))
		}
	}
}

func runlogJSON(b runlog.Body) []byte { return b.JSON() }
