package engine

import "agentd/internal/model"

// DirectAnswerer is an engine that can tell, from the message that opens a
// task, that its answer will be a message of its own (its final message
// marked model.MetaResponseKind = "message") rather than a task's work.
// Faces whose protocol tells the two apart before the answer exists (an
// A2A stream is one Message, or a Task and its updates) ask it first; an
// engine that cannot tell does not implement it, and its marked answers
// reach streams as a task's.
type DirectAnswerer interface {
	AnswersDirectly(msg model.Message) bool
}

// AnswersDirectly reports whether e says it answers msg with a message.
func AnswersDirectly(e Engine, msg model.Message) bool {
	d, ok := e.(DirectAnswerer)
	return ok && d.AnswersDirectly(msg)
}
