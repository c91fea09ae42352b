package graph

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	"agentd/internal/engine"
	"agentd/internal/errdefs"
	"agentd/internal/model"
)

// The coordinator (zenflow's coordinator runner): an agent that runs
// beside the steps of a workflow with its own mailbox and tools
// (MessageStepTool, ReadInboxTool, NarrateTool, FinalizeTool). It acts in
// turns, each a child run of its agent keyed "coordinator#<n>": a kickoff
// turn before any step starts (its messages reach the steps' first model
// turns), a turn whenever a message reaches its mailbox while the steps
// run, and a final turn once they have all finished, which it ends with
// finalize and a summary: the workflow's answer (zenflow's
// WorkflowResult.Summary). A turn's prompt, with the messages it carries,
// is checkpointed before the turn runs, so that a turn cut by a crash
// resumes with the same messages.

// CoordinatorConfig configures a workflow's coordinator.
type CoordinatorConfig struct {
	// Model and Prompt are the coordinator agent's, resolved through the
	// Config's Agents like a workflow agent named "coordinator".
	Model  string
	Prompt string
	// MaxTurns bounds the coordinator's turns in one run (default
	// DefaultCoordinatorTurns); past it, a max_wake_cycles_warning note
	// says the coordinator stopped waking.
	MaxTurns int
}

// DefaultCoordinatorTurns bounds a coordinator's turns by default.
const DefaultCoordinatorTurns = 20

// coordState is the coordinator's progress, in the checkpoint payload.
type coordState struct {
	Turns int `json:"turns,omitempty"`
	// Prompt is the prompt of the turn under way ("" between turns).
	Prompt    string `json:"prompt,omitempty"`
	Summary   string `json:"summary,omitempty"`
	Finalized bool   `json:"finalized,omitempty"`
}

// The phases a coordinator turn is run for.
const (
	turnKickoff = "kickoff"
	turnInbox   = "inbox"
	turnFinal   = "final"
)

// coordinate runs the coordinator's turns while the DAG runs: one each
// time its mailbox receives a message, until done is closed.
func (x *execution) coordinate(ctx context.Context, done <-chan struct{}) error {
	for {
		select {
		case <-done:
			return nil
		case <-x.coordWake:
		}
		if len(x.pending(Coordinator)) == 0 {
			continue
		}
		if err := x.coordinatorTurn(ctx, turnInbox); err != nil {
			return err
		}
	}
}

// coordinatorTurn runs one turn of the coordinator, unless it has used
// its turns or finalized (a final turn runs once).
func (x *execution) coordinatorTurn(ctx context.Context, phase string) error {
	c := x.e.cfg.Coordinator
	x.mu.Lock()
	cs := x.st.Mail.Coordinator
	x.mu.Unlock()
	if cs.Finalized {
		return nil
	}
	if cs.Turns >= c.MaxTurns && cs.Prompt == "" {
		x.mu.Lock()
		warned := x.turnsWarned
		x.turnsWarned = true
		x.mu.Unlock()
		if !warned {
			x.note("", "max_wake_cycles_warning", map[string]any{"turns": cs.Turns, "phase": phase})
		}
		return nil
	}
	prompt := cs.Prompt
	if prompt == "" {
		prompt = x.coordinatorPrompt(phase)
		x.mu.Lock()
		x.st.Mail.Coordinator.Prompt = prompt
		x.mu.Unlock()
		if err := x.checkpoint(checkpointMailPrefix + Coordinator); err != nil {
			return err
		}
	}
	key := fmt.Sprintf("%s#%d", Coordinator, cs.Turns+1)
	board := engine.NewBoard()
	board.AppendChannelMessage(engine.MainChannel, model.NewText(model.RoleUser, prompt))
	info := engine.Step{RunID: x.run.ID, Actor: engine.NodeActor(x.actor, Coordinator), Kind: "coordinator",
		Detail: stepDetail{Step: key, Agent: Coordinator, Attempt: 1}}
	_ = x.host.Publish(x.ctx, engine.StepStarted{Step: info})
	_, err := x.runOn(ctx, x.e.coordinator, Coordinator, Coordinator, key, board)
	if err != nil {
		_ = x.host.Publish(x.ctx, engine.StepFailed{Step: info, Err: err})
	} else {
		_ = x.host.Publish(x.ctx, engine.StepCompleted{Step: info})
	}
	if err != nil && isStop(err) {
		return x.stopOr(err)
	}
	if err != nil {
		x.note("", "error", map[string]any{"coordinator_turn": cs.Turns + 1, "error": err.Error()})
	}
	x.mu.Lock()
	x.st.Mail.Coordinator.Turns++
	x.st.Mail.Coordinator.Prompt = ""
	x.mu.Unlock()
	return x.checkpoint(checkpointMailPrefix + Coordinator)
}

