package engine

import "agentd/internal/event"

// SubjectContextCompaction carries one compaction of a run's context — an
// engine summarising the oldest history into a shorter message to stay
// within the model's window (the loop engine, engine/loop/compact.go):
// engine.run.<run>.context.<actor>.compaction. The runtime logs it as a
// context.compaction event.
func SubjectContextCompaction(runID, stepActor string) event.Subject {
	return actorSubject(runID, "context", stepActor, "compaction")
}
