package memstore

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"agentd/internal/errdefs"
	"agentd/internal/store"
)

// prepared is a Change validated and copied (but for its events, which
// commit copies into their logs), ready to be checked against the stored
// state and committed.
//
// key, create and update are zero when the change has none: a key's
// context and a task's id are never empty.
type prepared struct {
	key      store.IdempotencyKey
	taskID   string
	create   taskWrite
	update   taskWrite
	messages []storedMessage
	events   []store.Event
}

// Apply writes c atomically: it validates and copies c without the lock,
// then checks it against the stored state and commits it under the lock.
// The idempotency check comes first so that a retried submission always
// learns its original task.
func (s *Store) Apply(ctx context.Context, c store.Change) error {
	if err := live(ctx); err != nil {
		return err
	}
	now := now()
	p, err := prepare(c, now)
	if err != nil {
		return fmt.Errorf("apply: %w", err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	t := s.writeTenant(ctx)
	if err := t.check(&p); err != nil {
		return fmt.Errorf("apply: %w", err)
	}
	name := store.TenantFrom(ctx)
	if id := t.commit(&p, name, now); id != "" {
		s.noteFinished(name, id)
	}
	return nil
}

func prepare(c store.Change, now time.Time) (prepared, error) {
	p := prepared{taskID: c.TaskID}
	if k := c.Idempotency; k != nil {
		if k.ContextID == "" || k.MessageID == "" || c.TaskID == "" {
			return prepared{}, errdefs.Validationf("idempotency key %q/%q of task %q: context id, message id and task id are required", k.ContextID, k.MessageID, c.TaskID)
		}
		p.key = *k
	}
	var err error
	if c.CreateTask != nil {
		if p.create, err = prepareCreate(*c.CreateTask, now); err != nil {
			return prepared{}, err
		}
	}
	if c.UpdateTask != nil {
		if p.update, err = prepareUpdate(*c.UpdateTask); err != nil {
			return prepared{}, err
		}
	}
	if p.messages, err = prepareMessages(c.Messages, c.TaskID, now); err != nil {
		return prepared{}, err
	}
	if p.events, err = prepareEvents(c.Events); err != nil {
		return prepared{}, err
	}
	return p, nil
}

func prepareCreate(in store.Task, now time.Time) (taskWrite, error) {
	field := func() string { return fmt.Sprintf("create task %q", in.ID) }
	switch {
	case in.ID == "" || in.ContextID == "" || in.AgentID == "":
		return taskWrite{}, errdefs.Validationf("%s: id, context id and agent id are required", field())
	case !in.State.Valid():
		return taskWrite{}, errdefs.Validationf("%s: unknown state %q", field(), in.State)
	case in.Version != 0:
		return taskWrite{}, errdefs.Validationf("%s: version is %d, want 0 (the store sets it)", field(), in.Version)
	}
	body, err := putTaskBody(make([]byte, 0, 64), in, field)
	if err != nil {
		return taskWrite{}, err
	}
	return taskWrite{id: in.ID, contextID: in.ContextID, agentID: in.AgentID, state: in.State, created: orNow(in.CreatedAt, now), body: body}, nil
}

func prepareUpdate(in store.Task) (taskWrite, error) {
	field := func() string { return fmt.Sprintf("update task %q", in.ID) }
	switch {
	case in.ID == "":
		return taskWrite{}, errdefs.Validationf("%s: id is required", field())
	case !in.State.Valid():
		return taskWrite{}, errdefs.Validationf("%s: unknown state %q", field(), in.State)
	}
	body, err := putTaskBody(make([]byte, 0, 64), in, field)
	if err != nil {
		return taskWrite{}, err
	}
	return taskWrite{id: in.ID, state: in.State, version: in.Version, body: body}, nil
}

// prepareMessages validates msgs and encodes them for their transcripts.
func prepareMessages(msgs []store.Message, taskID string, now time.Time) ([]storedMessage, error) {
	if len(msgs) == 0 {
		return nil, nil
	}
	out := make([]storedMessage, len(msgs))
	for i, m := range msgs {
		if m.ContextID == "" {
			return nil, errdefs.Validationf("messages[%d] (id %q): context id is required", i, m.ID)
		}
		if m.TaskID == "" {
			m.TaskID = taskID
		}
		m.CreatedAt = orNow(m.CreatedAt, now)
		var buf [256]byte // most messages fit: one allocation, for the record
		b, err := putStoredMessage(buf[:0], m, func() string { return "messages[" + strconv.Itoa(i) + "]" })
		if err != nil {
			return nil, err
		}
		out[i] = storedMessage{contextID: m.ContextID, taskID: m.TaskID, record: string(b)}
	}
	return out, nil
}

// prepareEvents validates evs. They are copied into their logs under the
// lock: a log stores events in its own buffers, so a copy made here would
// be thrown away.
func prepareEvents(evs []store.Event) ([]store.Event, error) {
	for i, e := range evs {
		if e.RunID == "" || e.Type == "" {
			return nil, errdefs.Validationf("events[%d] (run %q, seq %d): run id and type are required", i, e.RunID, e.Seq)
		}
		if len(e.Data) == 0 || !validJSON(e.Data) {
			return nil, errdefs.Validationf("events[%d] (run %q, seq %d): data must be a valid JSON value", i, e.RunID, e.Seq)
		}
	}
	return evs, nil
}

// check reports why p cannot be committed to t, if it cannot. It writes
// nothing.
func (t *tenant) check(p *prepared) error {
	if p.key.ContextID != "" {
		if owner, ok := t.keys[p.key]; ok {
			return &store.DuplicateError{Key: p.key, TaskID: owner}
		}
	}
	if p.create.id != "" && t.task(p.create.id) != "" {
		return errdefs.Conflictf("create task %q: a task with this id exists", p.create.id)
	}
	if u := &p.update; u.id != "" {
		cur := t.task(u.id)
		if cur == "" && p.create.id != u.id {
			return errdefs.NotFoundf("update task %q: no such task", u.id)
		}
		version := int64(1) // created by the same change
		if cur != "" {
			version = headerOf(cur).version
		}
		if u.version != version {
			return errdefs.Conflictf("update task %q: version %d is stale, the stored version is %d", u.id, u.version, version)
		}
	}
	next := map[string]int64{}
	for _, e := range p.events {
		want, ok := next[e.RunID]
		if !ok {
			want = 1
			if r := t.runs[e.RunID]; r != nil {
				want = r.log.lastSeq() + 1
			}
		}
		if e.Seq != want {
			return errdefs.Conflictf("append event to run %q: seq %d does not continue the log, want %d", e.RunID, e.Seq, want)
		}
		next[e.RunID] = want + 1
	}
	return nil
}

// commit writes a checked change. It returns the id of the task the change
// finished (moved into a terminal state), if any.
func (t *tenant) commit(p *prepared, tenantName string, now time.Time) (finished string) {
	if p.key.ContextID != "" {
		t.keys[p.key] = p.taskID
		r := t.run(p.taskID)
		r.keys = append(r.keys, p.key)
	}
	if c := &p.create; c.id != "" {
		h := taskHeader{id: c.id, contextID: c.contextID, agentID: c.agentID, tenant: tenantName, version: 1, created: c.created, updated: now, state: c.state}
		t.insertTask(h, c.record(h))
		if finishedBy("", c.state, true) {
			finished = c.id
		}
	}
	if u := &p.update; u.id != "" {
		r := t.runs[u.id]
		h := headerOf(r.task)
		if finishedBy(h.state, u.state, false) {
			finished = u.id
		}
		h.version++
		h.state = u.state
		if now.After(h.updated) { // else the wall clock stepped back
			h.updated = now
		}
		r.task = u.record(h)
	}
	for _, m := range p.messages {
		t.context(m.contextID).transcript.append(m)
	}
	for evs := p.events; len(evs) > 0; {
		n := 1 // evs[:n] is a run of events of one log
		for n < len(evs) && evs[n].RunID == evs[0].RunID {
			n++
		}
		t.run(evs[0].RunID).log.append(evs[:n], now)
		evs = evs[n:]
	}
	return finished
}
