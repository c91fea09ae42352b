package memstore

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"agentd/internal/errdefs"
	"agentd/internal/run"
	"agentd/internal/store"
)

// prepared is a Change validated and copied (but for its events, which
// commit copies into their logs), ready to be checked against the stored
// state and committed.
//
// key, create and update are zero when the change has none: a key's
// context and a task's id are never empty.
type prepared struct {
	key    store.IdempotencyKey
	taskID string
	// create is the header of the task to create, createRecord its
	// record.
	create       taskHeader
	createRecord string
	update       taskUpdate
	events       []run.Event

	// Found by check for commit: the run of the task to update and the
	// header of its record, unless the change creates the task too; and
	// the run and context looked up last.
	updateRun    *runEntry
	updateHeader taskHeader
	look         lookups
}

// encoded is what prepare encodes for commit to copy: kept apart from
// prepared, whose strings escape, so that it can stay in scratch on
// Apply's stack.
type encoded struct {
	messages []storedMessage
	// update is the body of the task update (taskrecord.go).
	update []byte
}

// scratch is room for an encoded change: a common change then allocates
// only its records.
type scratch struct {
	messages [2]storedMessage
	update   [256]byte
}

// Apply writes c atomically: it validates and copies c without the lock,
// then checks it against the stored state and commits it under the lock.
// The idempotency check comes first so that a retried submission always
// learns its original task.
func (s *Store) Apply(ctx context.Context, c store.Change) error {
	if err := live(ctx); err != nil {
		return err
	}
	now, name := now(), run.TenantFrom(ctx)
	var room scratch
	p, enc, err := prepare(c, name, now, &room)
	if err != nil {
		return fmt.Errorf("apply: %w", err)
	}
	cps, err := prepareCheckpoints(c.Checkpoints)
	if err != nil {
		return fmt.Errorf("apply: %w", err)
	}
	if c.Lease != nil && (c.TaskID == "" || c.Lease.Owner == "" || c.Lease.TTL <= 0) {
		return errdefs.Validationf("apply: a lease claim needs the task id, an owner and a positive ttl (got %q, %q, %v)", c.TaskID, c.Lease.Owner, c.Lease.TTL)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	t := s.tenant(name)
	if err := t.check(&p); err != nil {
		return fmt.Errorf("apply: %w", err)
	}
	for _, f := range c.Fences {
		if _, ok := s.held(f); !ok {
			return fmt.Errorf("apply: %w", errdefs.Conflictf("the lease on run %q is no longer held by %q (generation %d)", f.RunID, f.Owner, f.Generation))
		}
	}
	for _, cp := range cps {
		if err := t.checkFresh(cp.runID, cp.in); err != nil {
			return fmt.Errorf("apply: %w", err)
		}
	}
	var lease store.Lease
	if c.Lease != nil {
		if lease, err = s.nextLease(c.TaskID, c.Lease.Owner, name, c.Lease.TTL, now); err != nil {
			return fmt.Errorf("apply: %w", err)
		}
	}
	if r, h := t.commit(&p, enc, now); r != nil {
		s.noteFinished(t, r, h)
	}
	if c.Stored != nil {
		if c.UpdateTask != nil {
			*c.Stored = readTask(t.task(c.UpdateTask.ID))
		} else if c.CreateTask != nil {
			*c.Stored = readTask(t.task(c.CreateTask.ID))
		}
	}
	for _, cp := range cps {
		t.run(cp.runID).addCheckpoint(cp.in)
	}
	if c.Lease != nil {
		s.putLease(lease)
		c.Lease.Granted = lease
	}
	if c.Release != nil {
		s.releaseLocked(*c.Release)
	}
	return nil
}

// prepare validates and encodes c, a change of tenantName's, using room
// where what it encodes fits.
func prepare(c store.Change, tenantName string, now time.Time, room *scratch) (prepared, encoded, error) {
	p := prepared{taskID: c.TaskID}
	if k := c.Idempotency; k != nil {
		if k.ContextID == "" || k.MessageID == "" || c.TaskID == "" {
			return prepared{}, encoded{}, errdefs.Validationf("idempotency key %q/%q of task %q: context id, message id and task id are required", k.ContextID, k.MessageID, c.TaskID)
		}
		p.key = *k
	}
	var (
		enc encoded
		err error
	)
	if c.CreateTask != nil {
		if p.create, p.createRecord, err = prepareCreate(*c.CreateTask, tenantName, now); err != nil {
			return prepared{}, encoded{}, err
		}
	}
	if c.UpdateTask != nil {
		if p.update, enc.update, err = prepareUpdate(*c.UpdateTask, room.update[:0]); err != nil {
			return prepared{}, encoded{}, err
		}
	}
	if enc.messages, err = prepareMessages(room.messages[:0], c.Messages, c.TaskID, now); err != nil {
		return prepared{}, encoded{}, err
	}
	if p.events, err = prepareEvents(c.Events, c.EventsValid); err != nil {
		return prepared{}, encoded{}, err
	}
	return p, enc, nil
}

// prepareCreate validates a task to create and returns its record: all of
// it is known before the lock, for a new task is at its given version
// plus one (store.Change.CreateTask), updated now.
func prepareCreate(in run.Task, tenantName string, now time.Time) (taskHeader, string, error) {
	field := func() string { return fmt.Sprintf("create task %q", in.ID) }
	switch {
	case in.ID == "" || in.ContextID == "" || in.AgentID == "":
		return taskHeader{}, "", errdefs.Validationf("%s: id, context id and agent id are required", field())
	case !in.State.Valid():
		return taskHeader{}, "", errdefs.Validationf("%s: unknown state %q", field(), in.State)
	case in.Version < 0:
		return taskHeader{}, "", errdefs.Validationf("%s: version %d is negative", field(), in.Version)
	}
	var buf [256]byte // most tasks fit
	body, err := putTaskBody(buf[:0], in, field)
	if err != nil {
		return taskHeader{}, "", err
	}
	h := taskHeader{
		id: in.ID, contextID: in.ContextID, agentID: in.AgentID, tenant: tenantName,
		version: in.Version + 1, created: orNow(in.CreatedAt, now), updated: now, state: in.State,
	}
	return h, taskRecord(h, body), nil
}

// prepareUpdate validates a task update and appends its body to b.
func prepareUpdate(in run.Task, b []byte) (taskUpdate, []byte, error) {
	field := func() string { return fmt.Sprintf("update task %q", in.ID) }
	switch {
	case in.ID == "":
		return taskUpdate{}, nil, errdefs.Validationf("%s: id is required", field())
	case !in.State.Valid():
		return taskUpdate{}, nil, errdefs.Validationf("%s: unknown state %q", field(), in.State)
	}
	body, err := putTaskBody(b, in, field)
	if err != nil {
		return taskUpdate{}, nil, err
	}
	return taskUpdate{id: in.ID, state: in.State, version: in.Version}, body, nil
}

// prepareMessages validates msgs and encodes them for their transcripts,
// appending them to out.
func prepareMessages(out []storedMessage, msgs []run.Message, taskID string, now time.Time) ([]storedMessage, error) {
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
		out = append(out, storedMessage{contextID: m.ContextID, taskID: m.TaskID, record: string(b)})
	}
	return out, nil
}

