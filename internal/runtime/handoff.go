package runtime

import (
	"context"
	"errors"

	"agentd/internal/agent"
	"agentd/internal/engine"
	"agentd/internal/model"
	"agentd/internal/runlog"
)

// Hand-offs. An agent with Handoffs offers its model one hand-off tool per
// target (agent.HandoffTool) and decides after each turn with
// agent.HandoffDecider. When the model handed off, the runtime dispatches
// the conversation to the target within the same run: a handoff event,
// then the target runs as a child run of this one (engine.ChildRunner: a
// task of its own, linked by parent_run_id, with its own log and
// checkpoints), seeded with the whole conversation so far, and each of
// its events is relayed into this run's log, so the stream a client
// watches — REST SSE or A2A — simply goes on with the target's answer.
// The target's messages join this run's transcript. A target that asks
// the user parks this run; the next answer resumes it, and the target
// child with it (its key is the hand-off call's id); a cancel instead
// resumes the run to cancel a peer target's task (cancelHandoff). A remote
// target (a peer card URL) runs on the remote engine, whose peer task
// re-attaches after a crash like a remote agent's.
//
// Why a child run and not a new top-level run: the client's stream, its
// task id and its A2A subscription stay valid across the hand-off, the
// hand-off is durable with the caller's lease and checkpoints, and
// nothing has to redirect a reader from one task to another.

// Handoff is a hand-off target of an agent.
type Handoff struct {
	agent.Handoff
	// Engine runs the target: a local agent's engine, or a remote engine
	// for a peer card URL.
	Engine engine.Engine
	// Local says ToAgentID is an agent of this runtime (its child task
	// then belongs to that agent).
	Local bool
}

// HandoffData is the body of a handoff event: the run's conversation
// passes from agent From to To (an agent id or a peer card URL).
type HandoffData struct {
	From       string `json:"from"`
	To         string `json:"to"`
	ToolCallID string `json:"tool_call_id,omitempty"`
	// ChildRunID is the target's child run: its task, whose
	// metadata.parent_run_id is this run.
	ChildRunID string `json:"child_run_id,omitempty"`
	Reason     string `json:"reason,omitempty"`
	Note       string `json:"note,omitempty"`
}

// handoff dispatches the hand-off res asks for, if any, and returns the
// result of the whole turn: res with the target's messages added, its
// status the target's.
func (x *execution) handoff(ctx context.Context, res *agent.Result, err error) (*agent.Result, error) {
	if x.resume == ResumedByCancel {
		x.cancelHandoff(ctx, res)
		return res, err
	}
	if err != nil || res == nil || res.Status != agent.StatusCompleted || len(x.agent.Handoffs) == 0 || res.LastBoard == nil {
		return res, err
	}
	ev, fresh := agent.HandoffFromResult(res)
	if !fresh {
		var ok bool
		if ev, ok = x.resumedHandoff(ctx, res); !ok {
			return res, nil
		}
	}
	h := x.handoffTo(ev.ToAgentID)
	if h == nil {
		return res, nil
	}
	key := "handoff:" + ev.ToolCallID
	if fresh {
		child, err := x.r.childID(ctx, x.runID, key)
		if err != nil {
			return res, err
		}
		x.publishHandoff(ctx, ev, child)
	}
	board := engine.NewBoard()
	board.SetChannel(engine.MainChannel, res.LastBoard.Channel(engine.MainChannel))
	start := board.ChannelLen(engine.MainChannel)
	c := engine.ChildRun{
		Key: key, Step: "handoff:" + ev.ToAgentID, Host: &handoffHost{x: x, to: ev.ToAgentID},
		Run: engine.Run{ParentRunID: x.runID, Attributes: map[string]string{engine.AttrAgentID: ev.ToAgentID}, Deps: x.agent.Deps},
	}
	if h.Local {
		c.AgentID = ev.ToAgentID
	}
	out, cerr := x.host.RunChild(ctx, c, h.Engine, board)
	if out != nil {
		for _, m := range out.ChannelFrom(engine.MainChannel, start) {
			res.LastBoard.AppendChannelMessage(engine.MainChannel, m)
			res.Messages = append(res.Messages, m)
		}
	}
	if cerr != nil {
		res.Err, res.Status = cerr, agent.StatusFailed
		var ie engine.InterruptedError
		if errors.As(cerr, &ie) {
			res.Status, res.Cause, res.CauseDetail = agent.StatusInterrupted, ie.Cause, ie.Detail
		}
	}
	return res, nil
}

