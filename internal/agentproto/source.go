package agentproto

import (
	"context"

	"agentd/internal/engine"
	"agentd/internal/model"
	runv "agentd/internal/run"
	"agentd/internal/runtime"
)

// storeSource reads a run's values and checkpoints from the runtime.
type storeSource struct {
	s   *Server
	ctx context.Context
	run runv.Task
}

func (s *Server) source(ctx context.Context, run runv.Task) storeSource {
	return storeSource{s: s, ctx: ctx, run: run}
}

// finalValues are the values of the run's newest checkpoint, else the
// thread's transcript through the run.
func (src storeSource) finalValues() map[string]any {
	cps, err := src.s.rt.RunCheckpoints(src.ctx, src.run.ID)
	if err != nil {
		return nil
	}
	n := node{run: src.run, last: true}
	if len(cps) > 0 {
		n.cp = cps[len(cps)-1]
	}
	n.msgs = src.conversation(n)
	return n.values()
}

// conversation is the conversation at n, a checkpoint of the source's
// run (see node.conversation).
func (src storeSource) conversation(n node) []model.Message {
	if src.run.Metadata[runtime.MetaForkFrom] != nil && n.cp.Board != nil {
		return n.cp.Board.Channels[engine.MainChannel]
	}
	transcript, err := src.s.transcript(src.ctx, src.run.ContextID)
	if err != nil {
		return nil
	}
	return n.conversation(transcript, false)
}

// runStates are the states at the run's checkpoints, oldest first.
func (src storeSource) runStates() []stateJSON {
	run, err := src.s.rt.GetTask(src.ctx, src.run.ID)
	if err != nil {
		return nil
	}
	cps, err := src.s.rt.RunCheckpoints(src.ctx, run.ID)
	if err != nil {
		return nil
	}
	parent, _ := run.Metadata[runtime.MetaForkFrom].(string)
	out := make([]stateJSON, 0, len(cps))
	for i, cp := range cps {
		id := runtime.CheckpointRef{RunID: run.ID, N: i + 1}.String()
		n := node{id: id, parent: parent, cp: cp, run: run, last: i == len(cps)-1, step: i}
		n.msgs = src.conversation(n)
		out = append(out, n.state(run.ContextID))
		parent = id
	}
	return out
}

// transcriptThrough is the thread's transcript as run sees it: the
// messages of the runs up to it (later runs' are left out).
func (s *Server) transcriptThrough(ctx context.Context, run runv.Task) ([]model.Message, error) {
	page, err := s.rt.ListMessages(ctx, runv.MessageQuery{ContextID: run.ContextID, Last: 1000})
	if err != nil {
		return nil, err
	}
	var out []model.Message
	for _, m := range page.Messages {
		if m.TaskID == "" || m.TaskID <= run.ID {
			out = append(out, m.Message)
		}
	}
	return out, nil
}

// seed is the conversation a run's stream starts from: the transcript
// through the run, or for a fork the board of the checkpoint it continues
// from, then the run's own messages.
func (s *Server) seed(ctx context.Context, run runv.Task) []lcMessage {
	from, _ := run.Metadata[runtime.MetaForkFrom].(string)
	if from == "" {
		msgs, _ := s.transcriptThrough(ctx, run)
		return toLCAll(msgs)
	}
	var out []model.Message
	if ref, err := runtime.ParseCheckpointRef(from); err == nil {
		if cp, err := s.rt.Checkpoint(ctx, ref); err == nil && cp.Board != nil {
			out = append(out, cp.Board.Channels[engine.MainChannel]...)
		}
	}
	page, err := s.rt.ListMessages(ctx, runv.MessageQuery{ContextID: run.ContextID, TaskID: run.ID, Limit: 1000})
	if err == nil {
		for _, m := range page.Messages {
			out = append(out, m.Message)
		}
	}
	return toLCAll(out)
}
