package api

import "agentd/internal/model"

// toolChoiceKey is the message metadata key a loop agent reads its
// request's tool choice from (engine/loop MetaToolChoice); an A2A client
// sets it in its message's metadata, a REST client in the body's
// tool_choice.
const toolChoiceKey = "tool_choice"

// withToolChoice is msg with the body's tool_choice ("auto", "none",
// "required" or a tool's name) in its metadata; the caller's map is left
// as it was. The agent checks the value: a tool it lacks fails the run.
func (b sendBody) withToolChoice(msg model.Message) model.Message {
	if b.ToolChoice == "" {
		return msg
	}
	meta := make(map[string]any, len(msg.Metadata)+1)
	for k, v := range msg.Metadata {
		meta[k] = v
	}
	meta[toolChoiceKey] = b.ToolChoice
	msg.Metadata = meta
	return msg
}
