package main

import (
	"bufio"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"agentd/internal/llm/openai/openaitest"
)

// TestReasoningReachesTheUIFaces: a provider that streams its model's
// thinking (reasoning_content) shows it apart from the answer — a
// reasoning event in the run's log (REST), one AG-UI reasoning span
// (REASONING_START … REASONING_END) before the answer's text message, and
// reasoning-start/-delta/-end parts in the AI SDK stream. The answer holds
// none of it.
func TestReasoningReachesTheUIFaces(t *testing.T) {
	srv := openaitest.New(openaitest.Reply{Reasoning: "The user greets me; I greet back.", Text: "Hello there!"})
	t.Cleanup(srv.Close)
	yaml := `
providers:
  o: {type: openai, base_url: "` + srv.BaseURL() + `", model: thinker, max_retries: -1}
agents:
  - {id: thinker, engine: loop, provider: o}
`
	s := start(t, "--config", configFile(t, yaml))

	evs := readAGUI(t, s.post(t, "/ag-ui/agents/thinker", aguiInput("t-think", "r-think", "hi")))
	var kinds []string
	var thought, said strings.Builder
	for _, ev := range evs {
		var e struct{ Type, Delta, MessageID string }
		_ = json.Unmarshal([]byte(ev.data), &e)
		switch e.Type {
		case "REASONING_START", "REASONING_MESSAGE_START", "REASONING_MESSAGE_END", "REASONING_END", "TEXT_MESSAGE_START", "TEXT_MESSAGE_END":
			kinds = append(kinds, e.Type)
		case "REASONING_MESSAGE_CONTENT":
			thought.WriteString(e.Delta)
		case "TEXT_MESSAGE_CONTENT":
			said.WriteString(e.Delta)
		}
	}
	want := "REASONING_START REASONING_MESSAGE_START REASONING_MESSAGE_END REASONING_END TEXT_MESSAGE_START TEXT_MESSAGE_END"
	if got := strings.Join(kinds, " "); got != want {
		t.Fatalf("AG-UI events %s, want %s", got, want)
	}
	if thought.String() != "The user greets me; I greet back." || said.String() != "Hello there!" {
		t.Fatalf("AG-UI reasoning %q, text %q", thought.String(), said.String())
	}

	parts := readUIStream(t, s.post(t, "/ai-sdk/agents/thinker/chat",
		`{"id":"chat-think","messages":[{"id":"u1","role":"user","parts":[{"type":"text","text":"hi"}]}]}`))
	if got := strings.Join(parts, " "); !strings.Contains(got, "reasoning-start reasoning-delta") || !strings.Contains(got, "reasoning-end text-start") {
		t.Fatalf("AI SDK parts %s, want reasoning parts before the text", got)
	}

	run := readJSON[runJSON](t, s.post(t, "/v1/agents/thinker/messages", `{"text":"hi"}`), http.StatusOK)
	res := s.get(t, "/v1/runs/"+run.ID+"/events?after=0")
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if !strings.Contains(string(body), "event: reasoning\n") || !strings.Contains(string(body), `"type":"reasoning"`) {
		t.Fatalf("the REST log has no reasoning event:\n%s", body)
	}
	if last := run.Messages[len(run.Messages)-1]; strings.Contains(last.Parts[0].Text, "greets me") {
		t.Fatalf("the answer %q holds the reasoning", last.Parts[0].Text)
	}
}

// readUIStream reads a UI message stream's part types to its end.
func readUIStream(t *testing.T, res *http.Response) []string {
	t.Helper()
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(res.Body)
		t.Fatalf("status %d: %s", res.StatusCode, b)
	}
	var out []string
	sc := bufio.NewScanner(res.Body)
	for sc.Scan() {
		data, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok || data == "[DONE]" {
			continue
		}
		var p struct{ Type string }
		if err := json.Unmarshal([]byte(data), &p); err != nil {
			t.Fatalf("part %q: %v", data, err)
		}
		out = append(out, p.Type)
	}
	return out
}
