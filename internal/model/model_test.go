package model

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"
)

func sample() Message {
	data, _ := DataPart(map[string]any{"k": []any{1.5, "two"}})
	return Message{
		ID: "m1", Role: RoleAssistant, Name: "echo",
		Parts: []Part{
			TextPart("hello"),
			data,
			FileBytesPart("a.bin", "application/octet-stream", []byte{0, 1, 2, 255}),
			FileURLPart("b.txt", "text/plain", "https://example.com/b.txt"),
			ToolCallPart(ToolCall{ID: "c1", Name: "calculator", Arguments: json.RawMessage(`{"expression":"1+2"}`)}),
			ToolResultPart(ToolResult{ToolCallID: "c1", Name: "calculator", Content: "3", IsError: true}),
			{Type: PartText, Text: "with meta", Metadata: map[string]any{"nested": map[string]any{"a": true}}},
		},
		Metadata:  map[string]any{"trace": "t1"},
		CreatedAt: time.Date(2026, 11, 22, 8, 0, 0, 123000000, time.UTC),
	}
}

func TestMessageJSONRoundTrip(t *testing.T) {
	in := sample()
	b, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	var out Message
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	b2, _ := json.Marshal(out)
	if string(b) != string(b2) {
		t.Fatalf("round trip changed the JSON:\n%s\n%s", b, b2)
	}
	if !reflect.DeepEqual(in.Parts[2].File.Bytes, out.Parts[2].File.Bytes) || !out.CreatedAt.Equal(in.CreatedAt) {
		t.Fatal("file bytes or time lost in the round trip")
	}
	for i, p := range out.Parts {
		if err := p.Validate(); err != nil {
			t.Fatalf("part %d invalid after round trip: %v", i, err)
		}
	}
	if strings.Contains(string(b), "created_at\":\"0001") {
		t.Fatal("zero times must be omitted")
	}
}

func TestPartValidate(t *testing.T) {
	bad := []struct {
		p      Part
		member string
	}{
		{Part{Type: PartText}, "text"},
		{Part{Type: PartText, Text: "x", Data: json.RawMessage(`1`)}, "data"},
		{Part{Type: PartData, Data: json.RawMessage(`{`)}, "data"},
		{Part{Type: PartData}, "data"},
		{Part{Type: PartFile}, "file"},
		{Part{Type: PartFile, File: &File{}}, "file"},
		{Part{Type: PartFile, File: &File{Bytes: []byte{1}, URL: "u"}}, "file"},
		{Part{Type: PartFile, Text: "x", File: &File{URL: "u"}}, "text"},
		{Part{Type: PartToolCall, ToolCall: &ToolCall{}}, "tool_call.name"},
		{Part{Type: PartToolResult, ToolResult: &ToolResult{}}, "tool_result.tool_call_id"},
		{Part{Type: "image"}, "type"},
	}
	for i, c := range bad {
		err := c.p.Validate()
		var pe *PartError
		if !errors.As(err, &pe) || pe.Member != c.member {
			t.Errorf("case %d (%s): got %v, want a PartError about %q", i, c.p.Type, err, c.member)
		}
	}
	if err := (Part{Type: PartText, Text: "x", Data: json.RawMessage(`1`)}).Validate(); err.Error() != `text part: "data" must not be set in a text part (it carries only "text")` {
		t.Errorf("message %q", err)
	}
}

func TestCloneIsDeep(t *testing.T) {
	in := sample()
	c := in.Clone()
	c.Parts[0].Text = "changed"
	c.Parts[2].File.Bytes[0] = 9
	c.Parts[6].Metadata["nested"].(map[string]any)["a"] = false
	c.Metadata["trace"] = "t2"
	if in.Parts[0].Text != "hello" || in.Parts[2].File.Bytes[0] != 0 || in.Parts[6].Metadata["nested"].(map[string]any)["a"] != true || in.Metadata["trace"] != "t1" {
		t.Fatal("mutating the clone changed the original")
	}
}

func TestTextAndToolCalls(t *testing.T) {
	m := sample()
	if got := m.Text(); got != "hellowith meta" {
		t.Fatalf("Text() = %q", got)
	}
	if calls := m.ToolCalls(); len(calls) != 1 || calls[0].Name != "calculator" {
		t.Fatalf("ToolCalls() = %+v", calls)
	}
}

func TestUsageAdd(t *testing.T) {
	got := TokenUsage{InputTokens: 3, OutputTokens: 4}.Add(TokenUsage{InputTokens: 1, OutputTokens: 1, TotalTokens: 5})
	if got != (TokenUsage{InputTokens: 4, OutputTokens: 5, TotalTokens: 12}) {
		t.Fatalf("Add = %+v", got)
	}
}

func TestNewIDIsATimeOrderedUUIDv7(t *testing.T) {
	a, b := NewID(), NewID()
	for _, id := range []string{a, b} {
		if len(id) != 36 || id[14] != '7' || !strings.ContainsRune("89ab", rune(id[19])) {
			t.Fatalf("%q is not a UUIDv7", id)
		}
	}
	if a == b {
		t.Fatal("two ids are equal")
	}
	time.Sleep(2 * time.Millisecond) // let the millisecond prefix move on
	if c := NewID(); c[:13] <= a[:13] {
		t.Fatalf("%q minted later does not sort after %q", c, a)
	}
}

func TestNewIDIsStrictlyIncreasing(t *testing.T) {
	prev := NewID()
	for i := 0; i < 10000; i++ {
		id := NewID()
		if id <= prev {
			t.Fatalf("id %d: %q does not sort after %q", i, id, prev)
		}
		prev = id
	}
}