// coordinatorPrompt is the user message of a turn: the workflow, its
// steps as they stand, the messages waiting in the coordinator's mailbox
// (now delivered) and what the phase asks.
func (x *execution) coordinatorPrompt(phase string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "You coordinate the workflow %q.", x.e.wf.Name)
	if x.st.Request != "" {
		fmt.Fprintf(&b, "\n\n## Request\n%s", x.st.Request)
	}
	b.WriteString("\n\n## Steps")
	for _, s := range x.e.wf.Steps {
		status := "pending"
		if r, ok := x.result(s.ID); ok {
			status = string(r.Status)
		}
		fmt.Fprintf(&b, "\n- %s (agent %s): %s", s.ID, nonEmptyOr(s.Agent, "default"), status)
	}
	inbox := x.pending(Coordinator)
	if len(inbox) > 0 {
		b.WriteString("\n\n## Messages for you")
		ids := make([]string, len(inbox))
		for i, m := range inbox {
			fmt.Fprintf(&b, "\n- from %s: %s", m.From, m.Content)
			ids[i] = m.ID
		}
		x.delivered(Coordinator, ids)
	}
	switch phase {
	case turnKickoff:
		fmt.Fprintf(&b, "\n\nThe workflow is starting. Give a step directions with %s if it needs them; %s tells the user what happens.", MessageStepTool, NarrateTool)
	case turnInbox:
		fmt.Fprintf(&b, "\n\nAnswer or pass on the messages as needed (%s).", MessageStepTool)
	case turnFinal:
		b.WriteString("\n\nEvery step has finished. Their outputs:")
		for _, s := range x.e.wf.Steps {
			if r, ok := x.result(s.ID); ok && r.Status == StepCompleted {
				fmt.Fprintf(&b, "\n\n### %s\n%s", s.ID, truncate(r.Content, MaxDependencyBytes))
			}
		}
		fmt.Fprintf(&b, "\n\nCall %s with a summary of the results for the user.", FinalizeTool)
	}
	return capPrompt(b.String(), false)
}

