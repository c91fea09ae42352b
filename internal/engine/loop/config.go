package loop

import (
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"agentd/internal/errdefs"
	"agentd/internal/llm"
	"agentd/internal/model"
	"agentd/internal/tool"
)

// DefaultMaxIterations bounds the model turns of a run when
// Config.MaxIterations is zero.
const DefaultMaxIterations = 8

// Config describes one loop agent. New validates it and keeps a copy.
type Config struct {
	// Provider streams the model turns. Required.
	Provider llm.Provider
	// Model names the model; empty means the provider's default.
	Model string
	// SystemPrompt is sent first in every request; it is never stored on
	// the board. Empty sends none.
	SystemPrompt string
	// Tools is the registry the allowed tools come from; required when
	// ToolNames is not empty.
	Tools *tool.Registry
	// ToolNames is the allow-list of tools the model is offered and may
	// call; empty offers none. A call to any other tool is answered with an
	// error result and never reaches the registry.
	ToolNames []string
	// MaxIterations bounds the model turns of one run; zero means
	// DefaultMaxIterations.
	MaxIterations int
	// Temperature is nil for the provider's default.
	Temperature *float64
	// MaxTokens caps each answer; zero means the provider's default.
	MaxTokens int
	// TopP is nil for the provider's default.
	TopP *float64
	// TurnTimeout bounds one model turn (the stream of one answer); zero
	// means no bound beyond the run's. A turn that passes it fails the run
	// with a Timeout naming it.
	TurnTimeout time.Duration
	// DisallowedTools are never offered nor run, even when ToolNames lists
	// them (a workflow step's or an operator's veto over an agent's tools).
	DisallowedTools []string
	// ResponseSchema, when set, is the JSON Schema the final answer must
	// match (see structured.go); ResponseRetries bounds how often an
	// answer that does not is sent back (0 = DefaultResponseRetries).
	ResponseSchema  json.RawMessage
	ResponseRetries int
	// ResponseStrict asks the provider to enforce the schema exactly
	// (OpenAI's strict structured outputs, which want every property
	// required and additionalProperties false).
	ResponseStrict bool
	// SchemaInPrompt puts the response schema in the system prompt instead
	// of sending it as the request's response format: for models and
	// servers that take none (choice.go).
	SchemaInPrompt bool
	// OnLength is what an answer cut at max_tokens leads to: "continue"
	// (the default) asks the model to go on, at most MaxContinuations
	// times (0 = DefaultMaxContinuations); "compact" compacts the history
	// and asks again, once; "fail" fails the run at once (finish.go).
	OnLength         string
	MaxContinuations int
	// ToolChoice is the agent's tool choice (choice.go); the zero value is
	// the provider's default. A request may set its own.
	ToolChoice llm.ToolChoice
	// MaxToolCalls bounds the tool calls of one run (0 = no bound); the
	// turn whose calls pass it has all of them answered unrun (a batch of
	// parallel calls is not split) and the run fails with BudgetExceeded.
	MaxToolCalls int
	// ApprovalTools are tools whose calls wait for a human's approval
	// besides those whose own flags say so (tool.Flags.Approval).
	ApprovalTools []string
	// ApprovalTimeout rejects the calls still waiting for approval this
	// long after they were proposed (0: they wait until answered).
	ApprovalTimeout time.Duration
	// Governance is the tool-call policy (governance.go); the zero value
	// is disabled.
	Governance Governance
	// ContextWindow is the model's window in tokens (0:
	// DefaultContextWindow) and CompactThreshold the fraction of it a
	// request may fill before old tool results are elided and the oldest
	// history summarised (0: DefaultCompactThreshold); see context.go.
	ContextWindow    int
	CompactThreshold float64
	// Now is the clock approvals are timed by (nil: time.Now).
	Now func() time.Time
	// AgentID is the step actor of every event the engine publishes and
	// the Name of its assistant messages. Empty falls back to the run's
	// engine.AttrAgentID attribute, then to "agent".
	AgentID string
	// SpecVersion identifies this configuration in checkpoints; a resume
	// from a checkpoint of another non-empty version is refused as a
	// Conflict (engine.CheckSpecVersion).
	SpecVersion string
	// NewMessageID mints the id of each message the engine appends; nil
	// uses a random UUIDv7. Hosts that mint ids themselves set it.
	NewMessageID func() string
	// Effects overrides, by tool name, the effect kind a tool declares
	// (effects.go); InDoubt is the policy for a call found in doubt, by
	// tool name or "*" for any (unset: tool.DefaultDoubtPolicy).
	Effects map[string]tool.Effects
	InDoubt map[string]string
}

// who names the configuration in validation errors.
func (cfg *Config) who() string {
	if cfg.AgentID == "" {
		return "loop config"
	}
	return fmt.Sprintf("loop agent %q", cfg.AgentID)
}

