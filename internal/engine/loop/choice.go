package loop

import (
	"fmt"
	"regexp"

	"agentd/internal/engine"
	"agentd/internal/errdefs"
	"agentd/internal/llm"
	"agentd/internal/model"
)

// A turn's request says, beyond the history and the tools, what shape the
// answer must take and whether a tool must be called:
//   - with a response schema, the provider gets it as its response format,
//     or — for a model configured with SchemaInPrompt — the system prompt
//     quotes it;
//   - the tool choice is the request's (the last user message's metadata
//     under MetaToolChoice), else the agent's (Config.ToolChoice). A choice
//     that forces a call ("required", a named tool) holds until the model
//     called a tool after that user message; the turns after the results
//     are "auto", so that the model can answer.

// MetaToolChoice is the user message metadata key that sets the tool choice
// of one request: "auto", "none", "required" or a tool's name. The REST
// face fills it from the body's tool_choice; an A2A client sets it in the
// message's metadata.
const MetaToolChoice = "tool_choice"

// request is the model request of a turn on history.
func (x *execution) request(history []model.Message) llm.Request {
	req := x.e.request(history, x.specs(), x.run.ID, x.actor)
	if x.e.schema != nil && !x.e.cfg.SchemaInPrompt {
		req.ResponseFormat = &llm.ResponseFormat{Name: formatName(x.actor), Schema: x.e.cfg.ResponseSchema, Strict: x.e.cfg.ResponseStrict}
	}
	req.ToolChoice = x.choice
	if x.choice.Forces() && x.forcedCallMade() {
		req.ToolChoice = llm.ToolChoice{Mode: llm.ToolChoiceAuto}
	}
	return req
}

// forcedCallMade reports whether a forcing tool choice has been obeyed: a
// tool was called after the user's message, or the turn answers one of
// the loop's own messages (a correction, a continuation), which follow an
// answer.
func (x *execution) forcedCallMade() bool {
	msgs := x.board.ChannelView(engine.MainChannel)
	if n := len(msgs); n > 0 && (msgs[n-1].Metadata[MetadataFeedback] == true || msgs[n-1].Metadata[MetadataContinuation] == true) {
		return true
	}
	return callsSinceUser(msgs) > 0
}

// resolveToolChoice sets the run's tool choice: the last user message's,
// else the agent's. A request naming a tool the agent does not have is a
// Validation error naming the metadata key.
func (x *execution) resolveToolChoice() error {
	x.choice = x.e.cfg.ToolChoice
	msgs := x.board.ChannelView(engine.MainChannel)
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role != model.RoleUser {
			continue
		}
		v, ok := msgs[i].Metadata[MetaToolChoice]
		if !ok {
			return nil
		}
		s, _ := v.(string)
		c, err := llm.ParseToolChoice(s, x.e.cfg.ToolNames)
		if err != nil {
			return errdefs.Validationf("loop agent %q: message metadata %s: %v", x.actor, MetaToolChoice, err)
		}
		x.choice = c
		return nil
	}
	return nil
}

var nameUnsafe = regexp.MustCompile(`[^a-zA-Z0-9_-]+`)

// formatName names an agent's response schema to the provider.
func formatName(agent string) string {
	n := nameUnsafe.ReplaceAllString(agent, "_")
	if n == "" || len(n) > 64 {
		return "response"
	}
	return n
}

// schemaPrompt is the system prompt with the response schema quoted, for
// models that take no response format.
func schemaPrompt(system string, schema []byte) string {
	s := fmt.Sprintf("Answer with only a JSON document (no prose, no code fence) that matches this JSON Schema:\n%s", schema)
	if system == "" {
		return s
	}
	return system + "\n\n" + s
}
