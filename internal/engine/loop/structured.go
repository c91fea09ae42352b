package loop

import (
	"bytes"
	"encoding/json"
	"strings"

	"agentd/internal/engine"
	"agentd/internal/errdefs"
	"agentd/internal/model"
)

// Structured output: an agent with a response schema must answer with JSON
// the schema accepts. An answer that is not is fed back to the model — a
// user message saying what is wrong — and the turn repeats, at most
// ResponseRetries times; then the run fails naming the problems. A valid
// answer becomes a data part (the run's result) and a "result" artifact.

// MetadataFeedback marks the messages the loop adds to tell the model its
// answer did not match the response schema.
const MetadataFeedback = "agentd.schema_feedback"

// DefaultResponseRetries is how many times an answer that does not match
// the response schema is sent back when Config.ResponseRetries is 0.
const DefaultResponseRetries = 2

// structured checks the final answer of turn n against the response
// schema. It returns retry when the answer was sent back for another turn;
// an error when the retries are spent.
func (x *execution) structured() (retry bool, err error) {
	msgs := x.board.Channel(engine.MainChannel)
	last := msgs[len(msgs)-1]
	doc := answerJSON(last.Text())
	problem := x.e.schema.Check(doc)
	if problem == nil {
		x.acceptStructured(len(msgs)-1, last, doc)
		return false, nil
	}
	if x.schemaTries++; x.schemaTries > x.e.cfg.ResponseRetries {
		return false, errdefs.ModelOutputf("loop agent %q: the answer did not match the response schema after %d tries: %v",
			x.actor, x.schemaTries, problem)
	}
	fb := model.NewText(model.RoleUser, correction(problem, x.e.cfg.ResponseSchema))
	fb.Metadata = map[string]any{MetadataFeedback: true}
	x.appendMessage(fb)
	return true, nil
}

// correction is the feedback on an answer the schema refused: the
// problem, and the schema itself, so that a model that was not sent the
// schema (or ignored it) can do better than guess again.
func correction(problem error, schema json.RawMessage) string {
	var compact bytes.Buffer
	if json.Compact(&compact, schema) != nil {
		compact.Reset()
		compact.Write(schema)
	}
	return "Your answer does not match the required JSON schema: " + problem.Error() +
		".\nThe schema is:\n" + compact.String() +
		"\nAnswer again with only a JSON document that matches it."
}

// acceptStructured makes the valid answer at index i a data part and
// publishes it as the "result" artifact.
func (x *execution) acceptStructured(i int, answer model.Message, doc []byte) {
	var compact bytes.Buffer
	if json.Compact(&compact, doc) == nil {
		doc = compact.Bytes()
	}
	answer.Parts = []model.Part{{Type: model.PartData, Data: json.RawMessage(doc)}}
	msgs := x.board.Channel(engine.MainChannel)
	msgs[i] = answer
	x.board.SetChannel(engine.MainChannel, msgs)
	a := model.Artifact{ID: x.run.ID + "-result", Name: "result", Parts: answer.Parts}
	x.publish(engine.ArtifactUpdate{Artifact: a, LastChunk: true})
}

// answerJSON is the JSON of an answer, without the Markdown code fence
// models like to put around it.
func answerJSON(text string) []byte {
	t := strings.TrimSpace(text)
	if rest, ok := strings.CutPrefix(t, "```"); ok {
		if nl := strings.IndexByte(rest, '\n'); nl >= 0 {
			rest = rest[nl+1:] // drop the fence's language tag ("json")
		}
		t = strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "```"))
	}
	return []byte(t)
}
