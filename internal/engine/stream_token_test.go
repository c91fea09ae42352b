package engine_test

import (
	"bytes"
	"context"
	"encoding/json"
	"math/rand/v2"
	"testing"

	"agentd/internal/engine"
	"agentd/internal/event"
)

// tokenTexts covers every escaping rule of encoding/json's strings.
var tokenTexts = []string{
	"hello", " tok1", `quote " and \ backslash`, "tab\tnew\nline\rcr\bbs\fff",
	"ctl \x00\x01\x1f\x7f", "<html> & more", "line\u2028sep\u2029par", "héllo wörld ✓ 🎉",
	"bad utf8 \xff\xfe end", "truncated \xe2\x82", "/slash/", "\u00e9\u0301",
}

// randomTexts adds strings of random bytes and runes.
func randomTexts(n int) []string {
	r := rand.New(rand.NewPCG(1, 2))
	out := make([]string, n)
	for i := range out {
		b := make([]byte, r.IntN(24)+1)
		for j := range b {
			b[j] = byte(r.IntN(256))
		}
		if i%2 == 0 {
			out[i] = string(b)
		} else {
			rs := make([]rune, len(b))
			for j := range rs {
				rs[j] = rune(r.IntN(0x2100))
			}
			out[i] = string(rs)
		}
	}
	return out
}

func TestTokenPayloadIsWhatJSONEncodes(t *testing.T) {
	for _, text := range append(tokenTexts, randomTexts(2000)...) {
		want, err := json.Marshal(engine.StreamDeltaPayload{Type: engine.StreamDeltaToken, Content: text})
		if err != nil {
			t.Fatal(err)
		}
		for name, emit := range map[string]func(p *pubRecorder) error{
			"EmitStreamToken": func(p *pubRecorder) error { return engine.EmitStreamToken(t.Context(), p, "run-1", "agent", text) },
			"TokenStream":     func(p *pubRecorder) error { return engine.NewTokenStream(p, "run-1", "agent").Emit(t.Context(), text) },
		} {
			p := &pubRecorder{}
			if err := emit(p); err != nil {
				t.Fatalf("%s(%q): %v", name, text, err)
			}
			if got := p.last(t).Payload; !bytes.Equal(got, want) {
				t.Fatalf("%s(%q) payload\n got %s\nwant %s", name, text, got, want)
			}
		}
	}
}

func TestTokenStreamMatchesEmitStreamToken(t *testing.T) {
	a, b := &pubRecorder{}, &pubRecorder{}
	if err := engine.EmitStreamToken(t.Context(), a, "run.1", "agent.node.n1", "hi"); err != nil {
		t.Fatal(err)
	}
	if err := engine.NewTokenStream(b, "run.1", "agent.node.n1").Emit(t.Context(), "hi"); err != nil {
		t.Fatal(err)
	}
	x, y := a.last(t), b.last(t)
	x.Time, y.Time = y.Time, x.Time
	if x.Subject != y.Subject || x.RunID != y.RunID || x.AgentID != y.AgentID || x.NodeID != y.NodeID || !bytes.Equal(x.Payload, y.Payload) {
		t.Fatalf("TokenStream published %+v, EmitStreamToken %+v", y, x)
	}
	if err := engine.NewTokenStream(b, "run.1", "agent").Emit(t.Context(), ""); err == nil {
		t.Fatal("empty token: got nil error, want a validation error")
	}
}

func BenchmarkEmitToken(b *testing.B) {
	p := &discard{}
	b.Run("EmitStreamToken", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_ = engine.EmitStreamToken(b.Context(), p, "run-1", "agent", " tok42")
		}
	})
	b.Run("TokenStream", func(b *testing.B) {
		s := engine.NewTokenStream(p, "run-1", "agent")
		b.ReportAllocs()
		for b.Loop() {
			_ = s.Emit(b.Context(), " tok42")
		}
	})
}

// discard is a Publisher that keeps nothing.
type discard struct{}

func (discard) Publish(context.Context, event.Envelope) error { return nil }
