package flow

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"time"

	"agentd/internal/engine"
	"agentd/internal/errdefs"
	"agentd/internal/model"
	"agentd/internal/tool"
)

// Config describes one flow agent. New validates it and keeps a copy.
type Config struct {
	// Flow is the compiled flow. Required.
	Flow *Flow
	// Tools runs the flow's actions; required when the flow has any.
	Tools *tool.Registry
	// AgentID starts the step actor of every event ("<agent>.node.<id>")
	// and names the assistant messages. Empty falls back to the run's
	// engine.AttrAgentID attribute, then to "flow".
	AgentID string
	// SpecVersion identifies the flow in checkpoints; a resume from a
	// checkpoint of another non-empty version is refused as a Conflict.
	SpecVersion string
	// Now is the clock of input timeouts; nil means time.Now.
	Now func() time.Time
	// NewMessageID mints message ids; nil uses model.NewID.
	NewMessageID func() string
	// MaxSteps bounds the nodes one attempt executes between two answers,
	// so that a loop of nodes that never waits fails instead of spinning;
	// zero means DefaultMaxSteps.
	MaxSteps int
	// Effects overrides tools' effect kinds and InDoubt sets the policy for
	// an action found in doubt, by tool name or "*" (effects.go).
	Effects map[string]tool.Effects
	InDoubt map[string]string
}

// DefaultMaxSteps is MaxSteps when Config.MaxSteps is zero.
const DefaultMaxSteps = 1000

// Engine runs one flow. It is immutable after New and safe for concurrent
// use: each Execute keeps its state on its own stack.
type Engine struct {
	cfg Config
}

var (
	_ engine.Engine    = (*Engine)(nil)
	_ engine.Describer = (*Engine)(nil)
)

