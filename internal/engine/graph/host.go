package graph

import (
	"context"
	"encoding/json"
	"strings"
	"sync"

	"agentd/internal/engine"
	"agentd/internal/event"
	"agentd/internal/model"
)

// childHost is the parent's side of the child run that executes one agent
// step: the engine.Host of the child when the engine runs it in-process,
// the ChildRun.Host when the host's engine.ChildRunner runs it. The
// child's events — whatever its run id — become the parent run's, nested
// under the step: the child's actor <a> is published as
// "<workflow agent>.node.<step>/<a>", its artifacts get the step's name in
// front; its own run start and end are dropped (it frames no runs of its
// own: engine.RunFramer). It receives the parent's interrupts, asks the
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
}

var (
	_ engine.Host      = (*childHost)(nil)
	_ engine.RunFramer = (*childHost)(nil)
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

// FramesRuns: the child's run start and end are not the parent's.
func (h *childHost) FramesRuns() bool { return true }

// Publish re-homes the child's envelope in the parent run.
func (h *childHost) Publish(ctx context.Context, env event.Envelope) error {
	rest, ok := strings.CutPrefix(string(env.Subject), engine.SubjectPrefix)
	if ok {
		_, rest, ok = strings.Cut(rest, ".") // the child's run id: one token
	}
	if !ok {
		return nil
	}
	x := h.x
	if rest == "artifact" {
		var a engine.ArtifactPayload
		if err := json.Unmarshal(env.Payload, &a); err != nil {
			return err
		}
		a.Artifact.ID = "step-" + h.stepID + "-" + a.Artifact.ID
		return engine.EmitArtifact(ctx, x.host, x.run.ID, a)
	}
	kind, actorVerb, ok := strings.Cut(rest, ".")
	if !ok || kind != "step" && kind != "stream" {
		return nil // start, end: the child's own framing; its plan
	}
	i := strings.LastIndexByte(actorVerb, '.')
	if i < 0 {
		return nil
	}
	child := env.AgentID
	if child == "" {
		child = actorVerb[:i]
	}
	actor := engine.NodeActor(x.actor, h.stepID+"/"+child)
	out := env
	out.Subject = event.Subject(engine.SubjectPrefix + engine.SanitiseID(x.run.ID) + "." + kind + "." +
		engine.SanitiseID(actor) + "." + actorVerb[i+1:])
	out.RunID = x.run.ID
	out.AgentID, out.NodeID = engine.ParseStepActor(actor)
	if kind == "step" {
		var p engine.StepPayload
		if err := json.Unmarshal(env.Payload, &p); err == nil {
			p.RunID, p.Actor = x.run.ID, actor
			if b, err := json.Marshal(p); err == nil {
				out.Payload = b
			}
		}
	}
	return x.host.Publish(ctx, out)
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
