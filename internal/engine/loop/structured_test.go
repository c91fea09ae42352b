package loop_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"

	"agentd/internal/engine"
	"agentd/internal/engine/enginetest"
	"agentd/internal/engine/loop"
	"agentd/internal/errdefs"
	"agentd/internal/llm/openai"
	"agentd/internal/llm/scripted"
	"agentd/internal/model"
)

const pointSchema = `{"type":"object","properties":{"n":{"type":"integer"}},"required":["n"],"additionalProperties":false}`

// An answer that does not match the response schema is sent back with the
// problems; the valid one, fenced or not, becomes the run's data result
// and a "result" artifact.
func TestStructuredOutputRetriesThenAccepts(t *testing.T) {
	rules := []scripted.Rule{
		{Prefix: "Your answer does not match", Reply: "```json\n{\"n\": 3}\n```"},
		{Prefix: "give", Reply: `{"n": "three"}`},
	}
	eng := newEngine(t, loop.Config{Provider: newScripted(t, rules...), ResponseSchema: json.RawMessage(pointSchema)})
	host := enginetest.NewRecordingHost()
	board, err := execute(t, eng, engine.Run{ID: "r-struct"}, userBoard("give me a point"), host)
	if err != nil {
		t.Fatal(err)
	}
	msgs := board.Channel(engine.MainChannel)
	last := msgs[len(msgs)-1]
	if len(last.Parts) != 1 || last.Parts[0].Type != model.PartData || string(last.Parts[0].Data) != `{"n":3}` {
		t.Fatalf("final answer %+v, want the data part {\"n\":3}", last.Parts)
	}
	var feedback int
	for _, m := range msgs {
		if m.Metadata[loop.MetadataFeedback] == true {
			feedback++
			if !strings.Contains(m.Text(), "/n") {
				t.Errorf("feedback %q does not name the property at fault", m.Text())
			}
		}
	}
	if feedback != 1 {
		t.Errorf("%d feedback messages, want 1", feedback)
	}
	var artifact bool
	for _, ev := range host.Events() {
		if a, ok := ev.(engine.ArtifactUpdate); ok && a.Artifact.Name == "result" {
			artifact = true
		}
	}
	if !artifact {
		t.Error("no result artifact was published")
	}
}

// A model that never matches the schema fails the run after the retries,
// naming the problems.
func TestStructuredOutputGivesUp(t *testing.T) {
	rules := []scripted.Rule{{Match: "(?s).*", Reply: "not json"}}
	eng := newEngine(t, loop.Config{Provider: newScripted(t, rules...), ResponseSchema: json.RawMessage(pointSchema), ResponseRetries: 1})
	_, err := execute(t, eng, engine.Run{ID: "r-struct-fail"}, userBoard("give me a point"), nil)
	if !errdefs.IsModelOutput(err) || !strings.Contains(err.Error(), "did not match the response schema after 2 tries") || !strings.Contains(err.Error(), "not valid JSON") {
		t.Fatalf("a model that never matches: %v, want class model_output naming the problem", err)
	}
	if _, err := loop.New(loop.Config{Provider: newScripted(t, rules...), ResponseSchema: json.RawMessage(`{"type": 7}`)}); err == nil || !strings.Contains(err.Error(), "response_schema") {
		t.Fatalf("an invalid schema: %v", err)
	}
}

// The recorded structured-output stream of an OpenAI-compatible endpoint,
// through the real client, is accepted as the run's data result.
func TestStructuredOutputFromRecordedStream(t *testing.T) {
	body, err := os.ReadFile("../../llm/openai/testdata/openai_structured_output.sse")
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = w.Write(body)
	}))
	t.Cleanup(srv.Close)
	client, err := openai.New(openai.Config{BaseURL: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	schema := `{"type":"object","required":["city","population"],"properties":{"city":{"type":"string"},"population":{"type":"integer"}}}`
	eng := newEngine(t, loop.Config{Provider: client, Model: "gpt-4o-mini", ResponseSchema: json.RawMessage(schema)})
	board, err := execute(t, eng, engine.Run{ID: "r-struct-openai"}, userBoard("the largest city of France?"), nil)
	if err != nil {
		t.Fatal(err)
	}
	msgs := board.Channel(engine.MainChannel)
	if last := msgs[len(msgs)-1]; len(last.Parts) != 1 || string(last.Parts[0].Data) != `{"city":"Paris","population":2102965}` {
		t.Fatalf("final answer %+v, want the stream's JSON as a data part", last.Parts)
	}
}
