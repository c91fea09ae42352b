package tool_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"agentd/internal/tool"
)

// Every tool's result is capped at the registry's max_result_bytes, at a
// character boundary, with a marker the model reads; smaller results pass
// untouched.
func TestResultCapped(t *testing.T) {
	big := strings.Repeat("é", 50) // 100 bytes
	reg := &tool.Registry{MaxResultBytes: 31}
	for name, text := range map[string]string{"big": big, "small": "fits"} {
		if err := reg.Register(tool.New(tool.Spec{Name: name}, func(context.Context, json.RawMessage) (tool.Result, error) {
			return tool.Text(text), nil
		})); err != nil {
			t.Fatal(err)
		}
	}
	r := reg.Execute(t.Context(), tool.Call{ID: "1", Name: "big"})
	want := strings.Repeat("é", 15) + "\n[result truncated: 30 of 100 bytes shown (max_result_bytes)]"
	if r.Content != want {
		t.Fatalf("capped result %q, want %q", r.Content, want)
	}
	all := reg.ExecuteAll(t.Context(), []tool.Call{{ID: "2", Name: "big"}, {ID: "3", Name: "small"}})
	if all[0].Content != want || all[1].Content != "fits" {
		t.Fatalf("ExecuteAll results %q, %q", all[0].Content, all[1].Content)
	}
}
