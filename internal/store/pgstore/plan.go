package pgstore

import (
	"cmp"
	"encoding/json"
	"slices"
	"time"

	"agentd/internal/engine"
	"agentd/internal/errdefs"
	"agentd/internal/run"
	"agentd/internal/store"
)

// plan is a Change validated and encoded once, so that a retried Apply
// writes exactly the same values (store-assigned times included).
type plan struct {
	tenant   string
	taskID   string
	key      *store.IdempotencyKey
	create   *taskRow
	update   *taskRow
	stored   *run.Task       // Change.Stored: the created or updated task as stored
	contexts []contextAppend // sorted by context id: a fixed lock order
	runs     []runAppend     // sorted by run id: a fixed lock order
	lease    *store.LeaseClaim
	fences   []store.Lease
	release  *store.Lease
	// checkpoints are saved with the change, sorted by run id.
	checkpoints []checkpointRow
	// leaseExpires is the claimed lease's expiry (now + its TTL).
	leaseExpires time.Time
}

// created is the id of the task (and run) p creates, "" if none.
func (p *plan) created() string {
	if p.create == nil {
		return ""
	}
	return p.create.ID
}

func (p *plan) empty() bool {
	return p.key == nil && p.create == nil && p.update == nil && len(p.contexts) == 0 && len(p.runs) == 0 && p.lease == nil && p.release == nil && len(p.checkpoints) == 0
}

// contextAppend is the messages of one Change for one context.
type contextAppend struct {
	contextID string
	taskIDs   []string
	bodies    []string // encoded model.Message, one per message
}

// runAppend is the events of one Change for one run: seqs from..to, cut
// into frames of at most maxFrameEvents.
type runAppend struct {
	runID     string
	from, to  int64
	frameFrom []int64
	frameTo   []int64
	frames    []string
}

// plan validates c and encodes it for tenant.
func (s *Store) plan(tenant string, c store.Change) (*plan, error) {
	now := s.now()
	p := &plan{tenant: tenant, taskID: c.TaskID}
	if k := c.Idempotency; k != nil {
		if k.ContextID == "" || k.MessageID == "" || c.TaskID == "" {
			return nil, errdefs.Validationf("pgstore: idempotency key %q/%q of task %q: context id, message id and task id are required",
				k.ContextID, k.MessageID, c.TaskID)
		}
		p.key = k
	}
	p.fences, p.release = c.Fences, c.Release
	if l := c.Lease; l != nil {
		if err := checkLease(c.TaskID, l.Owner, l.TTL); err != nil {
			return nil, err
		}
		p.lease, p.leaseExpires = l, now.Add(l.TTL)
	}
	if c.CreateTask != nil {
		row, err := newTaskRow(*c.CreateTask, now, true)
		if err != nil {
			return nil, err
		}
		p.create, p.stored = row, c.Stored
	}
	if c.UpdateTask != nil {
		row, err := newTaskRow(*c.UpdateTask, now, false)
		if err != nil {
			return nil, err
		}
		p.update, p.stored = row, c.Stored
	}
	var err error
	if p.contexts, err = planMessages(c, now); err != nil {
		return nil, err
	}
	if p.runs, err = planEvents(c.Events, c.EventsValid, now); err != nil {
		return nil, err
	}
	if p.checkpoints, err = s.planCheckpoints(c.Checkpoints); err != nil {
		return nil, err
	}
	return p, nil
}

// planCheckpoints encodes c's checkpoints, at most one per run, in run id
// order (the runs rows they lock, after the events').
func (s *Store) planCheckpoints(cps []engine.Checkpoint) ([]checkpointRow, error) {
	out := make([]checkpointRow, 0, len(cps))
	for _, cp := range cps {
		row, err := s.encodeCheckpoint(cp)
		if err != nil {
			return nil, err
		}
		out = append(out, row)
	}
	slices.SortFunc(out, func(a, b checkpointRow) int { return cmp.Compare(a.runID, b.runID) })
	for i := 1; i < len(out); i++ {
		if out[i].runID == out[i-1].runID {
			return nil, errdefs.Validationf("pgstore: checkpoint of run %q: a change holds at most one per run", out[i].runID)
		}
	}
	return out, nil
}

