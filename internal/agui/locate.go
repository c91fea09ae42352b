package agui

import (
	"context"
	"encoding/json"
	"strings"

	"agentd/internal/engine"
	"agentd/internal/errdefs"
	"agentd/internal/model"
	"agentd/internal/run"
	"agentd/internal/runtime"
)

// MetadataRunID is the user-message metadata key that records the AG-UI
// runId a message opened: the face keeps no table of its own, the
// transcript says which attempt of which agentd run an AG-UI run is.
const MetadataRunID = "ag_ui_run_id"

// runRef is where an AG-UI run lives: an agentd run (task) and the seq
// just before the attempt that opened it, with the thread's transcript up
// to the message that opened it (the MESSAGES_SNAPSHOT).
type runRef struct {
	task     run.Task
	startSeq int64
	snapshot []Message
}

// locate finds the AG-UI run runID of thread threadID on agent agentID: a
// run whose first attempt it opened (the agentd run has its id) or one it
// resumed (its answer's message records it). NotFound when there is none;
// Conflict when runID names a run of another thread or agent.
func (s *Server) locate(ctx context.Context, agentID, threadID, runID string) (runRef, error) {
	t, msgs, err := s.lookup(ctx, threadID, runID)
	if err != nil {
		return runRef{}, err
	}
	return s.locateIn(ctx, agentID, threadID, runID, t, msgs)
}

// lookup reads, at once, what locating run runID in thread threadID
// needs: the agentd run of that id, if any (zero Task when none), and the
// thread's transcript.
func (s *Server) lookup(ctx context.Context, threadID, runID string) (run.Task, []run.Message, error) {
	var t run.Task
	var terr error
	done := make(chan struct{})
	go func() {
		defer close(done)
		t, terr = s.rt.GetTask(ctx, runID)
	}()
	msgs, err := s.transcript(ctx, threadID)
	<-done
	if terr != nil && !errdefs.IsNotFound(terr) {
		return t, nil, terr
	}
	if terr != nil {
		t = run.Task{}
	}
	return t, msgs, err
}

// locateIn is locate over what lookup read.
func (s *Server) locateIn(ctx context.Context, agentID, threadID, runID string, t run.Task, msgs []run.Message) (runRef, error) {
	switch {
	case t.ID != "" && t.ContextID != threadID:
		return runRef{}, errdefs.WithField("runId", errdefs.Conflictf("run %q belongs to another thread, not %q; a runId names one run", runID, threadID))
	case t.ID != "" && t.AgentID != agentID:
		return runRef{}, errdefs.WithField("runId", errdefs.Conflictf("run %q is a run of agent %q, not %q", runID, t.AgentID, agentID))
	}
	var err error
	taskID := t.ID
	if taskID == "" {
		taskID = taskOfRun(msgs, runID)
	}
	opened, k := -1, 0 // the opening message; its attempt among the task's answers
	for i, m := range msgs {
		if m.Role != model.RoleUser || taskID == "" || m.TaskID != taskID {
			continue
		}
		if m.Metadata[MetadataRunID] == runID || t.ID != "" {
			opened = i
			break
		}
		k++
	}
	if opened < 0 {
		return runRef{}, errdefs.NotFoundf("thread %q has no run %q", threadID, runID)
	}
	if t.ID == "" {
		if t, err = s.rt.GetTask(ctx, taskID); err != nil {
			return runRef{}, err
		}
		if t.AgentID != agentID {
			return runRef{}, errdefs.WithField("runId", errdefs.Conflictf("run %q is a run of agent %q, not %q", runID, t.AgentID, agentID))
		}
	}
	start, err := s.attemptStart(ctx, t.ID, k)
	if err != nil {
		return runRef{}, err
	}
	return runRef{task: t, startSeq: start, snapshot: messagesOf(msgs[:opened+1])}, nil
}

// taskOfRun is the task whose answer message names AG-UI run runID.
func taskOfRun(msgs []run.Message, runID string) string {
	for _, m := range msgs {
		if m.Role == model.RoleUser && m.Metadata[MetadataRunID] == runID {
			return m.TaskID
		}
	}
	return ""
}

// transcript reads a thread's whole transcript (empty for a new thread).
func (s *Server) transcript(ctx context.Context, threadID string) ([]run.Message, error) {
	var out []run.Message
	q := run.MessageQuery{ContextID: threadID, Limit: 1000}
	for {
		page, err := s.rt.ListMessages(ctx, q)
		if err != nil {
			return nil, err
		}
		out = append(out, page.Messages...)
		if page.NextAfter == 0 || len(page.Messages) == 0 {
			return out, nil
		}
		q.After = page.NextAfter
	}
}

