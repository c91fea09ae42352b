package graph

import (
	"context"
	"encoding/json"
	"strings"
	"time"

	"agentd/internal/engine"
	"agentd/internal/errdefs"
)

// Config describes one workflow agent. New validates it.
type Config struct {
	// Workflow is the document to run, from Load or ParseIn (includes
	// loaded). Required.
	Workflow *Workflow
	// Agents resolves the workflow's agents to the engines that run their
	// steps. Required.
	Agents Agents
	// AgentID prefixes the step actors of the run's events
	// ("<AgentID>.node.<step>"); empty falls back to the run's agent_id
	// attribute, then to "workflow".
	AgentID string
	// MaxConcurrency bounds the steps that run an agent at once when the
	// document's options.maxConcurrency is unset (default
	// DefaultMaxConcurrency).
	MaxConcurrency int
	// RetryBackoff is the wait before a step's first retry; it doubles on
	// every further retry, up to MaxRetryBackoff. Default 1s.
	RetryBackoff time.Duration
	// SpecVersion identifies the workflow's version in checkpoints; a
	// resume from a checkpoint of another non-empty version is refused.
	SpecVersion string
	// SharedMemory gives every step's agent the shared memory tools
	// (SharedMemoryReadTool, SharedMemoryWriteTool; see memory.go).
	SharedMemory bool
	// Messaging gives every step's agent SendMessageTool: steps message
	// each other (a completed step resumes to answer) and the
	// coordinator. A Coordinator implies it.
	Messaging bool
	// Coordinator, when set, runs a coordinator agent beside the steps
	// (coordinator.go).
	Coordinator *CoordinatorConfig
	// MailboxSize bounds the undelivered messages of each mailbox
	// (default DefaultMailboxSize); a message past it is dropped.
	MailboxSize int
}

// workflowTools are the workflow tools cfg gives every step's agent.
func (cfg Config) workflowTools() []string {
	var names []string
	if cfg.SharedMemory {
		names = append(names, SharedMemoryReadTool, SharedMemoryWriteTool)
	}
	if cfg.Messaging || cfg.Coordinator != nil {
		names = append(names, SendMessageTool)
	}
	return names
}

// MaxRetryBackoff caps the wait between two attempts of a step.
const MaxRetryBackoff = 30 * time.Second

// Engine runs one workflow. It is immutable after New and safe for
// concurrent use: each Execute keeps its state in its own execution.
type Engine struct {
	cfg     Config
	wf      *Workflow
	engines map[agentKey]engine.Engine
	// coordinator is the coordinator's engine (nil: none).
	coordinator engine.Engine
	mailboxSize int
}

var (
	_ engine.Engine    = (*Engine)(nil)
	_ engine.Describer = (*Engine)(nil)
)

// New checks cfg and resolves every agent the workflow uses.
func New(cfg Config) (*Engine, error) {
	if cfg.Workflow == nil {
		return nil, errdefs.Validationf("graph: no workflow")
	}
	if cfg.Agents == nil {
		return nil, errdefs.Validationf("graph workflow %q: no Agents to run its steps", cfg.Workflow.Name)
	}
	if err := Supported(cfg.Workflow); err != nil {
		return nil, errdefs.Validationf("graph workflow %q: %w", cfg.Workflow.Name, err)
	}
	if cfg.MaxConcurrency <= 0 {
		cfg.MaxConcurrency = DefaultMaxConcurrency
	}
	if n := cfg.Workflow.Options.MaxConcurrency; n > 0 {
		cfg.MaxConcurrency = n
	}
	if cfg.RetryBackoff <= 0 {
		cfg.RetryBackoff = time.Second
	}
	if c := cfg.Coordinator; c != nil {
		own := *c // the defaults go on the engine's copy
		if own.MaxTurns <= 0 {
			own.MaxTurns = DefaultCoordinatorTurns
		}
		cfg.Coordinator = &own
	}
	engines, err := resolveAgents(cfg.Workflow, cfg.Agents, cfg.workflowTools())
	if err != nil {
		return nil, errdefs.Validationf("graph workflow %q: %w", cfg.Workflow.Name, err)
	}
	e := &Engine{cfg: cfg, wf: cfg.Workflow, engines: engines, mailboxSize: cfg.MailboxSize}
	if e.mailboxSize <= 0 {
		e.mailboxSize = DefaultMailboxSize
	}
	if c := cfg.Coordinator; c != nil {
		if e.coordinator, err = newCoordinator(cfg.Agents, c); err != nil {
			return nil, errdefs.Validationf("graph workflow %q: coordinator: %w", cfg.Workflow.Name, err)
		}
	}
	return e, nil
}