// validate checks cfg and fills its defaults.
func (cfg *Config) validate() error {
	if cfg.Provider == nil {
		return errdefs.Validationf("%s: provider is required", cfg.who())
	}
	if cfg.MaxIterations < 0 {
		return errdefs.Validationf("%s: max_iterations %d: must not be negative", cfg.who(), cfg.MaxIterations)
	}
	if cfg.MaxIterations == 0 {
		cfg.MaxIterations = DefaultMaxIterations
	}
	if cfg.MaxTokens < 0 {
		return errdefs.Validationf("%s: max_tokens %d: must not be negative", cfg.who(), cfg.MaxTokens)
	}
	if cfg.NewMessageID == nil {
		cfg.NewMessageID = model.NewID
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if err := cfg.validateEffects(); err != nil {
		return err
	}
	if cfg.ApprovalTimeout < 0 {
		return errdefs.Validationf("%s: approval_timeout %v: must not be negative", cfg.who(), cfg.ApprovalTimeout)
	}
	if cfg.ResponseRetries < 0 {
		return errdefs.Validationf("%s: response_retries %d: must not be negative", cfg.who(), cfg.ResponseRetries)
	}
	if cfg.ResponseRetries == 0 {
		cfg.ResponseRetries = DefaultResponseRetries
	}
	if err := cfg.validateContext(); err != nil {
		return err
	}
	if cfg.TurnTimeout < 0 {
		return errdefs.Validationf("%s: turn_timeout %v: must not be negative", cfg.who(), cfg.TurnTimeout)
	}
	for i, name := range cfg.DisallowedTools {
		if cfg.Tools == nil {
			break
		}
		if _, ok := cfg.Tools.Get(name); !ok {
			return errdefs.Validationf("%s: disallowed_tools[%d]: unknown tool %q (registered: %q)", cfg.who(), i, name, cfg.Tools.Names())
		}
	}
	cfg.ToolNames = slices.DeleteFunc(slices.Clone(cfg.ToolNames), func(n string) bool { return slices.Contains(cfg.DisallowedTools, n) })
	if len(cfg.ToolNames) > 0 && cfg.Tools == nil {
		return errdefs.Validationf("%s: tools %q listed without a tool registry", cfg.who(), cfg.ToolNames)
	}
	for i, name := range cfg.ToolNames {
		if slices.Contains(cfg.ToolNames[:i], name) {
			return errdefs.Validationf("%s: tools[%d]: tool %q listed twice", cfg.who(), i, name)
		}
		if _, ok := cfg.Tools.Get(name); !ok {
			return errdefs.Validationf("%s: tools[%d]: unknown tool %q (registered: %q)",
				cfg.who(), i, name, cfg.Tools.Names())
		}
	}
	if err := cfg.validateAnswer(); err != nil {
		return err
	}
	for i, name := range cfg.ApprovalTools {
		if !slices.Contains(cfg.ToolNames, name) {
			return errdefs.Validationf("%s: approval tools[%d]: %q is not one of the agent's tools %q", cfg.who(), i, name, cfg.ToolNames)
		}
	}
	return nil
}

// validateAnswer checks the settings of the model's answers: what a cut
// one leads to, and the tool choice.
func (cfg *Config) validateAnswer() error {
	switch cfg.OnLength {
	case "":
		cfg.OnLength = OnLengthContinue
	case OnLengthContinue, OnLengthCompact, OnLengthFail:
	default:
		return errdefs.Validationf("%s: on_length %q: want %q, %q or %q", cfg.who(), cfg.OnLength, OnLengthContinue, OnLengthCompact, OnLengthFail)
	}
	if cfg.MaxContinuations < 0 {
		return errdefs.Validationf("%s: max_continuations %d: must not be negative", cfg.who(), cfg.MaxContinuations)
	}
	if cfg.MaxContinuations == 0 {
		cfg.MaxContinuations = DefaultMaxContinuations
	}
	if cfg.ToolChoice.Mode == llm.ToolChoiceTool && !slices.Contains(cfg.ToolNames, cfg.ToolChoice.Name) {
		return errdefs.Validationf("%s: tool_choice: %q is not one of the agent's tools %q", cfg.who(), cfg.ToolChoice.Name, cfg.ToolNames)
	}
	return nil
}

// toolSpecs lists the allowed tools the way a model request does. The
// registry snapshots a tool's spec at registration, so one listing at New
// serves every request.
func toolSpecs(cfg Config) ([]llm.ToolSpec, error) {
	if len(cfg.ToolNames) == 0 {
		return nil, nil
	}
	specs, err := cfg.Tools.Specs(cfg.ToolNames...)
	if err != nil {
		return nil, errdefs.Validation(fmt.Errorf("%s: %w", cfg.who(), err))
	}
	out := make([]llm.ToolSpec, len(specs))
	for i, s := range specs {
		out[i] = llm.ToolSpec{Name: s.Name, Description: s.Description, Parameters: s.Parameters}
	}
	return out, nil
}