// prepareEvents validates evs (their data only when the writer did not
// promise it is valid JSON). They are copied into their logs under the
// lock: a log stores events in its own buffers, so a copy made here would
// be thrown away.
func prepareEvents(evs []run.Event, valid bool) ([]run.Event, error) {
	for i, e := range evs {
		if e.RunID == "" || e.Type == "" {
			return nil, errdefs.Validationf("events[%d] (run %q, seq %d): run id and type are required", i, e.RunID, e.Seq)
		}
		if len(e.Data) == 0 || !valid && !json.Valid(e.Data) {
			return nil, errdefs.Validationf("events[%d] (run %q, seq %d): data must be a valid JSON value", i, e.RunID, e.Seq)
		}
	}
	return evs, nil
}

// check reports why p cannot be committed to t, if it cannot. It writes
// nothing to t; what it looks up for commit too it keeps in p.
func (t *tenant) check(p *prepared) error {
	if p.key.ContextID != "" {
		if owner, ok := t.keys[p.key]; ok {
			return &store.DuplicateError{Key: p.key, TaskID: owner}
		}
	}
	if c := p.create.id; c != "" {
		if r := t.findRun(&p.look, c); r != nil && r.task != "" {
			return errdefs.Conflictf("create task %q: a task with this id exists", c)
		}
	}
	if u := &p.update; u.id != "" {
		version := p.create.version // created by the same change
		if r := t.findRun(&p.look, u.id); r != nil && r.task != "" {
			p.updateRun, p.updateHeader = r, headerOf(r.task)
			version = p.updateHeader.version
		} else if p.create.id != u.id {
			return errdefs.NotFoundf("update task %q: no such task", u.id)
		}
		if u.version != version {
			return errdefs.Conflictf("update task %q: version %d is stale, the stored version is %d", u.id, u.version, version)
		}
	}
	return t.checkEvents(&p.look, p.events)
}

