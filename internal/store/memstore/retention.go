package memstore

import (
	"slices"

	"agentd/internal/store"
)

// DefaultRetention is how many finished runs a Store keeps unless
// WithRetention says otherwise.
const DefaultRetention = 10_000

// Option configures a Store.
type Option func(*Store)

// WithRetention keeps at most n finished runs — tasks in a terminal state —
// and forgets older ones, oldest finish first, with everything that belongs
// to them: their events, checkpoints, idempotency records, push configs and
// lease, and the transcript of a context once none of its tasks is left.
// A forgotten run reads as not found. n <= 0 keeps every run (the heap then
// grows with every run the process ever served).
func WithRetention(n int) Option {
	return func(s *Store) { s.retain = n }
}

// finishedRun names a task that reached a terminal state, in the order
// runs finished.
type finishedRun struct {
	tenant, id string
}

// noteFinished records that task id of tenantName reached a terminal state and
// forgets the oldest finished runs once more than the retention are kept.
// Eviction works in batches — down to 3/4 of the retention — so that the
// task indexes are rebuilt once per batch rather than once per run. Callers
// hold the write lock.
func (s *Store) noteFinished(tenantName, id string) {
	if s.retain <= 0 {
		return
	}
	s.finished = append(s.finished, finishedRun{tenantName, id})
	if len(s.finished)-s.finishedHead <= s.retain {
		return
	}
	target := s.retain - s.retain/4
	gone := map[*tenant][]taskKey{} // the keys to remove from allTasks
	for len(s.finished)-s.finishedHead > target {
		r := s.finished[s.finishedHead]
		s.finished[s.finishedHead] = finishedRun{}
		s.finishedHead++
		if t := s.tenants[r.tenant]; t != nil {
			if k, ok := t.forget(r.id); ok {
				gone[t] = append(gone[t], k)
				delete(s.leases, r.id)
				delete(s.released, r.id)
			}
		}
	}
	for t, keys := range gone {
		// Runs mostly finish in the order they were created, so keys is
		// close to sorted already.
		slices.SortFunc(keys, compareKeys)
		t.allTasks.removeSorted(keys)
	}
	// Drop the consumed head once it is the larger part of the queue, so
	// the queue's memory stays proportional to the retention.
	if s.finishedHead > len(s.finished)/2 {
		s.finished = append(s.finished[:0], s.finished[s.finishedHead:]...)
		s.finishedHead = 0
	}
}

// forget deletes a finished task and what belongs to it, except its entry
// in allTasks, which the caller removes once per batch: forget returns its
// key. It reports false (and deletes nothing) when the task is gone or no
// longer terminal: a task queued twice, or one that moved on after it
// finished. Callers hold the write lock.
func (t *tenant) forget(id string) (taskKey, bool) {
	r := t.runs[id]
	if r == nil || r.task == "" {
		return taskKey{}, false
	}
	task := headerOf(r.task)
	if !task.state.Terminal() {
		return taskKey{}, false
	}
	delete(t.runs, id)
	if c := t.contexts[task.contextID]; c != nil {
		c.tasks.remove(task.key())
		if len(c.tasks) == 0 {
			// The context's last task: its transcript goes with it.
			delete(t.contexts, task.contextID)
		} else {
			// The context goes on: its history keeps the task's
			// messages, which no longer list under the forgotten task.
			c.transcript.forgetTask(id)
		}
	}
	for _, k := range r.keys {
		// The key is id's: a recorded key is never recorded again, and
		// only forgetting its run deletes it.
		delete(t.keys, k)
	}
	return task.key(), true
}

// dropIfEmpty forgets the records of runID once nothing is left in them.
// Callers hold the write lock.
func (t *tenant) dropIfEmpty(runID string) {
	r := t.runs[runID]
	if r != nil && r.task == "" && r.log.lastSeq() == 0 &&
		r.checkpoints == nil && r.push == nil && r.keys == nil {
		delete(t.runs, runID)
	}
}

// finishedBy reports whether the committed change moved a task into a
// terminal state: created terminal, or updated from a non-terminal state.
func finishedBy(prev, next store.TaskState, created bool) bool {
	return next.Terminal() && (created || !prev.Terminal())
}