// attemptStart is the seq before the attempt of run runID that its k-th
// answer opened (k = 0: the run's first attempt, seq 0).
func (s *Server) attemptStart(ctx context.Context, runID string, k int) (int64, error) {
	if k == 0 {
		return 0, nil
	}
	return s.scanRunStarts(ctx, runID, func(d runtime.RunStartData) bool {
		if d.Resumed == "input" {
			k--
		}
		return k == 0
	})
}

// lastAttemptStart is the seq before the run's latest attempt that a
// client opened (not a recovery); with recoveries, also before the latest
// recovery that produces the output again (one whose engine does not
// continue the cut output), so that a reader never sees the abandoned part.
func (s *Server) lastAttemptStart(ctx context.Context, runID string, recoveries bool) (int64, error) {
	var last int64 = -1
	_, err := s.scanRunStarts(ctx, runID, func(d runtime.RunStartData) bool { return false }, func(seq int64, d runtime.RunStartData) {
		if d.Resumed != "crash" || (recoveries && !d.Continues) {
			last = seq - 1
		}
	})
	if last < 0 {
		last = 0
	}
	return last, err
}

// scanRunStarts reads run runID's log for run.start events and returns the
// seq before the first that stop accepts; each is shown to the observers.
func (s *Server) scanRunStarts(ctx context.Context, runID string, stop func(runtime.RunStartData) bool, observe ...func(int64, runtime.RunStartData)) (int64, error) {
	var after int64
	for {
		page, err := s.rt.ReadEvents(ctx, runID, after, 1000)
		if err != nil {
			return 0, err
		}
		for _, ev := range page.Events {
			after = ev.Seq
			if ev.Type != runtime.EventRunStart {
				continue
			}
			var d runtime.RunStartData
			_ = json.Unmarshal(ev.Data, &d)
			for _, o := range observe {
				o(ev.Seq, d)
			}
			if stop(d) {
				return ev.Seq - 1, nil
			}
		}
		if len(page.Events) == 0 {
			return after, nil
		}
	}
}

// messagesOf converts transcript messages to AG-UI messages.
func messagesOf(msgs []run.Message) []Message {
	out := []Message{}
	for _, m := range msgs {
		switch m.Role {
		case model.RoleUser:
			out = append(out, userMessages(m)...)
		case model.RoleSystem:
			out = append(out, Message{ID: m.ID, Role: string(m.Role), Content: text(contentText(m.Message))})
		case model.RoleAssistant:
			am := Message{ID: m.ID, Role: "assistant"}
			if t := m.Text(); t != "" {
				am.Content = text(t)
			}
			for _, c := range m.ToolCalls() {
				args := string(c.Arguments)
				if args == "" {
					args = "{}"
				}
				am.ToolCalls = append(am.ToolCalls, ToolCall{ID: ToolCallIDOf(m.TaskID, c.ID), Type: "function", Function: FunctionCall{Name: c.Name, Arguments: args}})
			}
			out = append(out, am)
		case model.RoleTool:
			out = append(out, toolMessages(m)...)
		}
	}
	return out
}

// userMessages is a user's transcript message as AG-UI has it: frontend
// tool results are tool messages; an answer to approvals (resume entries,
// not a message in AG-UI) is none.
func userMessages(m run.Message) []Message {
	if results := engine.ClientToolResults(m.Parts); len(results) > 0 {
		ids, _ := m.Metadata[MetadataToolMessageIDs].(map[string]any)
		out := make([]Message, len(results))
		for i, r := range results {
			id, _ := ids[r.ToolCallID].(string)
			if id == "" {
				id = m.ID + "." + r.ToolCallID
			}
			out[i] = Message{ID: id, Role: "tool", Content: text(r.Content), ToolCallID: ToolCallIDOf(m.TaskID, r.ToolCallID)}
		}
		return out
	}
	if _, found, _ := engine.ApprovalAnswers(m.Parts); found {
		return nil
	}
	return []Message{{ID: m.ID, Role: "user", Content: text(contentText(m.Message))}}
}

func toolMessages(m run.Message) []Message {
	var out []Message
	for _, p := range m.Parts {
		if p.Type != model.PartToolResult || p.ToolResult == nil {
			continue
		}
		r := p.ToolResult
		tm := Message{ID: m.ID + "." + r.ToolCallID, Role: "tool", Content: text(r.Content), ToolCallID: ToolCallIDOf(m.TaskID, r.ToolCallID)}
		if r.IsError {
			tm.Error = r.Content
		}
		out = append(out, tm)
	}
	return out
}

// contentText is a user message as text: its text parts, else its data
// as JSON.
func contentText(m model.Message) string {
	if t := m.Text(); t != "" {
		return t
	}
	var parts []string
	for _, p := range m.Parts {
		if p.Type == model.PartData {
			parts = append(parts, string(p.Data))
		}
	}
	return strings.Join(parts, "\n")
}