func nonEmptyOr(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// wake signals the coordinator that its mailbox has a message.
func (x *execution) wake(to string) {
	if to != Coordinator || x.coordWake == nil {
		return
	}
	select {
	case x.coordWake <- struct{}{}:
	default:
	}
}

// finalize records the coordinator's summary.
func (x *execution) finalize(summary string) error {
	summary = strings.TrimSpace(summary)
	if summary == "" {
		return errdefs.Validationf("summary: required")
	}
	x.mu.Lock()
	x.st.Mail.Coordinator.Summary, x.st.Mail.Coordinator.Finalized = summary, true
	x.mu.Unlock()
	if err := x.checkpoint(checkpointMailPrefix + Coordinator); err != nil {
		return err
	}
	x.note("", "coordinator_synthesis", map[string]any{"summary": summary})
	return nil
}

// summary is the coordinator's summary, "" when it gave none.
func (x *execution) summary() string {
	x.mu.Lock()
	defer x.mu.Unlock()
	return x.st.Mail.Coordinator.Summary
}

// coordinatorTools are the tools of the coordinator's agent.
var coordinatorTools = []string{MessageStepTool, ReadInboxTool, NarrateTool, FinalizeTool}

// newCoordinator resolves the coordinator's agent through agents.
func newCoordinator(agents Agents, c *CoordinatorConfig) (engine.Engine, error) {
	prompt := c.Prompt
	if prompt == "" {
		prompt = defaultCoordinatorPrompt
	}
	return agents.Engine(AgentSpec{Name: Coordinator, Description: "Coordinates the workflow's steps.", Prompt: prompt,
		Model: c.Model, MaxTurns: DefaultMaxTurns, WorkflowTools: coordinatorTools})
}

const defaultCoordinatorPrompt = "You coordinate a workflow of agent steps. You see the steps and the messages they send you. " +
	"Give a step directions with message_step (its id, not its agent's name), tell the user what happens with narrate, " +
	"read messages that arrive during your turn with read_inbox, and when every step has finished call finalize with a summary of the results."

// messaging reports whether the workflow's steps exchange messages.
func (e *Engine) messaging() bool { return e.cfg.Messaging || e.coordinator != nil }

// step returns the top-level step id, or nil.
func (e *Engine) step(id string) *Step {
	for _, s := range e.wf.Steps {
		if s.ID == id {
			return s
		}
	}
	return nil
}

func (e *Engine) hasStep(id string) bool { return e.step(id) != nil }

// stepList names the top-level steps, for a drop's hint.
func (e *Engine) stepList() string {
	ids := make([]string, len(e.wf.Steps))
	for i, s := range e.wf.Steps {
		ids[i] = s.ID
	}
	return strings.Join(ids, ", ")
}

// runSteps runs the top-level DAG, and the coordinator beside it when
// there is one: its kickoff turn first, its inbox turns while the steps
// run, then the turns the messages left in its mailbox ask for and its
// final turn.
func (x *execution) runSteps(top *scope) error {
	if x.e.coordinator == nil {
		return x.runDAG(x.runCtx, top)
	}
	x.mu.Lock()
	cut := x.st.Mail.Coordinator.Prompt != ""
	x.mu.Unlock()
	if cut { // a turn a crash cut short goes on first, with its messages
		if err := x.coordinatorTurn(x.runCtx, ""); err != nil {
			return err
		}
	}
	x.mu.Lock()
	kicked := x.st.Mail.Coordinator.Turns > 0
	x.mu.Unlock()
	if !kicked {
		if err := x.coordinatorTurn(x.runCtx, turnKickoff); err != nil {
			return err
		}
	}
	done := make(chan struct{})
	coordErr := make(chan error, 1)
	go func() { coordErr <- x.coordinate(x.runCtx, done) }()
	err := x.runDAG(x.runCtx, top)
	close(done)
	if cerr := <-coordErr; err == nil {
		err = cerr
	}
	if err != nil || x.stopErr() != nil {
		return err
	}
	for i := 0; len(x.pending(Coordinator)) > 0 && i < x.e.cfg.Coordinator.MaxTurns; i++ {
		if err := x.coordinatorTurn(x.runCtx, turnInbox); err != nil {
			return err
		}
	}
	if err := x.answerUnread(x.runCtx); err != nil {
		return err
	}
	return x.coordinatorTurn(x.runCtx, turnFinal)
}

// answerUnread resumes each completed step whose mailbox holds messages
// it finished without reading, and puts its answer in the coordinator's
// mailbox, for the final turn: a message to a running step that ends
// before its next model turn is answered too.
func (x *execution) answerUnread(ctx context.Context) error {
	x.mu.Lock()
	first := map[string]Message{}
	for to, msgs := range x.st.Mail.Boxes {
		if to != Coordinator && len(msgs) > 0 && x.resumable(to) {
			first[to] = msgs[0]
		}
	}
	x.mu.Unlock()
	for _, step := range slices.Sorted(maps.Keys(first)) {
		m := first[step]
		reply, err := x.replyTo(ctx, step, m)
		if err != nil {
			if isStop(err) || x.stopErr() != nil {
				return x.stopOr(err)
			}
			continue // resume_failed says why
		}
		if _, _, err := x.send(ctx, "reply-"+m.ID, step, Coordinator, reply); err != nil && !isDrop(err) {
			return err
		}
	}
	return nil
}

// closeMail ends the run's messaging: later messages are dropped, and so
// is every message still waiting, each with a message_dropped note.
func (x *execution) closeMail() error {
	if !x.e.messaging() {
		return nil
	}
	x.mu.Lock()
	if x.st.Mail.Closed {
		x.mu.Unlock()
		return nil
	}
	x.st.Mail.Closed = true
	left := x.st.Mail.Boxes
	x.st.Mail.Boxes = nil
	x.mu.Unlock()
	for to, msgs := range left {
		for _, m := range msgs {
			x.note(stepOf(m.From), "message_dropped", map[string]any{"id": m.ID, "from": m.From, "to": to, "reason": DropWorkflowFinished})
		}
	}
	return nil
}
