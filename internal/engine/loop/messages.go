package loop

import (
	"agentd/internal/model"
)

// MetadataPartial is the metadata key that marks an assistant message cut
// short (interrupt, cancellation, provider failure): its text is what was
// streamed before the turn stopped, and its tool calls were never run.
const MetadataPartial = "partial"

// answered reports whether msgs end with a complete final answer: an
// assistant message without tool calls that was not cut short. A resume
// from such a board has nothing left to do.
func answered(msgs []model.Message) bool {
	if len(msgs) == 0 {
		return false
	}
	last := msgs[len(msgs)-1]
	if last.Role != model.RoleAssistant || len(last.ToolCalls()) > 0 {
		return false
	}
	partial, _ := last.Metadata[MetadataPartial].(bool)
	return !partial
}

// toolMessage is the role-tool message that carries one call's result.
func toolMessage(r model.ToolResult) model.Message {
	return model.Message{Role: model.RoleTool, Name: r.Name, Parts: []model.Part{model.ToolResultPart(r)}}
}
