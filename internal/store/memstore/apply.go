package memstore

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"agentd/internal/errdefs"
	"agentd/internal/store"
)

// prepared is a Change validated and copied, ready to be checked against
// the stored state and committed.
type prepared struct {
	key      *store.IdempotencyKey
	taskID   string
	create   *store.Task
	update   *store.Task
	messages []store.Message
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
		key := *k
		p.key = &key
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
	if p.events, err = prepareEvents(c.Events, now); err != nil {
		return prepared{}, err
	}
	return p, nil
}

func prepareCreate(in store.Task, now time.Time) (*store.Task, error) {
	field := func() string { return fmt.Sprintf("create task %q", in.ID) }
	switch {
	case in.ID == "" || in.ContextID == "" || in.AgentID == "":
		return nil, errdefs.Validationf("%s: id, context id and agent id are required", field())
	case !in.State.Valid():
		return nil, errdefs.Validationf("%s: unknown state %q", field(), in.State)
	case in.Version != 0:
		return nil, errdefs.Validationf("%s: version is %d, want 0 (the store sets it)", field(), in.Version)
	}
	t, err := inTask(in, field)
	if err != nil {
		return nil, err
	}
	t.Version = 1
	t.CreatedAt = orNow(in.CreatedAt, now)
	t.UpdatedAt = now
	return t, nil
}

func prepareUpdate(in store.Task) (*store.Task, error) {
	field := func() string { return fmt.Sprintf("update task %q", in.ID) }
	switch {
	case in.ID == "":
		return nil, errdefs.Validationf("%s: id is required", field())
	case !in.State.Valid():
		return nil, errdefs.Validationf("%s: unknown state %q", field(), in.State)
	}
	return inTask(in, field)
}

func prepareMessages(msgs []store.Message, taskID string, now time.Time) ([]store.Message, error) {
	if len(msgs) == 0 {
		return nil, nil
	}
	out := make([]store.Message, len(msgs))
	for i, m := range msgs {
		if m.ContextID == "" {
			return nil, errdefs.Validationf("messages[%d] (id %q): context id is required", i, m.ID)
		}
		if m.TaskID == "" {
			m.TaskID = taskID
		}
		var err error
		if m.Message, err = inMessage(m.Message, func() string { return "messages[" + strconv.Itoa(i) + "]" }); err != nil {
			return nil, err
		}
		m.CreatedAt = orNow(m.CreatedAt, now)
		out[i] = m
	}
	return out, nil
}

// prepareEvents validates evs and copies them with all their Data in one
// buffer, each Data capped so that appending to one cannot overwrite the
// next.
func prepareEvents(evs []store.Event, now time.Time) ([]store.Event, error) {
	if len(evs) == 0 {
		return nil, nil
	}
	size := 0
	for i, e := range evs {
		if e.RunID == "" || e.Type == "" {
			return nil, errdefs.Validationf("events[%d] (run %q, seq %d): run id and type are required", i, e.RunID, e.Seq)
		}
		if len(e.Data) == 0 || !validJSON(e.Data) {
			return nil, errdefs.Validationf("events[%d] (run %q, seq %d): data must be a valid JSON value", i, e.RunID, e.Seq)
		}
		size += len(e.Data)
	}
	buf := make([]byte, 0, size)
	out := make([]store.Event, len(evs))
	for i, e := range evs {
		start := len(buf)
		buf = append(buf, e.Data...)
		e.Data = json.RawMessage(buf[start:len(buf):len(buf)])
		e.Time = orNow(e.Time, now)
		out[i] = e
	}
	return out, nil
}

// check reports why p cannot be committed to t, if it cannot. It writes
// nothing.
func (t *tenant) check(p *prepared) error {
	if p.key != nil {
		if owner, ok := t.keys[*p.key]; ok {
			return &store.DuplicateError{Key: *p.key, TaskID: owner}
		}
	}
	if p.create != nil {
		if _, ok := t.tasks[p.create.ID]; ok {
			return errdefs.Conflictf("create task %q: a task with this id exists", p.create.ID)
		}
	}
	if u := p.update; u != nil {
		cur, ok := t.tasks[u.ID]
		if !ok && (p.create == nil || p.create.ID != u.ID) {
			return errdefs.NotFoundf("update task %q: no such task", u.ID)
		}
		version := int64(1) // created by the same change
		if ok {
			version = cur.Version
		}
		if u.Version != version {
			return errdefs.Conflictf("update task %q: version %d is stale, the stored version is %d", u.ID, u.Version, version)
		}
	}
	next := map[string]int64{}
	for _, e := range p.events {
		want, ok := next[e.RunID]
		if !ok {
			want = t.logs[e.RunID].lastSeq() + 1
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
	if p.key != nil {
		t.keys[*p.key] = p.taskID
		t.keysByTask[p.taskID] = append(t.keysByTask[p.taskID], *p.key)
	}
	if c := p.create; c != nil {
		c.Tenant = tenantName
		t.insertTask(c)
		if finishedBy("", c, true) {
			finished = c.ID
		}
	}
	if u := p.update; u != nil {
		cur := t.tasks[u.ID]
		if finishedBy(cur.State, u, false) {
			finished = u.ID
		}
		u.Tenant, u.ContextID, u.AgentID, u.CreatedAt = cur.Tenant, cur.ContextID, cur.AgentID, cur.CreatedAt
		u.Version = cur.Version + 1
		u.UpdatedAt = now
		if now.Before(cur.UpdatedAt) { // the wall clock stepped back
			u.UpdatedAt = cur.UpdatedAt
		}
		t.tasks[u.ID] = u
	}
	for _, m := range p.messages {
		t.transcript(m.ContextID).append(m)
	}
	for _, e := range p.events {
		t.log(e.RunID).append(e)
	}
	return finished
}