// cancelHandoff cancels the peer target of the run's pending hand-off in
// an attempt resumed for a cancel (the run parked while the target asked):
// the target's child resumes with engine.SignalCancel and its remote
// engine cancels the peer task (engine.ChildRun.Cancel). Best effort: the
// run is canceled whatever the peer answers.
func (x *execution) cancelHandoff(ctx context.Context, res *agent.Result) {
	if res == nil || res.LastBoard == nil {
		return
	}
	ev, ok := x.resumedHandoff(ctx, res)
	if h := x.handoffTo(ev.ToAgentID); ok && h != nil && !h.Local {
		c := engine.ChildRun{Key: "handoff:" + ev.ToolCallID, Step: "handoff:" + ev.ToAgentID, Host: &handoffHost{x: x, to: ev.ToAgentID},
			Run: engine.Run{ParentRunID: x.runID, Attributes: map[string]string{engine.AttrAgentID: ev.ToAgentID}}, Cancel: true}
		_, _ = x.host.RunChild(ctx, c, h.Engine, nil)
	}
}

// hasPeerHandoffs says a hand-off of a may wait on a peer's task: the
// runtime then resumes a parked run of a for its cancel (cancelParked),
// to cancel that task.
func (a *Agent) hasPeerHandoffs() bool {
	for _, h := range a.Handoffs {
		if !h.Local {
			return true
		}
	}
	return false
}

// resumedHandoff finds the hand-off of a resumed attempt: its engine
// resumed from the checkpoint of the turn that handed off and produced
// nothing new, so the hand-off call is looked for among the messages
// since the last user message.
func (x *execution) resumedHandoff(ctx context.Context, res *agent.Result) (agent.HandoffEvent, bool) {
	if x.resume == "" {
		return agent.HandoffEvent{}, false
	}
	msgs := res.LastBoard.Channel(engine.MainChannel)
	i := len(msgs) - 1
	for i >= 0 && msgs[i].Role != model.RoleUser {
		i--
	}
	hs := make([]agent.Handoff, len(x.agent.Handoffs))
	for j, h := range x.agent.Handoffs {
		hs[j] = h.Handoff
	}
	probe := &agent.Result{Messages: msgs[i+1:]}
	dec, err := agent.HandoffDecider(hs).BeforeFinalize(ctx, agent.RunInfo{}, nil, probe)
	if err != nil {
		return agent.HandoffEvent{}, false
	}
	probe.State = dec.State
	return agent.HandoffFromResult(probe)
}

// handoffTo is the agent's hand-off to target, or nil.
func (x *execution) handoffTo(target string) *Handoff {
	for i := range x.agent.Handoffs {
		if x.agent.Handoffs[i].ToAgentID == target {
			return &x.agent.Handoffs[i]
		}
	}
	return nil
}

// publishHandoff logs the handoff event.
func (x *execution) publishHandoff(ctx context.Context, ev agent.HandoffEvent, child string) {
	body, err := runlog.Encode(HandoffData{From: x.agent.ID, To: ev.ToAgentID, ToolCallID: ev.ToolCallID, ChildRunID: child, Reason: ev.Args.Reason, Note: ev.Args.Note})
	if err != nil {
		return
	}
	x.log.Append(EventHandoff, body)
}

// handoffHost is this run's side of the hand-off target's child run: the
// target's events are relayed into this run's log as this run's own (its
// answer is the run's answer), its question is this run's, its usage
// counts against this run's budgets, and it receives this run's
// interrupts (the caller's engine has returned: nothing else reads them).
type handoffHost struct {
	x  *execution
	to string
}

var _ engine.Host = (*handoffHost)(nil)

// Publish logs the target's event as this run's own; its artifacts are
// named apart from this run's.
func (h *handoffHost) Publish(ctx context.Context, ev engine.Event) error {
	if a, ok := ev.(engine.ArtifactUpdate); ok {
		a.Artifact.ID = "handoff-" + a.Artifact.ID
		ev = a
	}
	return h.x.host.Publish(ctx, ev)
}

func (h *handoffHost) Interrupts() <-chan engine.Interrupt { return h.x.host.Interrupts() }

func (h *handoffHost) AskUser(ctx context.Context, p engine.UserPrompt) (engine.UserReply, error) {
	if p.Source == "" {
		p.Source = h.to
	}
	return h.x.host.AskUser(ctx, p)
}

// Checkpoint: the child's own are kept by the child's host.
func (h *handoffHost) Checkpoint(context.Context, engine.Checkpoint) error { return nil }

func (h *handoffHost) ReportUsage(ctx context.Context, modelName string, u model.TokenUsage) error {
	return h.x.host.ReportUsage(ctx, modelName, u)
}
