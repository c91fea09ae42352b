package openai_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"agentd/internal/errdefs"
	"agentd/internal/llm"
	"agentd/internal/llm/openai"
	"agentd/internal/model"
)

var update = flag.Bool("update", false, "rewrite golden files")

func userTurn(text string) llm.Request {
	return llm.Request{Messages: []model.Message{model.NewText(model.RoleUser, text)}}
}

func TestRecordedStreams(t *testing.T) {
	type call struct{ id, name, args string }
	tests := []struct {
		file      string
		text      string
		reasoning string
		calls     []call
		usage     model.TokenUsage
		finish    string
	}{
		{
			file: "openai_tool_calls.sse", text: "Let me check.",
			calls: []call{
				{"call_DdmO9pD3xa9XTPNJ32zg2hcA", "get_weather", `{"location": "Paris, France"}`},
				{"call_ABtB8XDM0bqVIrg1S6mU8vZW", "get_time", `{"tz":"Europe/Paris"}`},
			},
			usage:  model.TokenUsage{InputTokens: 82, OutputTokens: 47, TotalTokens: 129},
			finish: llm.FinishToolCalls,
		},
		{
			file: "ollama_tool_calls.sse",
			calls: []call{
				{"call_x4bq0n8w", "get_weather", `{"location":"Paris, France"}`},
				{"call_7rvf1s2k", "get_time", `{"tz":"Europe/Paris"}`},
			},
			finish: llm.FinishToolCalls, // the server said "stop"
		},
		{
			file: "vllm_usage_every_chunk.sse", text: "The capital of France is Paris.",
			usage:  model.TokenUsage{InputTokens: 21, OutputTokens: 7, TotalTokens: 28},
			finish: llm.FinishStop,
		},
		{
			file: "llamacpp_reasoning_tools.sse", text: "Adding.", reasoning: "The user wants a sum.",
			calls:  []call{{"call_0", "calculator", `{"expr":"2+2"}`}},
			usage:  model.TokenUsage{InputTokens: 35, OutputTokens: 29, TotalTokens: 64},
			finish: llm.FinishToolCalls,
		},
		{
			file:   "object_arguments.sse",
			calls:  []call{{"t1", "get_time", `{"tz":"UTC"}`}},
			finish: llm.FinishToolCalls,
		},
		{
			// A structured-output answer (response_format json_schema):
			// the JSON document arrives in pieces of content, after a
			// first delta with a null refusal.
			file: "openai_structured_output.sse", text: `{"city":"Paris","population":2102965}`,
			usage:  model.TokenUsage{InputTokens: 96, OutputTokens: 12, TotalTokens: 108},
			finish: llm.FinishStop,
		},
		{
			file: "plain_completion.json", text: "Hi!",
			usage:  model.TokenUsage{InputTokens: 9, OutputTokens: 2, TotalTokens: 11},
			finish: llm.FinishStop,
		},
	}
	for _, tc := range tests {
		t.Run(tc.file, func(t *testing.T) {
			srv := newServer(t, reply{file: tc.file})
			s, err := srv.client(t, nil).Stream(context.Background(), userTurn("hi"))
			if err != nil {
				t.Fatal(err)
			}
			msg, usage, finish, err := llm.Collect(s)
			if err != nil {
				t.Fatalf("Collect: %v", err)
			}
			if msg.Text() != tc.text {
				t.Errorf("text = %q, want %q", msg.Text(), tc.text)
			}
			if got, _ := msg.Metadata[llm.MetadataReasoning].(string); got != tc.reasoning {
				t.Errorf("reasoning = %q, want %q", got, tc.reasoning)
			}
			var calls []call
			for _, c := range msg.ToolCalls() {
				calls = append(calls, call{c.ID, c.Name, string(c.Arguments)})
			}
			if fmt.Sprint(calls) != fmt.Sprint(tc.calls) {
				t.Errorf("calls = %v\nwant    %v", calls, tc.calls)
			}
			if usage != tc.usage || finish != tc.finish {
				t.Errorf("usage, finish = %+v, %q; want %+v, %q", usage, finish, tc.usage, tc.finish)
			}
		})
	}
}

