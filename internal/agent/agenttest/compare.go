package agenttest

import (
	"reflect"

	"agentd/internal/agent"
	"agentd/internal/engine"
	"agentd/internal/model"
)

// resultCopy is a deep copy of everything observable on a Result, taken
// before an implementation sees it and compared afterwards.
type resultCopy struct {
	ptr       *agent.Result
	fields    agent.Result // scalars and deep-copied slices and maps
	board     *engine.Board
	boardSnap *engine.BoardSnapshot
}

func copyResult(res *agent.Result) resultCopy {
	if res == nil {
		return resultCopy{}
	}
	c := resultCopy{ptr: res, fields: *res, board: res.LastBoard}
	c.fields.Messages = cloneMessages(res.Messages)
	c.fields.State = cloneState(res.State)
	c.fields.LastBoard = nil
	if res.LastBoard != nil {
		c.boardSnap = res.LastBoard.Snapshot()
	}
	return c
}

// diff reports each field of res that no longer matches the copy.
func (c resultCopy) diff(r Reporter, who string, res *agent.Result) {
	r.Helper()
	if res == nil {
		return
	}
	now := copyResult(res)
	checks := []struct {
		field         string
		before, after any
	}{
		{"TaskID", c.fields.TaskID, now.fields.TaskID},
		{"ContextID", c.fields.ContextID, now.fields.ContextID},
		{"RunID", c.fields.RunID, now.fields.RunID},
		{"Status", c.fields.Status, now.fields.Status},
		{"Cause", c.fields.Cause, now.fields.Cause},
		{"CauseDetail", c.fields.CauseDetail, now.fields.CauseDetail},
		{"Messages", c.fields.Messages, now.fields.Messages},
		{"Committed", c.fields.Committed, now.fields.Committed},
		{"State", c.fields.State, now.fields.State},
		{"Err", c.fields.Err, now.fields.Err},
		{"Attempts", c.fields.Attempts, now.fields.Attempts},
		{"LastBoard (pointer)", c.board, now.board},
		{"LastBoard (content)", c.boardSnap, now.boardSnap},
	}
	for _, ch := range checks {
		if !reflect.DeepEqual(ch.before, ch.after) {
			r.Errorf("%s mutated Result.%s: before %#v, after %#v", who, ch.field, ch.before, ch.after)
		}
	}
}

// requestCopy is the Request counterpart of resultCopy.
type requestCopy struct{ req agent.Request }

func copyRequest(req *agent.Request) requestCopy {
	if req == nil {
		return requestCopy{}
	}
	c := requestCopy{req: *req}
	c.req.Message = req.Message.Clone()
	c.req.Inputs = cloneState(req.Inputs)
	if req.Config != nil {
		cfg := *req.Config
		cfg.AcceptedOutputModes = append([]string(nil), cfg.AcceptedOutputModes...)
		c.req.Config = &cfg
	}
	return c
}

func (c requestCopy) diff(r Reporter, who string, req *agent.Request) {
	r.Helper()
	if req == nil {
		return
	}
	if now := copyRequest(req); !reflect.DeepEqual(c.req, now.req) {
		r.Errorf("%s mutated the Request: before %#v, after %#v", who, c.req, now.req)
	}
}

func cloneMessages(msgs []model.Message) []model.Message {
	if msgs == nil {
		return nil
	}
	out := make([]model.Message, len(msgs))
	for i, m := range msgs {
		out[i] = m.Clone()
	}
	return out
}

func cloneState(m map[string]any) map[string]any {
	if m == nil {
		return nil
	}
	return engine.DeepCopy(m).(map[string]any)
}
