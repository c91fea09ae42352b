package strictjson

import (
	"encoding/json"
	"errors"
	"testing"
	"time"
)

type part struct {
	Type string `json:"type"`
	Text string `json:"text,omitempty"`
}

type inner struct {
	Role  string         `json:"role"`
	Parts []part         `json:"parts"`
	Meta  map[string]any `json:"metadata,omitempty"`
	Raw   json.RawMessage
}

type doc struct {
	Message *inner    `json:"message,omitempty"`
	Count   int       `json:"count,omitempty"`
	When    time.Time `json:"when,omitzero"`
}

func TestDecodeNamesThePath(t *testing.T) {
	cases := []struct {
		in, path, msg string
	}{
		{`{"mesage": {}}`, "mesage", `unknown field (did you mean "message"?)`},
		{`{"message": {"role": "user", "parts": [{"type": "text", "txt": "x"}]}}`, "message.parts[0].txt", `unknown field (did you mean "text"?)`},
		{`{"message": {"parts": [{"type": 3}]}}`, "message.parts.type", "expected a string, got a JSON number"},
		{`{"count": "three"}`, "count", "expected an integer, got a JSON string"},
		{`[1]`, "", "expected an object, got a JSON array"},
		{`{"count": 1} {}`, "", "unexpected data after the JSON object"},
		{`{"count": }`, "", "malformed JSON at line 1, column 11: invalid character '}' looking for beginning of value"},
		{`{"count": 1`, "", "malformed JSON: unexpected end of input"},
	}
	for _, c := range cases {
		var d doc
		err := Decode([]byte(c.in), &d)
		var pe *PathError
		if !errors.As(err, &pe) {
			t.Errorf("%s: got %v, want a *PathError", c.in, err)
			continue
		}
		if pe.Path != c.path || pe.Msg != c.msg {
			t.Errorf("%s:\n got path %q msg %q\nwant path %q msg %q", c.in, pe.Path, pe.Msg, c.path, c.msg)
		}
	}
}

func TestDecodeAcceptsFreeFormMembers(t *testing.T) {
	var d doc
	in := `{"message": {"role": "user", "parts": [], "metadata": {"anything": {"goes": [1]}}, "Raw": {"x": 1}}, "when": "2026-11-22T08:00:00Z"}`
	if err := Decode([]byte(in), &d); err != nil {
		t.Fatal(err)
	}
	if d.Message == nil || d.Message.Meta["anything"] == nil || string(d.Message.Raw) != `{"x": 1}` || d.When.IsZero() {
		t.Fatalf("decoded %+v", d.Message)
	}
}

func TestDistance(t *testing.T) {
	for _, c := range []struct {
		a, b string
		d    int
	}{{"", "", 0}, {"model", "modle", 2}, {"tools", "tool", 1}, {"abc", "xyz", 3}} {
		if got := Distance(c.a, c.b); got != c.d {
			t.Errorf("Distance(%q, %q) = %d, want %d", c.a, c.b, got, c.d)
		}
	}
}
