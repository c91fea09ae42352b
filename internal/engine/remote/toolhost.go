package remote

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"time"

	"agentd/internal/engine"
	"agentd/internal/model"
	"agentd/internal/tool"
)

// toolHost is the host of a peer tool's remote run, on the caller's side:
// the run's answer tokens and artifacts become progress of the caller's
// run, its question is the caller's, its usage the caller's; it receives
// the interrupt that stops the call (the caller's cancel), and keeps the
// artifacts for the result. Checkpoints are discarded here: agentd's
// runtime keeps the child run's own (ChildRunner), and in-process a call
// that did not finish starts again.
type toolHost struct {
	parent engine.Host
	runID  string
	call   engine.ToolProgress // Tool, CallID and Source of every progress
	intr   chan engine.Interrupt
	stopAF func() bool
	cancel context.CancelCauseFunc

	mu        sync.Mutex
	artifacts []model.Artifact
	grace     *time.Timer // cancels the run's context after an interrupt
	stopped   bool
}

var (
	_ engine.Host = (*toolHost)(nil)
)

// newToolHost returns the host and the context the remote run runs
// under. That context is not ctx: an interrupt cancels ctx (the loop
// stops its tools that way) but must reach the remote run as an
// interrupt, which then cancels the peer task or leaves it for the next
// attempt — canceled along with ctx, the run would just stop. So an
// interrupt is delivered on Interrupts, and the context is canceled only
// after grace (the remote run did not stop by then) or at once when ctx
// ends for another reason.
func newToolHost(ctx context.Context, parent engine.Host, runID string, call engine.ToolProgress, grace time.Duration) (*toolHost, context.Context) {
	h := &toolHost{parent: parent, runID: runID, call: call, intr: make(chan engine.Interrupt, 1)}
	run, cancel := context.WithCancelCause(context.WithoutCancel(ctx))
	h.cancel = cancel
	h.stopAF = context.AfterFunc(ctx, func() {
		var ie engine.InterruptedError
		if !errors.As(context.Cause(ctx), &ie) {
			cancel(context.Cause(ctx))
			return
		}
		select {
		case h.intr <- ie.Interrupt:
		default:
		}
		h.mu.Lock()
		defer h.mu.Unlock()
		if !h.stopped {
			h.grace = time.AfterFunc(grace, func() { cancel(context.Cause(ctx)) })
		}
	})
	return h, run
}

// stop ends the watch and the run's context.
func (h *toolHost) stop() {
	h.stopAF()
	h.mu.Lock()
	h.stopped = true
	if h.grace != nil {
		h.grace.Stop()
	}
	h.mu.Unlock()
	h.cancel(nil)
}

// progress publishes p (with the call's names) as the caller's progress.
func (h *toolHost) progress(ctx context.Context, p engine.ToolProgress) {
	if h.runID == "" {
		return
	}
	p.Tool, p.CallID, p.Source = h.call.Tool, h.call.CallID, h.call.Source
	_ = h.parent.Publish(ctx, p)
}

// Publish turns the remote run's answer tokens and artifacts into
// progress; its step events stay in its own log.
func (h *toolHost) Publish(ctx context.Context, ev engine.Event) error {
	switch e := ev.(type) {
	case engine.ArtifactUpdate:
		h.keep(e)
		h.progress(ctx, engine.ToolProgress{Artifact: &e.Artifact})
	case engine.Token:
		if e.Text != "" {
			h.progress(ctx, engine.ToolProgress{Text: e.Text})
		}
	}
	return nil
}

// keep merges an artifact chunk into the result's artifacts.
func (h *toolHost) keep(a engine.ArtifactUpdate) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for i := range h.artifacts {
		if h.artifacts[i].ID == a.Artifact.ID {
			if a.Append {
				h.artifacts[i].Parts = append(h.artifacts[i].Parts, a.Artifact.Parts...)
			} else {
				h.artifacts[i] = a.Artifact
			}
			return
		}
	}
	h.artifacts = append(h.artifacts, a.Artifact)
}

func (h *toolHost) Interrupts() <-chan engine.Interrupt { return h.intr }

// AskUser asks the caller's user; agentd's runtime parks the caller.
func (h *toolHost) AskUser(ctx context.Context, p engine.UserPrompt) (engine.UserReply, error) {
	h.progress(ctx, engine.ToolProgress{State: "input-required"})
	p.Source = h.call.Tool + ":" + h.call.CallID
	return h.parent.AskUser(ctx, p)
}

func (h *toolHost) Checkpoint(context.Context, engine.Checkpoint) error { return nil }

func (h *toolHost) ReportUsage(ctx context.Context, modelName string, u model.TokenUsage) error {
	return h.parent.ReportUsage(ctx, modelName, u)
}

// result is the tool's result: the peer's answer as content, its
// artifacts as data (and as content when there is no text).
func (h *toolHost) result(out *engine.Board) (tool.Result, error) {
	r := tool.Result{Content: answerOf(out)}
	h.mu.Lock()
	arts := h.artifacts
	h.mu.Unlock()
	if len(arts) > 0 {
		b, err := json.Marshal(map[string]any{"artifacts": arts})
		if err != nil {
			return tool.Result{}, err
		}
		r.Data = b
		if r.Content == "" {
			r.Content = string(b)
		}
	}
	if r.Content == "" {
		r.Content = "(the peer agent answered with nothing)"
	}
	return r, nil
}
