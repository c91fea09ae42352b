package loop_test

import (
	"encoding/json"
	"strings"
	"testing"

	"agentd/internal/engine"
	"agentd/internal/engine/enginetest"
	"agentd/internal/engine/loop"
	"agentd/internal/errdefs"
	"agentd/internal/llm"
	"agentd/internal/llm/openai"
	"agentd/internal/llm/openai/openaitest"
	"agentd/internal/model"
	"agentd/internal/tool"
)

// fakeModel starts a fake OpenAI-compatible endpoint and a client on it.
func fakeModel(t *testing.T, replies ...openaitest.Reply) (*openaitest.Server, llm.Provider) {
	t.Helper()
	srv := openaitest.New(replies...)
	t.Cleanup(srv.Close)
	c, err := openai.New(openai.Config{BaseURL: srv.BaseURL(), Model: "gpt-fake", MaxRetries: -1})
	if err != nil {
		t.Fatal(err)
	}
	return srv, c
}

// lastUserText is the text of the last user message of a recorded body.
func lastUserText(body map[string]any) string {
	msgs, _ := body["messages"].([]any)
	for i := len(msgs) - 1; i >= 0; i-- {
		m, _ := msgs[i].(map[string]any)
		if m["role"] == "user" {
			s, _ := m["content"].(string)
			return s
		}
	}
	return ""
}

func jsonOf(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// The response schema goes to the provider as response_format
// json_schema; an answer that violates it is corrected with a turn that
// quotes the schema and the error, marked as feedback.
func TestResponseFormatSentAndCorrectionQuotesSchema(t *testing.T) {
	srv, p := fakeModel(t, openaitest.Text(`{"n": "three"}`), openaitest.Text(`{"n": 3}`))
	eng := newEngine(t, loop.Config{Provider: p, ResponseSchema: json.RawMessage(pointSchema), ResponseStrict: true})
	board, err := execute(t, eng, engine.Run{ID: "r-format"}, userBoard("give me a point"), nil)
	if err != nil {
		t.Fatal(err)
	}
	reqs := srv.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests, want 2", len(reqs))
	}
	var schema any
	_ = json.Unmarshal([]byte(pointSchema), &schema)
	want := jsonOf(t, map[string]any{"type": "json_schema", "json_schema": map[string]any{"name": "calc-agent", "schema": schema, "strict": true}})
	for i, r := range reqs {
		if got := jsonOf(t, r["response_format"]); got != want {
			t.Errorf("request %d response_format %s, want %s", i, got, want)
		}
	}
	fb := lastUserText(reqs[1])
	if !strings.Contains(fb, pointSchema) || !strings.Contains(fb, "/n") {
		t.Errorf("correction %q does not quote the schema and the error", fb)
	}
	var marked int
	for _, m := range board.Channel(engine.MainChannel) {
		if m.Metadata[loop.MetadataFeedback] == true {
			marked++
		}
	}
	if marked != 1 {
		t.Errorf("%d correction messages marked, want 1", marked)
	}
}

// A model configured without response_format gets the schema in its
// system prompt, and no response_format.
func TestSchemaInPrompt(t *testing.T) {
	srv, p := fakeModel(t, openaitest.Text(`{"n": 3}`))
	eng := newEngine(t, loop.Config{Provider: p, SystemPrompt: "You place points.", ResponseSchema: json.RawMessage(pointSchema), SchemaInPrompt: true})
	if _, err := execute(t, eng, engine.Run{ID: "r-prompt"}, userBoard("give me a point"), nil); err != nil {
		t.Fatal(err)
	}
	r := srv.Requests()[0]
	if _, ok := r["response_format"]; ok {
		t.Errorf("response_format sent to a model configured without it: %v", r["response_format"])
	}
	sys := r["messages"].([]any)[0].(map[string]any)
	if sys["role"] != "system" || !strings.HasPrefix(sys["content"].(string), "You place points.") || !strings.Contains(sys["content"].(string), pointSchema) {
		t.Errorf("system message %v does not quote the schema after the agent's prompt", sys)
	}
}

// tool_choice reaches the provider: the agent's "required" forces the
// first turn, the turn after the tool's result is "auto"; a request's
// message metadata names a tool instead; a tool the agent lacks is refused.
func TestToolChoiceSent(t *testing.T) {
	srv, p := fakeModel(t, openaitest.Call(tool.CalculatorName, `{"expression":"2+2"}`), openaitest.Text("4"))
	eng := newEngine(t, loop.Config{Provider: p, ToolChoice: llm.ToolChoice{Mode: llm.ToolChoiceRequired}})
	if _, err := execute(t, eng, engine.Run{ID: "r-choice"}, userBoard("what is 2+2?"), nil); err != nil {
		t.Fatal(err)
	}
	reqs := srv.Requests()
	if len(reqs) != 2 || reqs[0]["tool_choice"] != "required" || reqs[1]["tool_choice"] != "auto" {
		t.Fatalf("tool_choice sent %v then %v, want required then auto", reqs[0]["tool_choice"], reqs[len(reqs)-1]["tool_choice"])
	}

	srv, p = fakeModel(t, openaitest.Call(tool.CalculatorName, `{"expression":"2+2"}`), openaitest.Text("4"))
	eng = newEngine(t, loop.Config{Provider: p})
	b := userBoard("what is 2+2?")
	msgs := b.Channel(engine.MainChannel)
	msgs[0].Metadata = map[string]any{loop.MetaToolChoice: tool.CalculatorName}
	b.SetChannel(engine.MainChannel, msgs)
	if _, err := execute(t, eng, engine.Run{ID: "r-choice-req"}, b, nil); err != nil {
		t.Fatal(err)
	}
	if got := jsonOf(t, srv.Requests()[0]["tool_choice"]); got != `{"function":{"name":"calculator"},"type":"function"}` {
		t.Errorf("a request naming the calculator sent tool_choice %s", got)
	}

	msgs[0].Metadata = map[string]any{loop.MetaToolChoice: "shell"}
	b = engine.NewBoard()
	b.SetChannel(engine.MainChannel, []model.Message{msgs[0]})
	_, err := execute(t, eng, engine.Run{ID: "r-choice-bad"}, b, nil)
	if !errdefs.IsValidation(err) || !strings.Contains(err.Error(), `tool_choice "shell"`) {
		t.Errorf("a request naming an unknown tool: %v, want a validation error naming it", err)
	}
}