// TestDeltasArriveInOrder checks the chunk sequence itself, not only the
// collected turn: reasoning stays out of the text, and each chunk is
// non-empty.
func TestDeltasArriveInOrder(t *testing.T) {
	srv := newServer(t, reply{file: "llamacpp_reasoning_tools.sse"})
	s, err := srv.client(t, nil).Stream(context.Background(), userTurn("2+2?"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var kinds []string
	for {
		c, err := s.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		switch {
		case c.Reasoning != "":
			kinds = append(kinds, "r")
		case c.Text != "":
			kinds = append(kinds, "t")
		case len(c.ToolCalls) > 0:
			kinds = append(kinds, "c")
		case c.FinishReason != "":
			kinds = append(kinds, "f")
		default:
			t.Errorf("empty chunk %+v", c)
		}
	}
	if got := strings.Join(kinds, ""); got != "rrrtccf" {
		t.Errorf("chunk kinds = %s, want rrrtccf", got)
	}
}

func TestRequestBody(t *testing.T) {
	srv := newServer(t, reply{file: "vllm_usage_every_chunk.sse"})
	temp, topP := 0.2, 0.9
	req := llm.Request{
		Model: "qwen", Temperature: &temp, MaxTokens: 256, TopP: &topP,
		Messages: []model.Message{
			model.NewText(model.RoleSystem, "Be brief."),
			model.NewText(model.RoleUser, "Weather and time in Paris? <now>"),
			{Role: model.RoleAssistant, Parts: []model.Part{
				model.TextPart("Checking."),
				model.ToolCallPart(model.ToolCall{ID: "call_1", Name: "get_weather", Arguments: json.RawMessage(`{"location":"Paris"}`)}),
				model.ToolCallPart(model.ToolCall{ID: "call_2", Name: "get_time"}),
			}},
			{Role: model.RoleTool, Parts: []model.Part{
				model.ToolResultPart(model.ToolResult{ToolCallID: "call_1", Name: "get_weather", Content: "18°C"}),
				model.ToolResultPart(model.ToolResult{ToolCallID: "call_2", Content: "boom", IsError: true}),
			}},
			{Role: model.RoleAssistant, Parts: []model.Part{
				model.ToolCallPart(model.ToolCall{ID: "call_3", Name: "get_time", Arguments: json.RawMessage(`"{\"tz\":"`)}),
			}},
			{Role: model.RoleTool, Parts: []model.Part{model.ToolResultPart(model.ToolResult{ToolCallID: "call_3", Content: "12:00"})}},
			{Role: model.RoleUser, Parts: []model.Part{
				model.TextPart("And this?"), model.FileURLPart("p.png", "image/png", "https://example.com/p.png"),
			}},
		},
		Tools: []llm.ToolSpec{
			{Name: "get_weather", Description: "Weather now", Parameters: json.RawMessage(`{"type":"object","properties":{"location":{"type":"string"}},"required":["location"]}`)},
			{Name: "get_time"},
		},
	}
	s, err := srv.client(t, nil).Stream(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, _, err := llm.Collect(s); err != nil {
		t.Fatal(err)
	}
	assertGoldenJSON(t, filepath.Join("testdata", "request.golden.json"), srv.requests[0])
	h := srv.headers[0]
	if h.Get("Authorization") != "Bearer sk-test-secret" || h.Get("Content-Type") != "application/json" {
		t.Errorf("headers = %v", h)
	}
}

// assertGoldenJSON compares JSON semantically with a golden file.
func assertGoldenJSON(t *testing.T, path string, got []byte) {
	t.Helper()
	var pretty bytes.Buffer
	if err := json.Indent(&pretty, got, "", "  "); err != nil {
		t.Fatalf("sent invalid JSON: %v\n%s", err, got)
	}
	if *update {
		if err := os.WriteFile(path, pretty.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	var g, w any
	if err := json.Unmarshal(got, &g); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(want, &w); err != nil {
		t.Fatal(err)
	}
	gb, _ := json.Marshal(g)
	wb, _ := json.Marshal(w)
	if !bytes.Equal(gb, wb) {
		t.Errorf("request body differs from %s:\n%s", path, pretty.Bytes())
	}
}

func TestRequestValidation(t *testing.T) {
	srv := newServer(t, reply{file: "truncated.sse"})
	c := srv.client(t, func(c *openai.Config) { c.Model = "" })
	if _, err := c.Stream(context.Background(), userTurn("hi")); !errdefs.IsValidation(err) || !strings.Contains(err.Error(), "no model") {
		t.Errorf("no model: %v", err)
	}
	c = srv.client(t, nil)
	if _, err := c.Stream(context.Background(), llm.Request{}); !errdefs.IsValidation(err) {
		t.Errorf("no messages: %v", err)
	}
	if srv.requestCount() != 0 {
		t.Errorf("invalid requests reached the server")
	}
	for _, base := range []string{"", "localhost:11434/v1", "ftp://x"} {
		if _, err := openai.New(openai.Config{BaseURL: base}); !errdefs.IsValidation(err) || !strings.Contains(err.Error(), "base_url") {
			t.Errorf("New(%q) = %v, want a base_url Validation error", base, err)
		}
	}
}

func TestAPIKeyNeverPrinted(t *testing.T) {
	cfg := openai.Config{BaseURL: "https://api.openai.com/v1", APIKey: "sk-very-secret", Model: "m"}
	var logged bytes.Buffer
	slog.New(slog.NewJSONHandler(&logged, nil)).Info("provider", "config", cfg)
	for _, out := range []string{fmt.Sprintf("%v %+v %#v %s", cfg, cfg, cfg, cfg), logged.String()} {
		if strings.Contains(out, "sk-very-secret") {
			t.Errorf("API key printed: %s", out)
		}
		if !strings.Contains(out, "api.openai.com") {
			t.Errorf("config not described: %s", out)
		}
	}
}
