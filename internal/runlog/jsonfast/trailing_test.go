package jsonfast

import (
	"encoding/json"
	"testing"
)

// deltaShape is the object TrailingStrings is made for: a delta event's
// data as the run log writes it.
type deltaShape struct {
	RunID string `json:"run_id"`
	Seq   int64  `json:"seq"`
	Type  string `json:"type"`
	Actor string `json:"actor,omitempty"`
	Text  string `json:"text,omitempty"`
}

func FuzzTrailingStrings(f *testing.F) {
	for _, s := range [][2]string{{"assistant", "It"}, {"a/b", ` "text":"x"`}, {`x","text":"y`, "\u2028<&>\\"}, {"", "t"}, {"a", ""}} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, actor, text string) {
		obj, err := json.Marshal(deltaShape{RunID: "r", Seq: 1, Type: "delta", Actor: actor, Text: text})
		if err != nil {
			t.Skip()
		}
		a, b, ok := TrailingStrings(obj, "actor", "text")
		var want deltaShape
		if err := json.Unmarshal(obj, &want); err != nil {
			t.Fatal(err)
		}
		if !ok {
			return // the slow path reads it
		}
		gotA, okA := Unquote(a)
		gotB, okB := Unquote(b)
		if !okA || !okB || gotA != want.Actor || gotB != want.Text {
			t.Fatalf("%s: got %q %q, want %q %q", obj, gotA, gotB, want.Actor, want.Text)
		}
	})
}

func TestTrailingStringsRefuses(t *testing.T) {
	for _, obj := range []string{
		`{"actor":"a","text":"b"}`,             // no comma before actor: not a later member
		`{"x":1,"actor":"a","text":"b","y":2}`, // text is not last
		`{"x":1,"text":"b","actor":"a"}`,       // wrong order
		`{"x":1,"actor":7,"text":"b"}`,         // actor not a string
		`{"x":1,"actor":"a","text":"b\u0"}`,    // broken escape
	} {
		if _, _, ok := TrailingStrings([]byte(obj), "actor", "text"); ok {
			t.Errorf("%s: accepted", obj)
		}
	}
	a, b, ok := TrailingStrings([]byte(`{"run_id":"r","actor":"as\"x","text":"hi \u00e9"}`), "actor", "text")
	if !ok {
		t.Fatal("refused a delta")
	}
	if s, _ := Unquote(a); s != `as"x` {
		t.Errorf("actor %q", s)
	}
	if s, _ := Unquote(b); s != "hi é" {
		t.Errorf("text %q", s)
	}
}
