package llm_test

import (
	"errors"
	"io"
	"testing"

	"agentd/internal/llm"
	"agentd/internal/model"
)

// sliceStream replays chunks, then ends with err (io.EOF if nil).
type sliceStream struct {
	chunks []llm.Chunk
	err    error
	closed bool
}

func (s *sliceStream) Next() (llm.Chunk, error) {
	if len(s.chunks) == 0 {
		if s.err != nil {
			return llm.Chunk{}, s.err
		}
		return llm.Chunk{}, io.EOF
	}
	c := s.chunks[0]
	s.chunks = s.chunks[1:]
	return c, nil
}

func (s *sliceStream) Close() error { s.closed = true; return nil }

func TestCollect(t *testing.T) {
	usage := func(in, out int64) *model.TokenUsage {
		return &model.TokenUsage{InputTokens: in, OutputTokens: out, TotalTokens: in + out}
	}
	tests := []struct {
		name      string
		chunks    []llm.Chunk
		text      string
		reasoning string
		calls     []model.ToolCall
		usage     model.TokenUsage
		finish    string
	}{
		{
			name:   "text with cumulative usage",
			chunks: []llm.Chunk{{Text: "Hel", Usage: usage(3, 1)}, {Text: "lo", Usage: usage(3, 2)}, {FinishReason: "stop"}},
			text:   "Hello", usage: *usage(3, 2), finish: llm.FinishStop,
		},
		{
			name: "fragmented calls interleaved, id on first fragment only",
			chunks: []llm.Chunk{
				{ToolCalls: []llm.ToolCallDelta{{Index: 0, ID: "a", Name: "clock"}, {Index: 1, ID: "b", Name: "calc"}}},
				{ToolCalls: []llm.ToolCallDelta{{Index: 1, Arguments: `{"x":`}, {Index: 0, Arguments: `{}`}}},
				{ToolCalls: []llm.ToolCallDelta{{Index: 1, Arguments: `1}`}}}, {FinishReason: "tool_calls"},
			},
			calls: []model.ToolCall{
				{ID: "a", Name: "clock", Arguments: []byte(`{}`)},
				{ID: "b", Name: "calc", Arguments: []byte(`{"x":1}`)},
			},
			finish: llm.FinishToolCalls,
		},
		{
			name: "missing ids, repeated names, stop with calls, reasoning",
			chunks: []llm.Chunk{
				{Reasoning: "think"},
				{Text: "ok", ToolCalls: []llm.ToolCallDelta{{Index: 3, Name: "clock"}}},
				{ToolCalls: []llm.ToolCallDelta{{Index: 3, Name: "clock", Arguments: " "}}},
				{FinishReason: "stop"},
			},
			text: "ok", reasoning: "think",
			calls:  []model.ToolCall{{ID: "call_3", Name: "clock", Arguments: []byte(`{}`)}},
			finish: llm.FinishToolCalls,
		},
		{
			name:   "malformed arguments kept as a JSON string",
			chunks: []llm.Chunk{{ToolCalls: []llm.ToolCallDelta{{Index: 0, ID: "x", Name: "get_", Arguments: `{"a":`}}}, {ToolCalls: []llm.ToolCallDelta{{Index: 0, Name: "weather"}}}},
			calls:  []model.ToolCall{{ID: "x", Name: "get_weather", Arguments: []byte(`"{\"a\":"`)}},
			finish: llm.FinishToolCalls,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := &sliceStream{chunks: tc.chunks}
			msg, usage, finish, err := llm.Collect(s)
			if err != nil {
				t.Fatal(err)
			}
			if !s.closed {
				t.Error("Collect did not close the stream")
			}
			if msg.Role != model.RoleAssistant || msg.Text() != tc.text {
				t.Errorf("message = %s %q, want assistant %q", msg.Role, msg.Text(), tc.text)
			}
			if got, _ := msg.Metadata[llm.MetadataReasoning].(string); got != tc.reasoning {
				t.Errorf("reasoning = %q, want %q", got, tc.reasoning)
			}
			calls := msg.ToolCalls()
			if len(calls) != len(tc.calls) {
				t.Fatalf("calls = %+v, want %+v", calls, tc.calls)
			}
			for i := range calls {
				if calls[i].ID != tc.calls[i].ID || calls[i].Name != tc.calls[i].Name ||
					string(calls[i].Arguments) != string(tc.calls[i].Arguments) {
					t.Errorf("call %d = %+v (%s), want %+v (%s)", i, calls[i], calls[i].Arguments, tc.calls[i], tc.calls[i].Arguments)
				}
			}
			for _, p := range msg.Parts {
				if err := p.Validate(); err != nil {
					t.Errorf("invalid part: %v", err)
				}
			}
			if usage != tc.usage || finish != tc.finish {
				t.Errorf("usage, finish = %+v, %q; want %+v, %q", usage, finish, tc.usage, tc.finish)
			}
		})
	}
}

func TestCollectKeepsPartialTurnOnError(t *testing.T) {
	boom := errors.New("boom")
	s := &sliceStream{chunks: []llm.Chunk{{Text: "par"}, {Text: "tial"}}, err: boom}
	msg, _, _, err := llm.Collect(s)
	if !errors.Is(err, boom) || msg.Text() != "partial" || !s.closed {
		t.Errorf("Collect = %q, %v (closed %v); want the partial text and the error", msg.Text(), err, s.closed)
	}
}

func TestAccumulatorJoinsAnySplit(t *testing.T) {
	for _, pieces := range [][]string{
		nil, {""}, {"one"}, {"", "one", ""}, {"he", "llo", " ", "world"}, {"a", "", "b", "", "", "c"},
	} {
		var acc llm.Accumulator
		want := ""
		for _, p := range pieces {
			acc.Add(llm.Chunk{Text: p, Reasoning: "r" + p})
			want += p
		}
		msg := acc.Message()
		if got := msg.Text(); got != want {
			t.Errorf("%q: text = %q, want %q", pieces, got, want)
		}
		if got := msg.Text(); want != "" && (len(msg.Parts) != 1 || got != want) {
			t.Errorf("%q: parts = %+v", pieces, msg.Parts)
		}
		wantReasoning := ""
		for _, p := range pieces {
			wantReasoning += "r" + p
		}
		if got, _ := msg.Metadata[llm.MetadataReasoning].(string); got != wantReasoning {
			t.Errorf("%q: reasoning = %q, want %q", pieces, got, wantReasoning)
		}
		if again := acc.Message().Text(); again != want {
			t.Errorf("%q: a second Message has text %q", pieces, again)
		}
	}
}