// Workflow returns the document the engine runs.
func (e *Engine) Workflow() *Workflow { return e.wf }

// Capabilities: a checkpoint after every step, resume from any of them,
// and user prompts when a step's agent asks.
func (e *Engine) Capabilities() engine.Capabilities {
	return engine.Capabilities{SupportsResume: true, EmitsCheckpoint: true, EmitsUserPrompt: true}
}

// The Step of the engine's checkpoints: "step:<namespaced id>" after a
// step, "done" after the answer.
const (
	checkpointStepPrefix = "step:"
	checkpointDone       = "done"
)

// CanResume accepts the engine's own checkpoints.
func (e *Engine) CanResume(cp engine.Checkpoint) error {
	if cp.Step != checkpointDone && !hasAnyPrefix(cp.Step, checkpointStepPrefix, checkpointMemoryPrefix, checkpointMailPrefix) {
		return errdefs.Validationf("graph checkpoint of run %q: step %q is not %q or %q, %q or %q followed by a step id",
			cp.ExecID, cp.Step, checkpointDone, checkpointStepPrefix, checkpointMemoryPrefix, checkpointMailPrefix)
	}
	if cp.Board == nil {
		return errdefs.Validationf("graph checkpoint of run %q at %q: no board", cp.ExecID, cp.Step)
	}
	if _, err := decodeState(cp.Payload); err != nil {
		return errdefs.Validationf("graph checkpoint of run %q at %q: %w", cp.ExecID, cp.Step, err)
	}
	if err := engine.CheckSpecVersion("graph", cp, e.cfg.SpecVersion); err != nil {
		return err
	}
	return nil
}

// Execute runs the workflow: it publishes the plan, runs ready steps in
// parallel, checkpoints after each, and appends the answer — the content
// of the workflow's last steps — to the board's main channel. With
// run.ResumeFrom it restores the checkpoint's board and results and runs
// only the steps that have none.
func (e *Engine) Execute(ctx context.Context, run engine.Run, host engine.Host, board *engine.Board) (_ *engine.Board, err error) {
	if host == nil {
		host = engine.NoopHost{}
	}
	if board == nil {
		board = engine.NewBoard()
	}
	st := newState()
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
	if st.Done {
		if len(st.Partial) > 0 {
			_ = host.Publish(ctx, engine.Outcome{Actor: e.actor(run), Status: engine.OutcomePartial, Detail: st.Partial})
		}
		return board, nil
	}
	x := newExecution(ctx, e, run, host, board, st, startedAt)
	defer x.close()
	return board, x.execute()
}

// actor is the agent id the run's step actors start with.
func (e *Engine) actor(run engine.Run) string {
	if e.cfg.AgentID != "" {
		return e.cfg.AgentID
	}
	if id := run.Attributes[engine.AttrAgentID]; id != "" {
		return id
	}
	return "workflow"
}

// state is the checkpoint payload: every finished step's result.
type state struct {
	Version int                    `json:"v"`
	Results map[string]*StepResult `json:"results"`
	// Request is the user's request the steps were given.
	Request string `json:"request,omitempty"`
	Done    bool   `json:"done,omitempty"`
	// Partial is the Detail of the run's engine.Outcome when it ended
	// partial, published again by an attempt that resumes a finished run.
	Partial json.RawMessage `json:"partial,omitempty"`
	// Memory is the run's shared memory: "<writer>/<key>" → value.
	Memory map[string]string `json:"memory,omitempty"`
	// Mail is the run's mailboxes and coordinator (mailbox.go).
	Mail mailState `json:"mail,omitzero"`
}

const stateVersion = 1

func hasAnyPrefix(s string, prefixes ...string) bool {
	for _, p := range prefixes {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}

func newState() *state { return &state{Version: stateVersion, Results: map[string]*StepResult{}} }

func decodeState(b json.RawMessage) (*state, error) {
	st := newState()
	if len(b) == 0 {
		return nil, errdefs.Validationf("no payload")
	}
	if err := json.Unmarshal(b, st); err != nil {
		return nil, errdefs.Validationf("payload: %w", err)
	}
	if st.Version != stateVersion {
		return nil, errdefs.Validationf("payload version %d, want %d", st.Version, stateVersion)
	}
	if st.Results == nil {
		st.Results = map[string]*StepResult{}
	}
	return st, nil
}
