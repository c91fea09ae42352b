package memstore

import (
	"context"

	"agentd/internal/errdefs"
	"agentd/internal/run"
	"agentd/internal/store"
)

var _ store.RunDeleter = (*Store)(nil)

// DeleteRun deletes a finished run and what is its (store.RunDeleter).
func (s *Store) DeleteRun(ctx context.Context, id string) error {
	if err := live(ctx); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	t := s.readTenant(ctx)
	var rec string
	if t != nil {
		rec = t.task(id)
	}
	if rec == "" {
		return errdefs.NotFoundf("run %q not found", id)
	}
	h := headerOf(rec)
	if !h.state.Terminal() {
		return errdefs.Conflictf("run %q is %s: only a finished run is deleted", id, h.state)
	}
	r := t.runs[id]
	if c := t.contexts[h.contextID]; c != nil {
		c.transcript.deleteTask(id)
	}
	if !t.forget(r, h.contextID, h.key()) {
		return errdefs.Conflictf("run %q changed while it was deleted", id)
	}
	t.allTasks.remove(h.key())
	for cfg := range r.push {
		s.markPending(pushKey{run.TenantFrom(ctx), id, cfg}, false)
	}
	delete(s.leases, id)
	delete(s.released, id)
	return nil
}

// deleteTask empties the records of taskID's messages, which keeps the
// positions of the others, and forgets its span.
func (tr *transcript) deleteTask(taskID string) {
	sp := tr.span(taskID)
	if sp == nil {
		return
	}
	for pos := sp.first; pos <= sp.last; pos++ {
		if tr.msgs[pos-1] != "" && tr.taskOf(pos) == taskID {
			tr.msgs[pos-1] = ""
			tr.deleted++
		}
	}
	tr.forgetTask(taskID)
}

// livePositions lists the positions after after whose message was not
// deleted.
func (tr *transcript) livePositions(after int64) []int64 {
	ps := make([]int64, 0, max(0, len(tr.msgs)-int(after)))
	for pos := after + 1; pos <= int64(len(tr.msgs)); pos++ {
		if tr.msgs[pos-1] != "" {
			ps = append(ps, pos)
		}
	}
	return ps
}
