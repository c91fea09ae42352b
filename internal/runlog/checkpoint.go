package runlog

import (
	"agentd/internal/engine"
	"agentd/internal/run"
	"agentd/internal/store"
)

// AppendCheckpointed appends a live event, as Append does, and stages cp
// as the run's checkpoint covering it: whichever write makes the event
// durable — the flusher's batch, a Flush or a Commit — saves cp in the
// same store transaction (store.Change.Checkpoints), fenced like the
// events. A checkpoint is therefore durable exactly when the events it
// covers are: an engine that relays an outside stream and checkpoints how
// far it got never finds, after a crash, an event in the log that its
// checkpoint does not cover, nor a checkpoint covering an event the log
// lacks.
//
// A newer staged checkpoint replaces one no write has taken yet, so a
// burst costs one checkpoint per write of the run, not one per event.
// The caller stamps cp (its attempt) beforehand; the log does not read it.
func (l *Log) AppendCheckpointed(typ string, body Body, cp engine.Checkpoint) {
	l.appendLive(typ, body, &cp)
}

// StageCheckpoint stages cp as the run's checkpoint covering every event
// appended so far, without an event of its own: the log's next write saves
// it, as for AppendCheckpointed. The caller stamps cp.
func (l *Log) StageCheckpoint(cp engine.Checkpoint) {
	l.mu.Lock()
	l.staged, l.stagedAt = &cp, l.last()
	l.mu.Unlock()
}

// takeStagedLocked hands the staged checkpoint to the write about to
// start (pending): it covers only events that write holds. A newer
// checkpoint replaces the one a failed write carried, since the next
// write holds the older one's events too. Callers hold flushMu and mu.
func (l *Log) takeStagedLocked() {
	if l.staged != nil {
		l.flight, l.flightAt = l.staged, l.stagedAt
		l.staged = nil
	}
}

// checkpoints appends the checkpoint the write in progress carries, if
// any, to to. Callers hold flushMu and called pending.
func (l *Log) checkpoints(to []engine.Checkpoint) []engine.Checkpoint {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.flight == nil {
		return to
	}
	return append(to, *l.flight)
}

// unstageLocked forgets staged checkpoints that cover events the log just
// dropped (a failed write nobody saw): they must never be written.
// Callers hold mu.
func (l *Log) unstageLocked() {
	if l.staged != nil && l.stagedAt > l.last() {
		l.staged = nil
	}
	if l.flight != nil && l.flightAt > l.last() {
		l.flight = nil
	}
}

// change is the write of l's pending events p on their own, with their
// fences, the checkpoint that covers them and the run's deferred create.
// Callers hold flushMu and called pending.
func (l *Log) change(p []run.Event) store.Change {
	return l.withCreate(store.Change{Events: p, EventsValid: true, Fences: l.fences(nil), Checkpoints: l.checkpoints(nil)})
}
