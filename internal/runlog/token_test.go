package runlog

import (
	"encoding/json"
	"testing"
)

// deltaShape is the body TokenLiterals is made for: a delta event's data
// as the run log writes it.
type deltaShape struct {
	RunID string `json:"run_id"`
	Seq   int64  `json:"seq"`
	Type  string `json:"type"`
	Actor string `json:"actor,omitempty"`
	Text  string `json:"text,omitempty"`
}

// FuzzTokenLiterals: whatever the actor and text, TokenLiterals either
// refuses the body or returns literals that decode to what encoding/json
// decodes.
func FuzzTokenLiterals(f *testing.F) {
	for _, s := range [][2]string{{"assistant", "It"}, {"a/b", ` "text":"x"`}, {`x","text":"y`, "\u2028<&>\\"}, {"", "t"}, {"a", ""}, {"é", "\x00"}} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, actor, text string) {
		body, err := json.Marshal(deltaShape{RunID: "r", Seq: 1, Type: "delta", Actor: actor, Text: text})
		if err != nil {
			t.Skip()
		}
		a, b, ok := TokenLiterals(body)
		if !ok {
			return // the faces' decoding path reads it
		}
		var want deltaShape
		if err := json.Unmarshal(body, &want); err != nil {
			t.Fatal(err)
		}
		var gotA, gotB string
		if json.Unmarshal(a, &gotA) != nil || json.Unmarshal(b, &gotB) != nil || gotA != want.Actor || gotB != want.Text {
			t.Fatalf("%s: got %s %s, want %q %q", body, a, b, want.Actor, want.Text)
		}
	})
}

func TestTokenLiteralsRefusesOtherShapes(t *testing.T) {
	for _, body := range []string{
		`{"actor":"a","text":"b"}`,             // no comma before actor: not a later member
		`{"x":1,"actor":"a","text":"b","y":2}`, // text is not last
		`{"x":1,"text":"b","actor":"a"}`,       // wrong order
		`{"x":1,"actor":7,"text":"b"}`,         // actor not a string
		`{"x":1,"actor":"a","text":"b\u0"}`,    // broken escape
		`{"x":1,"actor":"a","text":""}`,        // empty text
	} {
		if _, _, ok := TokenLiterals([]byte(body)); ok {
			t.Errorf("%s: accepted", body)
		}
	}
	a, b, ok := TokenLiterals([]byte(`{"run_id":"r","actor":"as\"x","text":"hi \u00e9"}`))
	if !ok || string(a) != `"as\"x"` || string(b) != `"hi \u00e9"` {
		t.Fatalf("a delta: %s %s %v", a, b, ok)
	}
}
