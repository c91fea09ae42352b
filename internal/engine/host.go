package engine

import (
	"context"
	"encoding/json"
	"strings"

	"agentd/internal/errdefs"
	"agentd/internal/model"
)

// Host is what a runtime offers a running engine. It is a composition of
// single-method interfaces so that code below the engine (steps, tools)
// asks for the least it needs — Publisher alone is the common case.
// Implementations are safe for concurrent use.
type Host interface {
	Publisher
	Interrupter
	UserPrompter
	Checkpointer
	UsageReporter
}

// Publisher hands one event of the run to the host (events.go lists the
// kinds). A publish error is an observability problem, not a control-flow
// signal: engines record it and carry on rather than failing the run. A
// host publishes whether or not ctx is done — the cancel and deadline
// paths need their step failures too — so engines pass the run's ctx as
// it is.
type Publisher interface {
	Publish(ctx context.Context, ev Event) error
}

// Interrupter exposes the host's cooperative-interrupt channel. Engines
// select on it between steps (and while waiting) and answer a received
// Interrupt with Interrupted(intr). A nil channel never fires; a closed one
// means no further interrupts will come, so engines must treat a receive
// of the zero value with ok == false as "stop watching", not as a request.
type Interrupter interface {
	Interrupts() <-chan Interrupt
}

// UserPrompter asks the end user something and waits for the answer.
// Hosts without user interaction return an errdefs.NotAvailable error; a
// host may also park the run (checkpoint, return an interrupt) and resume
// it when the reply arrives, as agentd's runtime does.
type UserPrompter interface {
	AskUser(ctx context.Context, prompt UserPrompt) (UserReply, error)
}

// Checkpointer persists a checkpoint at a safe boundary. The host decides
// whether and where to write; engines must not assume durability. Hosts
// without checkpointing return nil so engines can call it unconditionally.
type Checkpointer interface {
	Checkpoint(ctx context.Context, cp Checkpoint) error
}

// UsageReporter receives the token usage of each model call, as a delta,
// with the name of the model called ("" when the engine's configuration
// names none). The host accumulates it — by model, so that it can be
// priced. An errdefs.BudgetExceeded error means the budget
// is spent: the engine stops cost-incurring work and returns that error
// from Execute. Any other error is observability only and is ignored.
type UsageReporter interface {
	ReportUsage(ctx context.Context, modelName string, usage model.TokenUsage) error
}

// UserPrompt is what an engine asks the host to relay to the user. It is
// one level below a chat message: multi-modal Parts without a Role, which
// is a chat concept the engine has no business naming.
type UserPrompt struct {
	// Parts is the question itself (text, data, files).
	Parts []model.Part `json:"parts"`
	// Schema optionally describes the expected answer as a JSON Schema,
	// for hosts that render a form or validate the reply.
	Schema json.RawMessage `json:"schema,omitempty"`
	// Source names the step that asks (its step actor), for correlation
	// and resume.
	Source string `json:"source,omitempty"`
	// Metadata is passed through to the host untouched.
	Metadata map[string]string `json:"metadata,omitempty"`
	// Auth says the engine needs credentials rather than an answer: the
	// run waits in auth-required instead of input-required, and the
	// reply carries the credentials.
	Auth bool `json:"auth,omitempty"`
}

// UserReply is the user's answer to a UserPrompt: the parts the user sent
// (text, data for a form answer, files) and host metadata about the reply
// (for example the id of the message that carried it). An empty Parts
// slice is a valid, empty answer.
type UserReply struct {
	Parts    []model.Part      `json:"parts"`
	Metadata map[string]string `json:"metadata,omitempty"`
}

// Text concatenates the reply's text parts, the common case for prompts
// that expect a typed answer.
func (r UserReply) Text() string {
	var b strings.Builder
	for _, p := range r.Parts {
		if p.Type == model.PartText {
			b.WriteString(p.Text)
		}
	}
	return b.String()
}

// NoopHost is a Host for tests and embedded use outside any runtime: it
// discards events, checkpoints and usage, never interrupts, and refuses to
// prompt the user.
type NoopHost struct{}

// Publish discards ev.
func (NoopHost) Publish(context.Context, Event) error { return nil }

// Interrupts returns nil: interrupts never fire.
func (NoopHost) Interrupts() <-chan Interrupt { return nil }

// AskUser returns an errdefs.NotAvailable error: nobody can answer.
func (NoopHost) AskUser(_ context.Context, prompt UserPrompt) (UserReply, error) {
	return UserReply{}, errdefs.NotAvailablef("ask user (source %q): host has no user interaction", prompt.Source)
}

// Checkpoint discards cp.
func (NoopHost) Checkpoint(context.Context, Checkpoint) error { return nil }

// ReportUsage discards usage; NoopHost has no budget.
func (NoopHost) ReportUsage(context.Context, string, model.TokenUsage) error { return nil }
