package runtime

import (
	"agentd/internal/engine"
	"agentd/internal/model"
)

// AnswersDirectly reports whether the agent says, before a task starts,
// that it answers msg with a message of its own rather than a task's work
// (engine.DirectAnswerer): a face whose protocol tells the two apart
// before the answer exists (an A2A stream) answers it as one message.
func (a *Agent) AnswersDirectly(msg model.Message) bool {
	return engine.AnswersDirectly(a.Engine, msg)
}