// planMessages groups c's messages by context, keeping their order.
func planMessages(c store.Change, now time.Time) ([]contextAppend, error) {
	byContext := map[string]int{} // index in out
	var out []contextAppend
	for i, m := range c.Messages {
		if m.ContextID == "" {
			return nil, errdefs.Validationf("pgstore: messages[%d] (id %q): context id is required", i, m.ID)
		}
		if m.TaskID == "" {
			m.TaskID = c.TaskID
		}
		if m.CreatedAt.IsZero() {
			m.CreatedAt = now
		}
		body, err := json.Marshal(m.Message)
		if err != nil {
			return nil, errdefs.Validationf("pgstore: messages[%d] (id %q): %w", i, m.ID, err)
		}
		j, ok := byContext[m.ContextID]
		if !ok {
			j = len(out)
			byContext[m.ContextID] = j
			out = append(out, contextAppend{contextID: m.ContextID})
		}
		a := &out[j]
		a.taskIDs = append(a.taskIDs, m.TaskID)
		a.bodies = append(a.bodies, string(body))
	}
	slices.SortFunc(out, func(a, b contextAppend) int { return cmp.Compare(a.contextID, b.contextID) })
	return out, nil
}

// planEvents groups events by run, keeping their order, checks each run's
// seqs are consecutive (and their data, unless the writer promised it is
// valid JSON), and encodes them into frames.
func planEvents(events []run.Event, valid bool, now time.Time) ([]runAppend, error) {
	byRun := map[string][]run.Event{}
	var runIDs []string
	for i, e := range events {
		if e.RunID == "" || e.Type == "" {
			return nil, errdefs.Validationf("pgstore: events[%d] (run %q, seq %d): run id and type are required", i, e.RunID, e.Seq)
		}
		if !valid && !json.Valid(e.Data) || len(e.Data) == 0 {
			return nil, errdefs.Validationf("pgstore: events[%d] (run %q, seq %d): data is not valid JSON", i, e.RunID, e.Seq)
		}
		if e.Time.IsZero() {
			e.Time = now
		}
		if _, ok := byRun[e.RunID]; !ok {
			runIDs = append(runIDs, e.RunID)
		}
		byRun[e.RunID] = append(byRun[e.RunID], e)
	}
	slices.Sort(runIDs)
	out := make([]runAppend, 0, len(runIDs))
	for _, id := range runIDs {
		evs := byRun[id]
		for i, e := range evs {
			if e.Seq != evs[0].Seq+int64(i) || e.Seq < 1 {
				return nil, errdefs.Conflictf("pgstore: run %q: event seqs of one change must be consecutive from 1 or more, got %d after %d",
					id, e.Seq, evs[0].Seq+int64(i)-1)
			}
		}
		r := runAppend{runID: id, from: evs[0].Seq, to: evs[len(evs)-1].Seq}
		for chunk := range slices.Chunk(evs, maxFrameEvents) {
			r.frameFrom = append(r.frameFrom, chunk[0].Seq)
			r.frameTo = append(r.frameTo, chunk[len(chunk)-1].Seq)
			r.frames = append(r.frames, string(encodeFrame(chunk)))
		}
		out = append(out, r)
	}
	return out, nil
}

// guards reports whether p holds the guard what (agentd_check's name for
// it) on the task or run id.
func (p *plan) guards(what, id string) bool {
	switch what {
	case "key":
		return p.key != nil && p.taskID == id
	case "create":
		return p.create != nil && p.create.ID == id
	case "update":
		return p.update != nil && p.update.ID == id
	case "lease":
		return p.lease != nil && p.taskID == id
	case "fence":
		return slices.ContainsFunc(p.fences, func(f store.Lease) bool { return f.RunID == id })
	case "run":
		return slices.ContainsFunc(p.runs, func(r runAppend) bool { return r.runID == id })
	case "checkpoint":
		return slices.ContainsFunc(p.checkpoints, func(cp checkpointRow) bool { return cp.runID == id })
	}
	return false
}
