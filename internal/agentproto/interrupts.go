package agentproto

import (
	"encoding/json"
	"strconv"

	"agentd/internal/engine"
	"agentd/internal/model"
	"agentd/internal/run"
)

// interruptsOf returns what an interrupted run waits on: its question (the
// prompt's text, or the text with the prompt's data, such as a flow's
// node and input type), or, for tool calls that wait for approval, one
// interrupt in the Agent Inbox's HumanInterrupt shape per call.
func interruptsOf(t run.Task) []interruptJSON {
	if !t.State.Interrupted() || t.StatusMessage == nil {
		return []interruptJSON{}
	}
	return promptInterrupts(t.ID, t.Attempt, *t.StatusMessage)
}

func promptInterrupts(runID string, attempt int, prompt model.Message) []interruptJSON {
	id := runID + "." + strconv.Itoa(attempt)
	if pending := engine.PendingApprovals(prompt.Parts); len(pending) > 0 {
		out := make([]interruptJSON, 0, len(pending))
		for _, p := range pending {
			args := json.RawMessage(argsOf(p.Arguments))
			out = append(out, interruptJSON{ID: id + "." + p.CallID, Value: map[string]any{
				"action_request": map[string]any{"action": p.Tool, "args": args},
				"config":         map[string]bool{"allow_accept": true, "allow_edit": true, "allow_respond": true, "allow_ignore": true},
				"description":    p.Reason,
				"call_id":        p.CallID,
			}})
		}
		return out
	}
	var data []json.RawMessage
	for _, p := range prompt.Parts {
		if p.Type == model.PartData && len(p.Data) > 0 {
			data = append(data, p.Data)
		}
	}
	if len(data) == 0 {
		return []interruptJSON{{ID: id, Value: prompt.Text()}}
	}
	return []interruptJSON{{ID: id, Value: map[string]any{"question": prompt.Text(), "data": data}}}
}
