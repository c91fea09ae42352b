package remote

import (
	"context"
	"encoding/json"
	"strings"

	"agentd/internal/engine"
	"agentd/internal/errdefs"
	"agentd/internal/model"
	"agentd/internal/tool"
)

// ToolConfig declares a peer agent called as a tool (tool kind a2a_peer):
// the model's arguments become a message to the peer, the peer's final
// answer the tool's result.
type ToolConfig struct {
	// Name is the tool's name; Description tells the model when to call
	// it (default: "Ask the peer agent at <card URL>.").
	Name        string
	Description string
	// Peer is how the peer is reached, as for a remote agent (Peer,
	// Headers, AllowPrivate, timeouts, breaker); its AgentID is Name.
	Peer Config
}

// Tool calls a peer agent. Each call is one run of the remote engine: as
// a child run of the caller's run when the host can run children
// (engine.ChildRunner: agentd's runtime), keyed by the call's idempotency
// key, so that a caller resumed after a crash or an answer continues the
// same peer task; in-process under the call otherwise. The peer's
// streamed answer and its state changes are published as progress of the
// caller's run (engine.ToolProgress); the peer's question is the
// caller's question to its user (Host.AskUser), which parks the caller,
// and the answer reaches the peer when the caller resumes. Calls share the
// engine's card cache, HTTP client and circuit breaker.
type Tool struct {
	spec tool.Spec
	eng  *Engine
}

var _ tool.Tool = (*Tool)(nil)

// toolSchema is the arguments schema of every peer tool.
const toolSchema = `{"type":"object","properties":{` +
	`"message":{"type":"string","description":"The message to send to the peer agent."},` +
	`"data":{"description":"Optional structured data sent with the message, as a data part."}},` +
	`"required":["message"],"additionalProperties":false}`

// NewTool returns the tool for cfg; the peer's URL is checked now, its
// card fetched at the first call.
func NewTool(cfg ToolConfig) (*Tool, error) {
	if cfg.Name == "" {
		return nil, errdefs.Validationf("peer tool: name: missing")
	}
	cfg.Peer.AgentID = cfg.Name
	e, err := New(cfg.Peer)
	if err != nil {
		return nil, err
	}
	desc := cfg.Description
	if desc == "" {
		desc = "Ask the peer agent at " + cfg.Peer.Peer + "."
	}
	// Not parallel-safe: one peer question at a time can park the run.
	// Keyed: the call's effect key is the peer message's messageId, and
	// an A2A server answers a repeated messageId in one context with the
	// task it started (agentd's does).
	flags := tool.Flags{Effects: tool.EffectsKeyed}
	return &Tool{eng: e, spec: tool.Spec{Name: cfg.Name, Description: desc, Parameters: json.RawMessage(toolSchema), Flags: flags}}, nil
}

func (t *Tool) Name() string            { return t.spec.Name }
func (t *Tool) Description() string     { return t.spec.Description }
func (t *Tool) Schema() json.RawMessage { return t.spec.Parameters }
func (t *Tool) Flags() tool.Flags       { return t.spec.Flags }

// toolArgs are a call's decoded arguments.
type toolArgs struct {
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data,omitempty"`
}

// Execute sends the message to the peer and answers with its final
// answer. An error is the peer's failure (the model reads it) or the
// interrupt that parks the caller.
func (t *Tool) Execute(ctx context.Context, raw json.RawMessage) (tool.Result, error) {
	var args toolArgs
	if err := json.Unmarshal(raw, &args); err != nil {
		return tool.Result{}, errdefs.Validationf("arguments: %v", err)
	}
	msg := model.NewText(model.RoleUser, args.Message)
	if call, ok := tool.CallFromContext(ctx); ok && call.IdempotencyKey != "" {
		msg.Metadata = map[string]any{EffectKeyMetadata: call.IdempotencyKey} // the peer's messageId (attempt.go)
	}
	if len(args.Data) > 0 && string(args.Data) != "null" {
		msg.Parts = append(msg.Parts, model.Part{Type: model.PartData, Data: args.Data})
	}
	board := engine.NewBoard()
	board.AppendChannelMessage(engine.MainChannel, msg)

	parent, ok := engine.HostFromContext(ctx)
	if !ok {
		parent = engine.NoopHost{}
	}
	runID, _ := engine.RunIDFromContext(ctx)
	call, _ := tool.CallFromContext(ctx)
	h, runCtx := newToolHost(ctx, parent, runID, engine.ToolProgress{Tool: t.spec.Name, CallID: call.ID, Source: t.eng.cfg.Peer}, t.eng.cfg.Timeout)
	defer h.stop()
	h.progress(ctx, engine.ToolProgress{State: "working"})
	out, err := t.run(runCtx, parent, h, runID, call, board)
	if err != nil {
		if !errdefs.IsInterrupted(err) {
			h.progress(ctx, engine.ToolProgress{State: "failed"})
		}
		return tool.Result{}, err
	}
	h.progress(ctx, engine.ToolProgress{State: "completed"})
	return h.result(out)
}

// run executes the call's remote run: a child run of the caller's when
// the host runs children, else here.
func (t *Tool) run(ctx context.Context, parent engine.Host, h *toolHost, runID string, call tool.Call, board *engine.Board) (*engine.Board, error) {
	key := childKey(call)
	r := engine.Run{ParentRunID: runID, Attributes: map[string]string{engine.AttrAgentID: t.spec.Name}}
	if cr, ok := parent.(engine.ChildRunner); ok && runID != "" {
		return cr.RunChild(ctx, engine.ChildRun{Key: key, Step: "tool:" + t.spec.Name, Run: r, Host: h}, t.eng, board)
	}
	r.ID = model.NewID()
	if runID != "" {
		r.ID = runID + "/" + key
	}
	return t.eng.Execute(ctx, r, h, board)
}

var _ tool.ParkedCanceler = (*Tool)(nil)

// CancelParked cancels the peer task a call parked on the peer's question
// left waiting: the call's child run resumes for the cancel
// (engine.ChildRun.Cancel) and its remote engine cancels the peer task.
// A finished call, or one without a child (embedded use), has nothing
// waiting.
func (t *Tool) CancelParked(ctx context.Context) error {
	parent, ok := engine.HostFromContext(ctx)
	runID, _ := engine.RunIDFromContext(ctx)
	cr, runs := parent.(engine.ChildRunner)
	if !ok || !runs || runID == "" {
		return nil
	}
	call, _ := tool.CallFromContext(ctx)
	h, runCtx := newToolHost(ctx, parent, runID, engine.ToolProgress{Tool: t.spec.Name, CallID: call.ID, Source: t.eng.cfg.Peer}, t.eng.cfg.Timeout)
	defer h.stop()
	_, err := cr.RunChild(runCtx, engine.ChildRun{Key: childKey(call), Step: "tool:" + t.spec.Name,
		Run: engine.Run{ParentRunID: runID, Attributes: map[string]string{engine.AttrAgentID: t.spec.Name}}, Host: h, Cancel: true}, t.eng, nil)
	return err
}

// childKey is the child run key of a call.
func childKey(call tool.Call) string {
	key := call.IdempotencyKey
	if key == "" {
		key = call.ID
	}
	return "tool:" + key
}

// answerOf is the text of the last assistant message of b.
func answerOf(b *engine.Board) string {
	if b == nil {
		return ""
	}
	msgs := b.Channel(engine.MainChannel)
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role == model.RoleAssistant {
			return strings.TrimSpace(msgs[i].Text())
		}
	}
	return ""
}
