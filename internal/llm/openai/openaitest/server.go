package openaitest

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
)

// Reply is one scripted answer: text, tool calls, or both, ending with
// FinishReason (default "stop", or "tool_calls" when it calls tools).
type Reply struct {
	// Reasoning, when set, streams first as reasoning_content deltas (as
	// DeepSeek, vLLM and llama.cpp stream a model's thinking).
	Reasoning    string
	Text         string
	ToolCalls    []ToolCall
	FinishReason string
	// InputTokens and OutputTokens are reported in the usage chunk
	// (defaults 10 and 5).
	InputTokens, OutputTokens int
}

// ToolCall is a call a Reply makes; Arguments is its JSON text.
type ToolCall struct {
	ID, Name, Arguments string
}

// Text is a Reply that answers s.
func Text(s string) Reply { return Reply{Text: s} }

// Call is a Reply that calls the tool name with the JSON arguments args.
func Call(name, args string) Reply {
	return Reply{ToolCalls: []ToolCall{{Name: name, Arguments: args}}}
}

// Server is the fake endpoint. Replies are served in order; once they are
// spent the last one repeats. Reply funcs, when set, choose the reply from
// the request body instead.
type Server struct {
	*httptest.Server

	mu       sync.Mutex
	replies  []Reply
	choose   func(body map[string]any) Reply
	requests []map[string]any
}

// New starts a server answering replies in order. The caller closes it
// (tests: t.Cleanup(s.Close)).
func New(replies ...Reply) *Server {
	s := &Server{replies: replies}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	return s
}

// NewFunc starts a server whose every reply choose picks from the
// decoded request body.
func NewFunc(choose func(body map[string]any) Reply) *Server {
	s := &Server{choose: choose}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	return s
}

// BaseURL is the API root a client is configured with.
func (s *Server) BaseURL() string { return s.URL + "/v1" }

// Requests returns the decoded bodies received so far, in order.
func (s *Server) Requests() []map[string]any {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]map[string]any(nil), s.requests...)
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || r.URL.Path != "/v1/chat/completions" {
		http.Error(w, `{"error":{"message":"no such route","type":"invalid_request_error"}}`, http.StatusNotFound)
		return
	}
	raw, _ := io.ReadAll(r.Body)
	var body map[string]any
	if err := json.Unmarshal(raw, &body); err != nil {
		http.Error(w, `{"error":{"message":"body is not JSON","type":"invalid_request_error"}}`, http.StatusBadRequest)
		return
	}
	s.mu.Lock()
	n := len(s.requests)
	s.requests = append(s.requests, body)
	var rp Reply
	switch {
	case s.choose != nil:
		rp = s.choose(body)
	case len(s.replies) > 0:
		rp = s.replies[min(n, len(s.replies)-1)]
	}
	s.mu.Unlock()
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	_, _ = io.WriteString(w, stream(rp, n, fmt.Sprint(body["model"])))
}

// stream renders rp as the SSE body of a streamed completion.
func stream(rp Reply, n int, model string) string {
	id := fmt.Sprintf("chatcmpl-fake%d", n)
	var b strings.Builder
	chunk := func(delta map[string]any, finish any, usage any) {
		c := map[string]any{"id": id, "object": "chat.completion.chunk", "created": 1751890120, "model": model,
			"choices": []any{}, "usage": usage}
		if delta != nil {
			c["choices"] = []any{map[string]any{"index": 0, "delta": delta, "logprobs": nil, "finish_reason": finish}}
		}
		j, _ := json.Marshal(c)
		b.WriteString("data: " + string(j) + "\n\n")
	}
	chunk(map[string]any{"role": "assistant", "content": ""}, nil, nil)
	for _, part := range splitText(rp.Reasoning) {
		chunk(map[string]any{"reasoning_content": part}, nil, nil)
	}
	for _, part := range splitText(rp.Text) {
		chunk(map[string]any{"content": part}, nil, nil)
	}
	for i, tc := range rp.ToolCalls {
		callID := tc.ID
		if callID == "" {
			callID = fmt.Sprintf("call_%d_%d", n, i)
		}
		chunk(map[string]any{"tool_calls": []any{map[string]any{"index": i, "id": callID, "type": "function",
			"function": map[string]any{"name": tc.Name, "arguments": ""}}}}, nil, nil)
		chunk(map[string]any{"tool_calls": []any{map[string]any{"index": i,
			"function": map[string]any{"arguments": tc.Arguments}}}}, nil, nil)
	}
	finish := rp.FinishReason
	if finish == "" {
		finish = "stop"
		if len(rp.ToolCalls) > 0 {
			finish = "tool_calls"
		}
	}
	chunk(map[string]any{}, finish, nil)
	in, out := cmpOr(rp.InputTokens, 10), cmpOr(rp.OutputTokens, 5)
	chunk(nil, nil, map[string]any{"prompt_tokens": in, "completion_tokens": out, "total_tokens": in + out})
	b.WriteString("data: [DONE]\n\n")
	return b.String()
}

// splitText cuts s into deltas of a few characters, as a real stream
// does.
func splitText(s string) []string {
	var out []string
	r := []rune(s)
	for len(r) > 8 {
		out = append(out, string(r[:8]))
		r = r[8:]
	}
	if len(r) > 0 {
		out = append(out, string(r))
	}
	return out
}

func cmpOr(v, def int) int {
	if v == 0 {
		return def
	}
	return v
}
