package loop

import (
	"context"
	"strconv"
	"strings"
	"time"

	"agentd/internal/engine"
	"agentd/internal/errdefs"
	"agentd/internal/llm"
	"agentd/internal/tool"
)

// Engine is the LLM tool loop. It is immutable after New and safe for
// concurrent use: each Execute keeps its state on its own stack.
type Engine struct {
	cfg     Config
	specs   []llm.ToolSpec
	allowed map[string]bool
	// schema checks final answers when Config.ResponseSchema is set.
	schema *tool.DocumentSchema
	// policy is the compiled Config.Governance; nil when disabled.
	policy *policy
}

var (
	_ engine.Engine    = (*Engine)(nil)
	_ engine.Describer = (*Engine)(nil)
)

// New validates cfg and returns the engine. A nil provider, a negative
// limit or an unknown or repeated tool name is a Validation error naming
// the field at fault.
func New(cfg Config) (*Engine, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	specs, err := toolSpecs(cfg)
	if err != nil {
		return nil, err
	}
	allowed := make(map[string]bool, len(cfg.ToolNames))
	for _, name := range cfg.ToolNames {
		allowed[name] = true
	}
	if cfg.SchemaInPrompt && len(cfg.ResponseSchema) > 0 {
		cfg.SystemPrompt = schemaPrompt(cfg.SystemPrompt, cfg.ResponseSchema)
	}
	e := &Engine{cfg: cfg, specs: specs, allowed: allowed}
	if err := e.checkFixedRegion(); err != nil {
		return nil, err
	}
	if e.policy, err = compilePolicy(cfg.who(), cfg.Governance); err != nil {
		return nil, err
	}
	if len(cfg.ResponseSchema) > 0 {
		if e.schema, err = tool.CompileDocumentSchema(cfg.who()+": response_schema", cfg.ResponseSchema); err != nil {
			return nil, err
		}
	}
	return e, nil
}

// Capabilities declares that the loop checkpoints after every iteration
// and resumes from those checkpoints; that it asks the user when a call
// may need approval; and, with an approval timeout, that its prompts
// expire.
func (e *Engine) Capabilities() engine.Capabilities {
	return engine.Capabilities{SupportsResume: true, EmitsCheckpoint: true,
		EmitsUserPrompt: e.mayAsk(), PromptDeadlines: e.mayAsk() && e.cfg.ApprovalTimeout > 0,
		HandlesParkedInterrupts: e.cancelsParked()}
}

// mayAsk reports whether a call may wait for approval.
func (e *Engine) mayAsk() bool {
	if len(e.cfg.ApprovalTools) > 0 || e.policy != nil && e.policy.mode == GovernanceEnforce {
		return true
	}
	for _, name := range e.cfg.ToolNames {
		if e.needsApproval(name) {
			return true
		}
	}
	return e.mayAskDoubt()
}

// stepPrefix starts the Step of every loop checkpoint: "iter:<n>".
const stepPrefix = "iter:"

// iterationSteps holds the Steps of the first iterations, which nearly
// every run ends within, so their checkpoints need not build the string.
var iterationSteps = func() (steps [16]string) {
	for i := range steps {
		steps[i] = stepPrefix + strconv.Itoa(i)
	}
	return steps
}()

// iterationStep is the Step of iteration n's checkpoint.
func iterationStep(n int) string {
	if n >= 0 && n < len(iterationSteps) {
		return iterationSteps[n]
	}
	return stepPrefix + strconv.Itoa(n)
}

// CanResume accepts the loop's own checkpoints: Step "iter:<n>" agreeing
// with Iteration, a board, and — when both are set — the engine's
// SpecVersion. A malformed checkpoint is a Validation error; one written
// by another configuration version is a Conflict, since its transcript
// may mention tools or a prompt this version no longer has.
func (e *Engine) CanResume(cp engine.Checkpoint) error {
	if cp.ExecID == "" {
		return errdefs.Validationf("loop checkpoint at step %q: no exec id", cp.Step)
	}
	n, err := strconv.Atoi(strings.TrimPrefix(cp.Step, stepPrefix))
	if !strings.HasPrefix(cp.Step, stepPrefix) || err != nil || n < 1 {
		return errdefs.Validationf("loop checkpoint of run %q: step %q is not %q followed by an iteration number", cp.ExecID, cp.Step, stepPrefix)
	}
	if n != cp.Iteration {
		return errdefs.Validationf("loop checkpoint of run %q: step %q disagrees with iteration %d", cp.ExecID, cp.Step, cp.Iteration)
	}
	if cp.Board == nil {
		return errdefs.Validationf("loop checkpoint of run %q at step %q: no board", cp.ExecID, cp.Step)
	}
	if err := engine.CheckSpecVersion("loop", cp, e.cfg.SpecVersion); err != nil {
		return err
	}
	_, err = pendingOf(&cp)
	return err
}

// Execute runs the loop on board's MainChannel until the model answers,
// the iteration budget is spent, or the run is interrupted or cancelled
// (see the package documentation). With run.ResumeFrom set it restores
// the checkpoint's board into board and continues after its iteration.
func (e *Engine) Execute(ctx context.Context, run engine.Run, host engine.Host, board *engine.Board) (_ *engine.Board, err error) {
	if host == nil {
		host = engine.NoopHost{}
	}
	if board == nil {
		board = engine.NewBoard()
	}
	first := 1
	startedAt := time.Now().UTC()
	var waiting *pending
	if cp := run.ResumeFrom; cp != nil {
		if err := engine.ValidateResume(run); err != nil {
			return board, err
		}
		if err := e.CanResume(*cp); err != nil {
			return board, err
		}
		board.RestoreFrom(cp.Board)
		first = cp.Iteration + 1
		if waiting, _ = pendingOf(cp); waiting != nil {
			first = cp.Iteration // its tool calls wait for approval
		}
		if !cp.OriginalStartedAt.IsZero() {
			startedAt = cp.OriginalStartedAt
		}
	}
	if rc, ok := engine.ResumeContextFromContext(ctx); ok && !rc.StartedAt.IsZero() {
		startedAt = rc.StartedAt
	}

	actor := e.actor(run)
	x := &execution{
		e: e, ctx: ctx, run: run, host: host, board: board, actor: actor, startedAt: startedAt,
		work:    interruptible{parent: ctx, ch: host.Interrupts()},
		waiting: waiting,
	}
	defer x.work.stop()
	if err := x.resolveToolChoice(); err != nil {
		return board, err
	}
	return board, x.loop(first)
}

// actor is the step actor of the run's events.
func (e *Engine) actor(run engine.Run) string {
	if e.cfg.AgentID != "" {
		return e.cfg.AgentID
	}
	if id := run.Attributes[engine.AttrAgentID]; id != "" {
		return id
	}
	return "agent"
}
