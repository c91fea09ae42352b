package agentproto

import (
	"context"
	"encoding/json"
	"slices"
	"time"

	"agentd/internal/engine"
	"agentd/internal/model"
	runv "agentd/internal/run"
	"agentd/internal/runtime"
)

// node is one checkpoint of a thread: a checkpoint of one of the thread's
// runs, linked to the checkpoint before it on its branch.
type node struct {
	id     string // runtime.CheckpointRef's string
	parent string // "" for the thread's first
	cp     engine.Checkpoint
	run    runv.Task
	last   bool // the run's newest checkpoint
	step   int  // position in the thread, from 0
	// msgs is the conversation at the checkpoint (conversation).
	msgs []model.Message
}

// threadRuns returns every run of the thread, oldest first.
func (s *Server) threadRuns(ctx context.Context, threadID string) ([]runv.Task, error) {
	var runs []runv.Task
	q := runv.TaskQuery{ContextID: threadID, Limit: 100}
	for {
		page, err := s.rt.ListTasks(ctx, q)
		if err != nil {
			return nil, err
		}
		runs = append(runs, page.Tasks...)
		if page.NextCursor == "" {
			break
		}
		q.Cursor = page.NextCursor
	}
	slices.Reverse(runs)
	return runs, nil
}

// threadNodes returns the thread's checkpoints, oldest first. A run's
// first checkpoint descends from the checkpoint the run was forked from,
// else from the newest checkpoint of the run before it.
// A copied thread's history starts with its source's (checkpoint_lineage.go).
func (s *Server) threadNodes(ctx context.Context, threadID string) ([]node, error) {
	return s.nodesOf(ctx, threadID, 0)
}

// nodesOf is threadNodes of a thread depth copies down from the one asked
// about.
func (s *Server) nodesOf(ctx context.Context, threadID string, depth int) ([]node, error) {
	nodes, err := s.inheritedNodes(ctx, threadID, depth)
	if err != nil {
		return nil, err
	}
	runs, err := s.threadRuns(ctx, threadID)
	if err != nil {
		return nil, err
	}
	transcript, err := s.transcript(ctx, threadID)
	if err != nil {
		return nil, err
	}
	prevLast := ""
	if len(nodes) > 0 {
		prevLast = nodes[len(nodes)-1].id
	}
	for _, run := range runs {
		cps, err := s.rt.RunCheckpoints(ctx, run.ID)
		if err != nil {
			return nil, err
		}
		parent := prevLast
		if f, _ := run.Metadata[runtime.MetaForkFrom].(string); f != "" {
			parent = f
		}
		for i, cp := range cps {
			id := runtime.CheckpointRef{RunID: run.ID, N: i + 1}.String()
			n := node{id: id, parent: parent, cp: cp, run: run, last: i == len(cps)-1, step: len(nodes)}
			n.msgs = n.conversation(transcript, forked(runs, run))
			nodes = append(nodes, n)
			parent = id
		}
		if len(cps) > 0 {
			prevLast = parent
		}
	}
	return nodes, nil
}

// conversation is the thread's conversation at n. A run on a forked
// branch started from a checkpoint's board, which holds its conversation;
// any other sees the thread's transcript: the messages of the runs before
// it and its own written by then (all of them at its last checkpoint, as
// its final messages are stored when it stops).
func (n node) conversation(transcript []runv.Message, onFork bool) []model.Message {
	if onFork && n.cp.Board != nil {
		return n.cp.Board.Channels[engine.MainChannel]
	}
	var out []model.Message
	for _, m := range transcript {
		mine := m.TaskID == n.run.ID && (n.last || !m.CreatedAt.After(n.cp.Timestamp))
		if m.TaskID == "" || m.TaskID < n.run.ID || mine {
			out = append(out, m.Message)
		}
	}
	return out
}

