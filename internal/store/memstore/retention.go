package memstore

import (
	"slices"
	"time"

	"agentd/internal/run"
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
// runs finished, with what eviction needs to know of it: its context and
// its place in the task indexes, which never change while its run does.
type finishedRun struct {
	tenant    *tenant
	run       *runEntry
	contextID string
	key       taskKey
	// at is when the run finished (PruneFinished).
	at time.Time
}

// noteFinished records that task h of t reached a terminal state and
// forgets the oldest finished runs once more than the retention are kept.
// Eviction works in batches — down to 3/4 of the retention — so that the
// task indexes are rebuilt once per batch rather than once per run. Callers
// hold the write lock.
func (s *Store) noteFinished(t *tenant, r *runEntry, h taskHeader) {
	s.finished = append(s.finished, finishedRun{t, r, h.contextID, h.key(), h.updated})
	if s.retain <= 0 || len(s.finished)-s.finishedHead <= s.retain {
		return
	}
	target := s.retain - s.retain/4
	gone := map[*tenant][]taskKey{} // the keys to remove from allTasks
	for len(s.finished)-s.finishedHead > target {
		r := s.finished[s.finishedHead]
		s.finished[s.finishedHead] = finishedRun{}
		s.finishedHead++
		if t := r.tenant; t.forget(r.run, r.contextID, r.key) {
			gone[t] = append(gone[t], r.key)
			delete(s.leases, r.key.id)
			delete(s.released, r.key.id)
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

// forget deletes the finished task of run fr, of context contextID and
// with index key key, and what belongs to it, except its entry in
// allTasks, which the caller removes once per batch. It reports false
// (and deletes nothing) when the run is gone (a task queued twice; the
// run may have been forgotten and its id used anew) or its task no longer
// terminal (one that moved on after it finished). Callers hold the write
// lock.
func (t *tenant) forget(fr *runEntry, contextID string, key taskKey) bool {
	id := key.id
	if r := t.runs[id]; r != fr || !r.terminal {
		return false
	}
	delete(t.runs, id)
	if c := t.contexts[contextID]; c != nil {
		if len(c.tasks) == 1 {
			// The context's last task (the task is listed in its
			// context until it is forgotten): its transcript goes with it.
			delete(t.contexts, contextID)
		} else {
			c.tasks.remove(key)
			// The context goes on: its history keeps the task's
			// messages, which no longer list under the forgotten task.
			c.transcript.forgetTask(id)
		}
	}
	for _, k := range fr.keys {
		// The key is id's: a recorded key is never recorded again, and
		// only forgetting its run deletes it.
		delete(t.keys, k)
	}
	return true
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
func finishedBy(prev, next run.TaskState, created bool) bool {
	return next.Terminal() && (created || !prev.Terminal())
}
