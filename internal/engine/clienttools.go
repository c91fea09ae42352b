package engine

import (
	"encoding/json"

	"agentd/internal/model"
)

// Client tools: tools a run's client offers (an AG-UI frontend tool) and
// runs itself. A call to one parks the run on a prompt whose data part is
// {"client_tool_calls": [ToolCall…]}; the answer that resumes the run
// carries {"tool_results": [ToolResult…]} (ClientToolResults).

// ClientToolPromptPart is the data part of a prompt waiting for calls.
func ClientToolPromptPart(calls []model.ToolCall) (model.Part, error) {
	return model.DataPart(clientToolPrompt{Calls: calls})
}

type clientToolPrompt struct {
	Calls []model.ToolCall `json:"client_tool_calls"`
}

// PendingClientToolCalls returns the client tool calls a prompt waits for
// (nil when it is not such a prompt).
func PendingClientToolCalls(parts []model.Part) []model.ToolCall {
	return firstData(parts, func(cp clientToolPrompt) []model.ToolCall { return cp.Calls })
}

// firstData returns the first non-empty list get reads from a data part of
// parts decoded as T.
func firstData[T any, E any](parts []model.Part, get func(T) []E) []E {
	for _, p := range parts {
		if p.Type != model.PartData {
			continue
		}
		var v T
		if json.Unmarshal(p.Data, &v) == nil {
			if list := get(v); len(list) > 0 {
				return list
			}
		}
	}
	return nil
}

// ClientToolResultsPart is the data part of an answer carrying results.
func ClientToolResultsPart(results []model.ToolResult) (model.Part, error) {
	return model.DataPart(clientToolResults{Results: results})
}

type clientToolResults struct {
	Results []model.ToolResult `json:"tool_results"`
}

// ClientToolResults returns the tool results an answer carries.
func ClientToolResults(parts []model.Part) []model.ToolResult {
	return firstData(parts, func(r clientToolResults) []model.ToolResult { return r.Results })
}

// MetadataClientTools is the run metadata key that lists the client's
// tools ([]ClientTool): offered to the model beside the agent's own.
const MetadataClientTools = "client_tools"

// ClientTool is a tool the client offers and runs.
type ClientTool struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Parameters  json.RawMessage `json:"parameters,omitempty"`
}