// forked reports whether run continues a fork: it, or a run it descends
// from on the thread, was started from a checkpoint.
func forked(runs []runv.Task, run runv.Task) bool {
	for _, r := range runs {
		if r.ID <= run.ID && r.Metadata[runtime.MetaForkFrom] != nil {
			return true
		}
	}
	return false
}

// transcript is the thread's transcript (its latest 1000 messages).
func (s *Server) transcript(ctx context.Context, threadID string) ([]runv.Message, error) {
	page, err := s.rt.ListMessages(ctx, runv.MessageQuery{ContextID: threadID, Last: 1000})
	return page.Messages, err
}

// values is the thread's state at n: the conversation on the board, and
// the engine's own board — a workflow's step results, a flow's context.
func (n node) values() map[string]any {
	v := map[string]any{"messages": toLCAll(n.msgs)}
	if n.cp.Board != nil {
		for k, x := range n.cp.Board.Vars {
			if _, taken := v[k]; !taken {
				v[k] = x
			}
		}
	}
	var payload struct {
		Results map[string]any `json:"results"`
		Context map[string]any `json:"context"`
	}
	if json.Unmarshal(n.cp.Payload, &payload) == nil {
		if payload.Results != nil {
			v["steps"] = payload.Results
		}
		if payload.Context != nil {
			v["context"] = payload.Context
		}
	}
	return v
}

type checkpointJSON struct {
	ThreadID string `json:"thread_id"`
	NS       string `json:"checkpoint_ns"`
	ID       string `json:"checkpoint_id"`
}

type interruptJSON struct {
	Value any    `json:"value"`
	ID    string `json:"id"`
}

type taskJSON struct {
	ID         string          `json:"id"`
	Name       string          `json:"name"`
	Error      *string         `json:"error"`
	Interrupts []interruptJSON `json:"interrupts"`
	Checkpoint *checkpointJSON `json:"checkpoint"`
	State      any             `json:"state"`
	Result     any             `json:"result"`
}

// stateJSON is a thread's state at a checkpoint (ThreadState).
type stateJSON struct {
	Values           map[string]any  `json:"values"`
	Next             []string        `json:"next"`
	Tasks            []taskJSON      `json:"tasks"`
	Checkpoint       *checkpointJSON `json:"checkpoint"`
	ParentCheckpoint *checkpointJSON `json:"parent_checkpoint"`
	Metadata         map[string]any  `json:"metadata"`
	CreatedAt        *time.Time      `json:"created_at"`
	Interrupts       []interruptJSON `json:"interrupts"`
}

func ref(threadID, id string) *checkpointJSON {
	if id == "" {
		return nil
	}
	return &checkpointJSON{ThreadID: threadID, ID: id}
}

// state renders n; a run's newest checkpoint carries what the run does
// next (nothing once it ended, the agent while it runs or waits) and the
// interrupt it waits on.
func (n node) state(threadID string) stateJSON {
	at := n.cp.Timestamp
	st := stateJSON{
		Values: n.values(), Next: []string{}, Tasks: []taskJSON{}, Interrupts: []interruptJSON{},
		Checkpoint: ref(threadID, n.id), ParentCheckpoint: ref(threadID, n.parent), CreatedAt: &at,
		Metadata: map[string]any{
			"source": "loop", "step": n.step, "run_id": n.run.ID, "thread_id": threadID,
			"graph_id": n.run.AgentID, "assistant_id": runAssistantID(n.run),
			"agentd_step": n.cp.Step, "parents": map[string]any{}, "writes": nil,
		},
	}
	if f, _ := n.run.Metadata[runtime.MetaForkFrom].(string); f != "" {
		st.Metadata["fork_from"] = f
	}
	if !n.last || !n.run.State.Terminal() {
		st.Next = []string{n.run.AgentID}
		task := taskJSON{ID: n.run.ID, Name: n.run.AgentID, Interrupts: []interruptJSON{}}
		if n.last {
			task.Interrupts = interruptsOf(n.run)
			st.Interrupts = task.Interrupts
		}
		st.Tasks = []taskJSON{task}
	}
	return st
}
