package loop

import (
	"encoding/json"
	"errors"
	"sort"

	"agentd/internal/engine"
	"agentd/internal/llm"
	"agentd/internal/model"
	"agentd/internal/tool"
)

// Client tools (an AG-UI frontend tool): tools the user's client offers
// with its message (engine.MetadataClientTools on the latest user message
// of the board) and runs itself. They are offered to the model beside the
// agent's own (an agent tool of the same name wins) and vetted like them
// — governance and approvals apply. A turn that calls them runs its other
// calls, then asks the client once for all of them through Host.AskUser
// (a prompt with engine.ClientToolPromptPart): the run parks with the
// calls pending, as a tool that parks it does (parked.go), and the answer
// that resumes it carries their results (engine.ClientToolResults); a call
// the answer leaves out gets an error result.

// clientTools are the client's tools the board's latest user message
// offers, by name.
func clientTools(msgs []model.Message) map[string]engine.ClientTool {
	for i := len(msgs) - 1; i >= 0; i-- {
		m := msgs[i]
		if m.Role != model.RoleUser || m.Metadata == nil {
			continue
		}
		raw, ok := m.Metadata[engine.MetadataClientTools]
		if !ok {
			continue
		}
		b, err := json.Marshal(raw) // a stored message holds it decoded
		var list []engine.ClientTool
		if err != nil || json.Unmarshal(b, &list) != nil {
			return nil
		}
		out := make(map[string]engine.ClientTool, len(list))
		for _, t := range list {
			out[t.Name] = t
		}
		return out
	}
	return nil
}

// refreshClientTools reads the client's tools from the board.
func (x *execution) refreshClientTools() {
	x.client = clientTools(x.board.ChannelView(engine.MainChannel))
	for name := range x.client {
		if x.e.allowed[name] {
			delete(x.client, name) // the agent's own tool wins
		}
	}
}

// allows reports whether the model may call tool name: the agent's or
// the client's.
func (x *execution) allows(name string) bool {
	_, client := x.client[name]
	return x.e.allowed[name] || client
}

// specs are the tools a model request offers: the agent's, then the
// client's.
func (x *execution) specs() []llm.ToolSpec {
	if len(x.client) == 0 {
		return x.e.specs
	}
	out := append([]llm.ToolSpec(nil), x.e.specs...)
	for _, name := range sortedNames(x.client) {
		t := x.client[name]
		params := t.Parameters
		if len(params) == 0 || string(params) == "null" {
			params = json.RawMessage(`{"type":"object"}`)
		}
		out = append(out, llm.ToolSpec{Name: t.Name, Description: t.Description, Parameters: params})
	}
	return out
}

// askClient asks the client for the results of calls: when this attempt
// resumes with its answer, the results it carries; otherwise the host's
// interrupt, which parks the run with the calls pending.
func (x *execution) askClient(calls []tool.Call) []tool.Result {
	mcalls := make([]model.ToolCall, len(calls))
	for i, c := range calls {
		mcalls[i] = model.ToolCall{ID: c.ID, Name: c.Name, Arguments: c.Arguments}
	}
	results := make([]tool.Result, len(calls))
	part, err := engine.ClientToolPromptPart(mcalls)
	if err == nil {
		var reply engine.UserReply
		reply, err = x.host.AskUser(x.ctx, engine.UserPrompt{
			Parts:    []model.Part{model.TextPart("Waiting for the client's tool results."), part},
			Source:   x.actor,
			Metadata: map[string]string{"kind": "client_tools"},
		})
		if err == nil {
			return clientResults(calls, engine.ClientToolResults(reply.Parts))
		}
	}
	var ie engine.InterruptedError
	if !errors.As(err, &ie) {
		err = engine.Interrupted(engine.Interrupt{Cause: engine.CauseCustom, Detail: err.Error()})
	}
	for i := range results {
		results[i] = tool.Result{Content: calls[i].Name + ": waiting for the client", IsError: true, Err: err}
	}
	return results
}

// clientResults pairs the client's results with calls.
func clientResults(calls []tool.Call, got []model.ToolResult) []tool.Result {
	byID := make(map[string]model.ToolResult, len(got))
	for _, r := range got {
		byID[r.ToolCallID] = r
	}
	out := make([]tool.Result, len(calls))
	for i, c := range calls {
		r, ok := byID[c.ID]
		if !ok {
			out[i] = tool.Result{Content: c.Name + ": the client sent no result for this call", IsError: true}
			continue
		}
		out[i] = tool.Result{Content: r.Content, IsError: r.IsError}
	}
	return out
}

func sortedNames(m map[string]engine.ClientTool) []string {
	names := make([]string, 0, len(m))
	for n := range m {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}