// New validates cfg: a flow, and a registry holding every tool the flow
// calls. A missing tool is a Validation error naming the node and key.
func New(cfg Config) (*Engine, error) {
	if cfg.Flow == nil {
		return nil, errdefs.Validationf("flow agent %q: flow is required", cfg.AgentID)
	}
	for _, id := range cfg.Flow.ids {
		n := cfg.Flow.nodes[id]
		for _, c := range []struct {
			key string
			c   *call
		}{{"do", n.do}, {"undo", n.undo}} {
			if c.c == nil {
				continue
			}
			if cfg.Tools == nil {
				return nil, errdefs.Validationf("flow %s: node %q: %s.name: tool %q but no tool registry", cfg.Flow.name, id, c.key, c.c.name)
			}
			if _, ok := cfg.Tools.Get(c.c.name); !ok {
				return nil, errdefs.Validationf("flow %s: node %q: %s.name: unknown tool %q (registered: %s)",
					cfg.Flow.name, id, c.key, c.c.name, strings.Join(cfg.Tools.Names(), ", "))
			}
		}
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.MaxSteps <= 0 {
		cfg.MaxSteps = DefaultMaxSteps
	}
	if cfg.NewMessageID == nil {
		cfg.NewMessageID = model.NewID
	}
	return &Engine{cfg: cfg}, nil
}

// Capabilities: the flow checkpoints before every node, resumes from those
// checkpoints and asks the user at input nodes. A cancel of a parked flow
// must reach it (its interrupt handler may say goodbye), and a question
// with a timeout carries its deadline in the prompt's data part.
func (e *Engine) Capabilities() engine.Capabilities {
	return engine.Capabilities{SupportsResume: true, EmitsCheckpoint: true, EmitsUserPrompt: true,
		HandlesParkedInterrupts: true, PromptDeadlines: true}
}

// IdempotencyKey is the key of the action a node runs on its visit-th
// entry in run runID: "<run>:<node>:<visit>". A replay after a crash
// resumes the node with the same visit count, so the tool sees the same
// key; the compensation of that action has the key with ":undo" added.
func IdempotencyKey(runID, nodeID string, visit int) string {
	return runID + ":" + nodeID + ":" + strconv.Itoa(visit)
}

// stepPrefix starts the Step of every flow checkpoint: "node:<id>".
const stepPrefix = "node:"

// CanResume accepts the flow's own checkpoints: Step "node:<id>", a board
// and a payload that decodes to a flow state at that node; a node this
// flow no longer has, is NotAvailable; another SpecVersion is a Conflict.
func (e *Engine) CanResume(cp engine.Checkpoint) error {
	if cp.ExecID == "" {
		return errdefs.Validationf("flow checkpoint at step %q: no exec id", cp.Step)
	}
	id, ok := strings.CutPrefix(cp.Step, stepPrefix)
	if !ok {
		return errdefs.Validationf("flow checkpoint of run %q: step %q is not %q followed by a node id", cp.ExecID, cp.Step, stepPrefix)
	}
	if cp.Board == nil {
		return errdefs.Validationf("flow checkpoint of run %q at step %q: no board", cp.ExecID, cp.Step)
	}
	st, err := decodeState(cp.Payload)
	if err != nil || st.Node != id {
		return errdefs.Validationf("flow checkpoint of run %q at step %q: payload is not the flow state at that node (%v)", cp.ExecID, cp.Step, err)
	}
	if err := engine.CheckSpecVersion("flow", cp, e.cfg.SpecVersion); err != nil {
		return err
	}
	if _, ok := e.cfg.Flow.nodes[id]; !ok {
		return errdefs.NotAvailablef("flow checkpoint of run %q: node %q is not in flow %s", cp.ExecID, id, e.cfg.Flow.name)
	}
	return nil
}

// Execute runs the flow from its entry node, or from the node a
// ResumeFrom checkpoint was taken at, until it ends, parks for input, is
// interrupted or fails (see the package documentation).
func (e *Engine) Execute(ctx context.Context, run engine.Run, host engine.Host, board *engine.Board) (_ *engine.Board, err error) {
	if host == nil {
		host = engine.NoopHost{}
	}
	if board == nil {
		board = engine.NewBoard()
	}
	x := &execution{e: e, f: e.cfg.Flow, ctx: ctx, run: run, host: host, board: board,
		agent: e.agentID(run), intr: host.Interrupts(), startedAt: time.Now().UTC()}
	if cp := run.ResumeFrom; cp != nil {
		if err := engine.ValidateResume(run); err != nil {
			return board, err
		}
		if err := e.CanResume(*cp); err != nil {
			return board, err
		}
		board.RestoreFrom(cp.Board)
		x.st, _ = decodeState(cp.Payload) // CanResume decoded it
		if !cp.OriginalStartedAt.IsZero() {
			x.startedAt = cp.OriginalStartedAt
		}
	} else {
		x.st = newState(x.f, nil)
		x.seed(board)
		if err := x.checkpoint(); err != nil {
			return board, err
		}
	}
	if rc, ok := engine.ResumeContextFromContext(ctx); ok && !rc.StartedAt.IsZero() {
		x.startedAt = rc.StartedAt
	}
	return board, x.loop()
}

// agentID is the agent part of the run's step actors.
func (e *Engine) agentID(run engine.Run) string {
	if e.cfg.AgentID != "" {
		return e.cfg.AgentID
	}
	if id := run.Attributes[engine.AttrAgentID]; id != "" {
		return id
	}
	return "flow"
}

// seed binds the message that started the run: its text is the first
// input (and sys.ans, sys.message); a JSON object in a data part is
// merged into the context, as initial values.
func (x *execution) seed(board *engine.Board) {
	msgs := board.ChannelView(engine.MainChannel)
	for i := len(msgs) - 1; i >= 0; i-- {
		m := msgs[i]
		if m.Role != model.RoleUser {
			continue
		}
		if t := strings.TrimSpace(m.Text()); t != "" {
			x.st.Input, x.st.Sys["ans"], x.st.Sys["message"] = t, t, t
		}
		for _, p := range m.Parts {
			if p.Type != model.PartData {
				continue
			}
			if v, err := decodeJSON(p.Data); err == nil {
				if obj, ok := v.(map[string]any); ok {
					for k, val := range obj {
						x.st.Context[k] = val
					}
				}
			}
		}
		return
	}
}

// jsonArgs encodes rendered arguments for the tool registry.
func jsonArgs(v any) (json.RawMessage, error) {
	if v == nil {
		return json.RawMessage("{}"), nil
	}
	return json.Marshal(v)
}
