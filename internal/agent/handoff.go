package agent

import (
	"context"
	"encoding/json"
	"strings"

	"agentd/internal/errdefs"
	"agentd/internal/tool"
)

// HandoffStateKey is the Result.State key under which HandoffDecider's
// decision stores the HandoffEvent; read it with HandoffFromResult.
const HandoffStateKey = "handoff"

// HandoffFinalizeReason prefixes the Reason of HandoffDecider's decision:
// "handoff:<to_agent_id>", so telemetry can branch on the prefix.
const HandoffFinalizeReason = "handoff:"

// maxToolNameLen is the longest tool name model APIs (and tool.Registry)
// accept.
const maxToolNameLen = 64

// Handoff lets the current agent transfer the conversation to another
// agent. The model sees it as an ordinary tool (HandoffTool); calling the
// tool is how the model asks for the transfer. HandoffDecider finds the
// call after the turn and reports a HandoffEvent; the host dispatches the
// next agent. It is data: declare it next to the Agent, encode it for an
// admin UI.
//
// Only one hand-off per turn is honoured — the first call in the turn's
// messages — because a turn cannot fork.
type Handoff struct {
	// ToAgentID is the receiving agent; the host resolves it. Required.
	ToAgentID string `json:"to_agent_id"`
	// Description tells the model when to hand off ("Refunds, invoices,
	// plans"); empty means "Transfer the conversation to <id>.".
	Description string `json:"description,omitempty"`
	// ToolName overrides DefaultHandoffToolName(ToAgentID), e.g. when two
	// agent ids sanitise to the same name.
	ToolName string `json:"tool_name,omitempty"`
	// Filter, when set, lets HandoffTools hide the hand-off for a request
	// (tenant or permission gating).
	Filter func(ctx context.Context, req *Request) bool `json:"-"`
	// OnInvoke runs inside the tool's Execute, for light observability. An
	// error fails the tool call, and HandoffDecider then ignores that call.
	OnInvoke func(ctx context.Context, args HandoffArgs) error `json:"-"`
}

// Name returns the tool name the model sees for h.
func (h Handoff) Name() string {
	if h.ToolName != "" {
		return h.ToolName
	}
	return DefaultHandoffToolName(h.ToAgentID)
}

// HandoffArgs are the arguments of a hand-off tool call. The schema is the
// same for every hand-off on purpose: richer, per-target shapes tempt the
// model to smuggle structured data into free text. Dispatch data belongs
// on the next Request.
type HandoffArgs struct {
	// Reason is a short rationale, shown to the receiving agent.
	Reason string `json:"reason,omitempty"`
	// Note is a message for the receiving agent to read first.
	Note string `json:"note,omitempty"`
}

// HandoffEvent records a detected hand-off in Result.State.
type HandoffEvent struct {
	// ToAgentID is the receiving agent.
	ToAgentID string `json:"to_agent_id"`
	// ToolName is the tool the model called.
	ToolName string `json:"tool_name"`
	// ToolCallID is the model's id for the call.
	ToolCallID string `json:"tool_call_id"`
	// Args are the call's decoded arguments.
	Args HandoffArgs `json:"args,omitzero"`
}

// DefaultHandoffToolName is the tool name of a hand-off to agentID without
// a ToolName: "transfer_to_" plus agentID lowercased, every rune outside
// [a-z0-9_] replaced by "_", cut to the 64 characters model APIs allow.
// Prompt templates can compute the same name.
func DefaultHandoffToolName(agentID string) string {
	const prefix = "transfer_to_"
	var b strings.Builder
	b.WriteString(prefix)
	for _, r := range strings.ToLower(agentID) {
		if b.Len() == maxToolNameLen {
			break
		}
		if r == '_' || ('a' <= r && r <= 'z') || ('0' <= r && r <= '9') {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
	}
	return b.String()
}

// handoffSchema is the arguments schema shared by every hand-off tool.
const handoffSchema = `{"type":"object","properties":{` +
	`"reason":{"type":"string","description":"Why the conversation is transferred."},` +
	`"note":{"type":"string","description":"A message for the receiving agent to read first."}},` +
	`"additionalProperties":false}`

// HandoffTool returns the tool through which the model requests h. Its
// Execute only runs h.OnInvoke and confirms, so the model's round ends
// cleanly; dispatch is the host's job after Run returns. It panics when
// h.ToAgentID is empty: a hand-off without a destination is a programming
// error best caught at registration.
func HandoffTool(h Handoff) tool.Tool {
	if h.ToAgentID == "" {
		panic("agent: HandoffTool: Handoff.ToAgentID is empty")
	}
	desc := h.Description
	if desc == "" {
		desc = "Transfer the conversation to " + h.ToAgentID + "."
	}
	spec := tool.Spec{
		Name:        h.Name(),
		Description: desc,
		Parameters:  json.RawMessage(handoffSchema),
		Flags:       tool.Flags{ParallelSafe: true, Idempotent: true},
	}
	return tool.New(spec, func(ctx context.Context, raw json.RawMessage) (tool.Result, error) {
		args, err := decodeHandoffArgs(raw)
		if err != nil {
			return tool.Result{}, errdefs.Validationf("hand-off to %q: arguments: %w", h.ToAgentID, err)
		}
		if h.OnInvoke != nil {
			if err := h.OnInvoke(ctx, args); err != nil {
				return tool.Result{}, err
			}
		}
		return tool.Text("Transferring the conversation to " + h.ToAgentID + "."), nil
	})
}

// HandoffTools returns the tools of hs that req may see: hand-offs whose
// Filter rejects req are left out. A nil req skips filtering (listings,
// static checks). Like HandoffTool it panics on an empty ToAgentID.
func HandoffTools(ctx context.Context, req *Request, hs []Handoff) []tool.Tool {
	out := make([]tool.Tool, 0, len(hs))
	for _, h := range hs {
		if req != nil && h.Filter != nil && !h.Filter(ctx, req) {
			continue
		}
		out = append(out, HandoffTool(h))
	}
	return out
}

func decodeHandoffArgs(raw json.RawMessage) (HandoffArgs, error) {
	var args HandoffArgs
	if len(raw) == 0 || string(raw) == "null" {
		return args, nil
	}
	err := json.Unmarshal(raw, &args)
	return args, err
}
