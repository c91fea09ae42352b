package goal

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	"agentd/internal/engine"
	"agentd/internal/engine/graph"
	"agentd/internal/errdefs"
	"agentd/internal/model"
)

// runPlan runs the accepted plan as a graph workflow. The plan is
// checkpointed first, unless the graph has checkpointed already: a resume
// from there on never plans again. The outcome of every step is published
// as the "result" artifact.
func (x *execution) runPlan() error {
	if err := x.stopped(); err != nil {
		return err
	}
	wf, err := parsePlan(x.st.Plan)
	if err != nil {
		return errdefs.Internalf("goal agent %q: the accepted plan no longer parses: %w", x.actor, err)
	}
	eng, err := graph.New(graph.Config{Workflow: wf, Agents: x.e.cfg.Steps, AgentID: x.actor})
	if err != nil {
		return fmt.Errorf("goal agent %q: plan %q: %w", x.actor, wf.Name, err)
	}
	if x.st.Graph == nil {
		if err := x.checkpoint(stepAccepted, nil); err != nil {
			return err
		}
	}
	h := &graphHost{Host: x.host, x: x}
	run := x.run
	run.ResumeFrom = x.graphResume()
	_, err = eng.Execute(x.ctx, run, h, x.board)
	if isStop(err) {
		return err // the attempt that goes on publishes the result
	}
	x.publishResult(wf, h.last())
	return err
}

// graphHost is the graph engine's host: the goal's, but for checkpoints,
// which it wraps in the goal's own (the plan beside the graph's payload),
// and child runs, which it hands to the goal's host when that runs them.
type graphHost struct {
	engine.Host
	x *execution

	mu   sync.Mutex
	prev *graphCheckpoint // the latest checkpoint of the graph
}

var _ engine.ChildRunner = (*graphHost)(nil)

// Checkpoint writes the graph's checkpoint as the goal's "goal:graph:<step>".
func (h *graphHost) Checkpoint(ctx context.Context, cp engine.Checkpoint) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	x := h.x
	x.st.Graph = &graphCheckpoint{Step: cp.Step, Iteration: cp.Iteration, Payload: cp.Payload}
	h.prev = x.st.Graph
	return x.checkpoint(stepGraph+cp.Step, &cp)
}

// RunChild runs a step's child run through the goal's host when it is an
// engine.ChildRunner, else here, as the graph engine would.
func (h *graphHost) RunChild(ctx context.Context, c engine.ChildRun, eng engine.Engine, board *engine.Board) (*engine.Board, error) {
	if cr, ok := h.Host.(engine.ChildRunner); ok {
		return cr.RunChild(ctx, c, eng, board)
	}
	return eng.Execute(ctx, c.Run, c.Host, board)
}

// last is the graph's latest checkpoint in this attempt, else the one the
// run resumed from.
func (h *graphHost) last() *graphCheckpoint {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.prev != nil {
		return h.prev
	}
	return h.x.st.Graph
}

// publishResult publishes the "result" artifact: every top-level step of
// the plan with its status (pending when it has no result yet), in the
// plan's order, as a list in words and as data.
func (x *execution) publishResult(wf *graph.Workflow, last *graphCheckpoint) {
	var results map[string]*graph.StepResult
	done := false
	if last != nil {
		results, done, _ = graph.CheckpointResults(engine.Checkpoint{Payload: last.Payload})
	}
	type step struct {
		ID      string `json:"id"`
		Agent   string `json:"agent,omitempty"`
		Status  string `json:"status"`
		Content string `json:"content,omitempty"`
		Error   string `json:"error,omitempty"`
	}
	out := struct {
		Workflow string `json:"workflow"`
		Done     bool   `json:"done"`
		Steps    []step `json:"steps"`
	}{Workflow: wf.Name, Done: done}
	var b strings.Builder
	fmt.Fprintf(&b, "Workflow %q:", wf.Name)
	for _, s := range wf.Steps {
		st := step{ID: s.ID, Agent: s.Agent, Status: "pending"}
		if r := results[s.ID]; r != nil {
			st.Status, st.Content, st.Error = string(r.Status), r.Content, r.Error
		}
		out.Steps = append(out.Steps, st)
		fmt.Fprintf(&b, "\n- %s: %s", st.ID, st.Status)
		if st.Error != "" {
			fmt.Fprintf(&b, " (%s)", st.Error)
		}
	}
	data, err := model.DataPart(out)
	if err != nil {
		return
	}
	x.publish(engine.ArtifactUpdate{LastChunk: true, Artifact: model.Artifact{
		ID: "goal-result", Name: "result", Description: "Every step of the plan and its outcome",
		Parts: []model.Part{model.TextPart(b.String()), data},
	}})
}

// isStop reports whether err stops the run rather than failing it.
func isStop(err error) bool {
	return errdefs.IsInterrupted(err) || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)
}