// An answer cut at the length limit is continued once and joined into one
// whole answer; one still cut after that fails with class model_output.
func TestLengthAnswerContinued(t *testing.T) {
	srv, p := fakeModel(t,
		openaitest.Reply{Text: "The three primary colours are red, ", FinishReason: "length"},
		openaitest.Text("yellow and blue."))
	eng := newEngine(t, loop.Config{Provider: p, MaxTokens: 8})
	board, err := execute(t, eng, engine.Run{ID: "r-length"}, userBoard("name the primary colours"), nil)
	if err != nil {
		t.Fatal(err)
	}
	msgs := board.Channel(engine.MainChannel)
	if len(msgs) != 2 || msgs[1].Text() != "The three primary colours are red, yellow and blue." {
		t.Fatalf("board %+v, want the user's message and the whole answer", msgs)
	}
	if msgs[1].Metadata[loop.MetadataContinued] != 1 {
		t.Errorf("the joined answer's metadata %v does not count its continuation", msgs[1].Metadata)
	}
	reqs := srv.Requests()
	if len(reqs) != 2 || !strings.Contains(lastUserText(reqs[1]), "cut off") {
		t.Fatalf("%d requests; the second one's last user message %q does not ask to continue", len(reqs), lastUserText(reqs[len(reqs)-1]))
	}

	_, p = fakeModel(t, openaitest.Reply{Text: "cut", FinishReason: "length"})
	eng = newEngine(t, loop.Config{Provider: p, MaxTokens: 8})
	_, err = execute(t, eng, engine.Run{ID: "r-length-cut"}, userBoard("name the primary colours"), nil)
	if !errdefs.IsModelOutput(err) || !strings.Contains(err.Error(), "finish_reason length") {
		t.Fatalf("an answer still cut: %v, want model_output naming finish_reason length", err)
	}
}

// An answer withheld by the provider's content filter fails the run with
// class content_filter; the trajectory's model step says why.
func TestContentFilterFails(t *testing.T) {
	_, p := fakeModel(t, openaitest.Reply{Text: "I", FinishReason: "content_filter"})
	eng := newEngine(t, loop.Config{Provider: p})
	host := enginetest.NewRecordingHost()
	_, err := execute(t, eng, engine.Run{ID: "r-filter"}, userBoard("something filtered"), host)
	if !errdefs.IsContentFilter(err) {
		t.Fatalf("a filtered answer: %v (class %q), want class content_filter", err, errdefs.ClassOf(err))
	}
	var seen bool
	for _, ev := range host.Events() {
		b, _ := json.Marshal(ev)
		seen = seen || strings.Contains(string(b), `"finish_reason":"content_filter"`)
	}
	if !seen {
		t.Error("no model step records finish_reason content_filter")
	}
}

// With on_length compact, an answer cut at the length limit makes the
// history compact (a summary request) and the turn is asked again, on the
// summary and the question.
func TestLengthAnswerCompactsAndRetries(t *testing.T) {
	srv, p := fakeModel(t,
		openaitest.Reply{Text: "The answer starts", FinishReason: "length"},
		openaitest.Text("They talked about colours."),
		openaitest.Text("Red, yellow and blue."))
	eng := newEngine(t, loop.Config{Provider: p, OnLength: loop.OnLengthCompact, ContextWindow: 256, ToolNames: []string{}})
	b := engine.NewBoard()
	for i, text := range []string{"I like colours.", "So do I.", "Which ones are warm?", "Red and yellow.", "name the primary colours"} {
		role := model.RoleUser
		if i%2 == 1 {
			role = model.RoleAssistant
		}
		b.AppendChannelMessage(engine.MainChannel, model.NewText(role, text))
	}
	out, err := execute(t, eng, engine.Run{ID: "r-compact"}, b, nil)
	if err != nil {
		t.Fatal(err)
	}
	msgs := out.Channel(engine.MainChannel)
	if last := msgs[len(msgs)-1]; last.Text() != "Red, yellow and blue." {
		t.Fatalf("answer %q", last.Text())
	}
	reqs := srv.Requests()
	if len(reqs) != 3 {
		t.Fatalf("%d requests, want the cut turn, the summary and the retry", len(reqs))
	}
	retry := jsonOf(t, reqs[2]["messages"])
	if !strings.Contains(retry, "They talked about colours.") || strings.Contains(retry, "The answer starts") || strings.Contains(retry, "I like colours.") {
		t.Fatalf("the retry's messages %s: want the summary and not the cut answer nor the summarised turns", retry)
	}
}