// checkEvents reports an event of evs that does not continue its log. A
// change's events mostly belong to one run, and seq then follows seq; the
// next seq of each run is kept in a map only when evs turn to another run.
func (t *tenant) checkEvents(m *lookups, evs []run.Event) error {
	var next map[string]int64 // for runs of evs that evs have turned away from
	for i, e := range evs {
		var want int64
		if i > 0 && e.RunID == evs[i-1].RunID {
			want = evs[i-1].Seq + 1
		} else if n, ok := next[e.RunID]; ok {
			want = n
		} else {
			want = 1
			if r := t.findRun(m, e.RunID); r != nil {
				want = r.log.lastSeq() + 1
			}
		}
		if e.Seq != want {
			return errdefs.Conflictf("append event to run %q: seq %d does not continue the log, want %d", e.RunID, e.Seq, want)
		}
		if i+1 < len(evs) && evs[i+1].RunID != e.RunID {
			if next == nil {
				next = map[string]int64{}
			}
			next[e.RunID] = e.Seq + 1
		}
	}
	return nil
}

// commit writes a checked change. It returns the run and header of the
// task the change finished (moved into a terminal state), if any.
func (t *tenant) commit(p *prepared, enc encoded, now time.Time) (doneRun *runEntry, finished taskHeader) {
	if p.key.ContextID != "" {
		t.keys[p.key] = p.taskID
		t.runOf(&p.look, p.taskID).addKey(p.key)
	}
	if c := &p.create; c.id != "" {
		r := t.runOf(&p.look, c.id)
		t.insertTask(r, t.contextOf(&p.look, c.contextID), *c, p.createRecord)
		if finishedBy("", c.state, true) {
			doneRun, finished = r, *c
		}
	}
	if u := &p.update; u.id != "" {
		r, h := p.updateRun, p.updateHeader
		if r == nil { // created above
			r = t.findRun(&p.look, u.id)
			h = headerOf(r.task)
		}
		done := finishedBy(h.state, u.state, false)
		h.version++
		h.state = u.state
		if now.After(h.updated) { // else the wall clock stepped back
			h.updated = now
		}
		r.setTask(taskRecord(h, enc.update), h.state)
		if done {
			doneRun, finished = r, h
		}
	}
	for _, m := range enc.messages {
		t.contextOf(&p.look, m.contextID).transcript.append(m)
	}
	for evs := p.events; len(evs) > 0; {
		n := 1 // evs[:n] is a run of events of one log
		for n < len(evs) && evs[n].RunID == evs[0].RunID {
			n++
		}
		t.runOf(&p.look, evs[0].RunID).log.append(evs[:n], now)
		evs = evs[n:]
	}
	return doneRun, finished
}
