package goal

import (
	"context"
	"fmt"
	"strings"
	"time"

	"agentd/internal/engine"
	"agentd/internal/engine/graph"
	"agentd/internal/errdefs"
	"agentd/internal/llm"
)

// Config describes one goal agent. New validates it.
type Config struct {
	// Planner is the model that writes the plan; Model names it ("":
	// the provider's default). Required.
	Planner llm.Provider
	Model   string
	// Instructions are added to the planner's system prompt.
	Instructions string
	// Agents are the agents a plan may use, each as a step's agent by its
	// ID. At least one.
	Agents []Agent
	// Steps resolves the plan's agents to the engines that run its steps
	// (an agent of the plan is {model: "agent:<ID>"}). Required.
	Steps graph.Agents
	// Approval makes a person approve, edit or reject each plan before it
	// runs.
	Approval bool
	// MaxRetries bounds how often an invalid plan goes back to the
	// planner (default 2; -1: never).
	MaxRetries int
	// AgentID names the agent in its events ("" : the run's agent_id
	// attribute, then "goal").
	AgentID string
	// SpecVersion identifies the agent's configuration in checkpoints; a
	// resume from another version is refused.
	SpecVersion string
}

// Agent is one agent a plan may use: a hosted agent, by id, and what it
// does (the planner chooses by the description).
type Agent struct {
	ID          string
	Description string
}

// DefaultMaxRetries is how often an invalid plan goes back to the planner
// when Config.MaxRetries is 0.
const DefaultMaxRetries = 2

// Engine runs goal runs. It is immutable after New and safe for
// concurrent use.
type Engine struct{ cfg Config }

var (
	_ engine.Engine    = (*Engine)(nil)
	_ engine.Describer = (*Engine)(nil)
)

// New checks cfg.
func New(cfg Config) (*Engine, error) {
	switch {
	case cfg.Planner == nil:
		return nil, errdefs.Validationf("goal: no planner model")
	case cfg.Steps == nil:
		return nil, errdefs.Validationf("goal: nothing to resolve the plan's agents (Steps)")
	case len(cfg.Agents) == 0:
		return nil, errdefs.Validationf("goal: no agents a plan may use")
	}
	for i, a := range cfg.Agents {
		if a.ID == "" {
			return nil, errdefs.Validationf("goal: agents[%d]: no id", i)
		}
	}
	if cfg.MaxRetries == 0 {
		cfg.MaxRetries = DefaultMaxRetries
	}
	cfg.MaxRetries = max(cfg.MaxRetries, 0)
	return &Engine{cfg: cfg}, nil
}

// Capabilities: a checkpoint at the end of each phase and after every
// step of the plan, resume from any of them, and a prompt for approval.
func (e *Engine) Capabilities() engine.Capabilities {
	return engine.Capabilities{SupportsResume: true, EmitsCheckpoint: true, EmitsUserPrompt: true}
}

// CanResume accepts the engine's own checkpoints.
func (e *Engine) CanResume(cp engine.Checkpoint) error {
	if !strings.HasPrefix(cp.Step, stepPrefix) {
		return errdefs.Validationf("goal checkpoint of run %q: step %q is not one of the goal engine's (%q…)", cp.ExecID, cp.Step, stepPrefix)
	}
	if cp.Board == nil {
		return errdefs.Validationf("goal checkpoint of run %q at %q: no board", cp.ExecID, cp.Step)
	}
	if _, err := decodeState(cp.Payload); err != nil {
		return errdefs.Validationf("goal checkpoint of run %q at %q: %w", cp.ExecID, cp.Step, err)
	}
	return engine.CheckSpecVersion("goal", cp, e.cfg.SpecVersion)
}

// Execute plans, asks for approval when configured, and runs the plan.
// With run.ResumeFrom it goes on from the phase the checkpoint ended.
func (e *Engine) Execute(ctx context.Context, run engine.Run, host engine.Host, board *engine.Board) (*engine.Board, error) {
	if host == nil {
		host = engine.NoopHost{}
	}
	if board == nil {
		board = engine.NewBoard()
	}
	st := &state{Version: stateVersion}
	startedAt := time.Now().UTC()
	if cp := run.ResumeFrom; cp != nil {
		if err := engine.ValidateResume(run); err != nil {
			return board, err
		}
		if err := e.CanResume(*cp); err != nil {
			return board, err
		}
		board.RestoreFrom(cp.Board)
		st, _ = decodeState(cp.Payload)
		if !cp.OriginalStartedAt.IsZero() {
			startedAt = cp.OriginalStartedAt
		}
	}
	if rc, ok := engine.ResumeContextFromContext(ctx); ok && !rc.StartedAt.IsZero() {
		startedAt = rc.StartedAt
	}
	x := &execution{e: e, ctx: ctx, run: run, host: host, board: board, st: st, startedAt: startedAt, actor: e.actor(run)}
	return board, x.execute()
}

// actor is the agent id the run's events carry.
func (e *Engine) actor(run engine.Run) string {
	if e.cfg.AgentID != "" {
		return e.cfg.AgentID
	}
	if id := run.Attributes[engine.AttrAgentID]; id != "" {
		return id
	}
	return "goal"
}

// agentIDs lists the ids of the agents a plan may use.
func (e *Engine) agentIDs() []string {
	ids := make([]string, len(e.cfg.Agents))
	for i, a := range e.cfg.Agents {
		ids[i] = a.ID
	}
	return ids
}

func (e *Engine) allowed(id string) (Agent, bool) {
	for _, a := range e.cfg.Agents {
		if a.ID == id {
			return a, true
		}
	}
	return Agent{}, false
}

// quoted lists ids as "a", "b".
func quoted(ids []string) string {
	q := make([]string, len(ids))
	for i, id := range ids {
		q[i] = fmt.Sprintf("%q", id)
	}
	return strings.Join(q, ", ")
}
