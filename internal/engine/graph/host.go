package graph

import (
	"context"
	"slices"
	"sync"

	"agentd/internal/engine"
	"agentd/internal/model"
)

// childHost is the parent's side of the child run that executes one agent
// step: the engine.Host of the child when the engine runs it in-process,
// the ChildRun.Host when the host's engine.ChildRunner runs it. The
// child's events — whatever its run id — become the parent run's, nested
// under the step: the child's actor <a> is published as
// "<workflow agent>.node.<step>/<a>", its artifacts get the step's name in
// front. It receives the parent's interrupts, asks the
// user through the parent's host (a prompt parks the whole workflow),
// keeps the usage it reports while passing it on, and — in-process —
// discards checkpoints: without a ChildRunner, a step that did not finish
// runs again from its start on resume.
type childHost struct {
	x      *execution
	stepID string
	inbox  chan engine.Interrupt

	mu    sync.Mutex
	usage model.TokenUsage
	// offered lists the ids of the mailbox messages the child was given.
	offered []string
}

var (
	_ engine.Host           = (*childHost)(nil)
	_ engine.FeedbackSource = (*childHost)(nil)
)

// newChildHost registers the child's interrupt inbox; release removes it.
func (x *execution) newChildHost(stepID string) *childHost {
	h := &childHost{x: x, stepID: stepID, inbox: make(chan engine.Interrupt, 1)}
	x.mu.Lock()
	if x.intr != nil {
		h.inbox <- *x.intr
	}
	x.children[h.inbox] = struct{}{}
	x.mu.Unlock()
	return h
}

func (h *childHost) release() {
	h.x.mu.Lock()
	delete(h.x.children, h.inbox)
	h.x.mu.Unlock()
}

// Publish re-homes the child's event in the parent run: its artifacts
// under the step's name, its steps and stream under the step's actor
// ("<workflow>.node.<step>/<child agent>"); the rest (its plan, its
// progress, governance) stays in the child's own log.
func (h *childHost) Publish(ctx context.Context, ev engine.Event) error {
	x := h.x
	actor := func(child string) string {
		agent, _ := engine.ParseStepActor(child)
		return engine.NodeActor(x.actor, h.stepID+"/"+agent)
	}
	step := func(s engine.Step) engine.Step {
		s.RunID, s.Actor = x.run.ID, actor(s.Actor)
		return s
	}
	switch e := ev.(type) {
	case engine.ArtifactUpdate:
		e.Artifact.ID = "step-" + h.stepID + "-" + e.Artifact.ID
		ev = e
	case engine.StepStarted:
		ev = engine.StepStarted{Step: step(e.Step)}
	case engine.StepCompleted:
		ev = engine.StepCompleted{Step: step(e.Step)}
	case engine.StepFailed:
		ev = engine.StepFailed{Step: step(e.Step), Err: e.Err}
	case engine.Token:
		e.Actor = actor(e.Actor)
		ev = e
	case engine.ToolCall:
		e.Actor = actor(e.Actor)
		ev = e
	case engine.ToolResult:
		e.Actor = actor(e.Actor)
		ev = e
	default:
		return nil
	}
	return x.host.Publish(ctx, ev)
}

// Interrupts delivers the parent's interrupt to the child.
func (h *childHost) Interrupts() <-chan engine.Interrupt { return h.inbox }

// AskUser asks through the parent's host.
func (h *childHost) AskUser(ctx context.Context, prompt engine.UserPrompt) (engine.UserReply, error) {
	if prompt.Source == "" {
		prompt.Source = engine.NodeActor(h.x.actor, h.stepID)
	}
	return h.x.host.AskUser(ctx, prompt)
}

// Checkpoint discards the child's checkpoints.
func (h *childHost) Checkpoint(context.Context, engine.Checkpoint) error { return nil }

// ReportUsage counts the step's usage and passes it on; the parent's
// BudgetExceeded answer reaches the child.
func (h *childHost) ReportUsage(ctx context.Context, modelName string, u model.TokenUsage) error {
	h.mu.Lock()
	h.usage = h.usage.Add(u)
	h.mu.Unlock()
	return h.x.host.ReportUsage(ctx, modelName, u)
}

func (h *childHost) total() model.TokenUsage {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.usage
}

// TakeFeedback gives the child the messages of its step's mailbox it was
// not given yet (mailbox.go); they are delivered once the child succeeds.
func (h *childHost) TakeFeedback() []model.Message {
	if h.stepID == Coordinator {
		return nil // its turns carry its messages (coordinatorPrompt, ReadInboxTool)
	}
	var out []model.Message
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, m := range h.x.pending(h.stepID) {
		if !slices.Contains(h.offered, m.ID) {
			h.offered = append(h.offered, m.ID)
			out = append(out, m.asFeedback())
		}
	}
	return out
}

// taken lists the messages the child was given.
func (h *childHost) taken() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Clone(h.offered)
}
