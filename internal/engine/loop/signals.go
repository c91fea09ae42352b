package loop

import (
	"maps"
	"time"

	"agentd/internal/engine"
	"agentd/internal/model"
)

// Signals: before each iteration — right after the previous one's
// checkpoint, before any model turn or tool call of the next — the loop
// asks the host whether the user paused the run (engine.PauseRequested)
// and stops with the interrupt if so. Before each model turn it takes the
// messages the user sent to the run while it executed
// (engine.TakeFeedback) and appends them to the conversation as user
// messages, so the turn answers them.

// PausesAtCheckpoints declares that the loop honours pauses
// (engine.PauseAware).
func (e *Engine) PausesAtCheckpoints() {}

// takeFeedback appends the host's pending feedback to the main channel,
// keeping the ids the host gave (a message the transcript holds already
// is then not stored twice).
func (x *execution) takeFeedback() {
	for _, m := range engine.TakeFeedback(x.host) {
		m.Role = model.RoleUser
		if m.ID == "" {
			m.ID = x.e.cfg.NewMessageID()
		}
		if m.CreatedAt.IsZero() {
			m.CreatedAt = time.Now().UTC()
		}
		m.Metadata = maps.Clone(m.Metadata) // the host's copy stays as it is
		if m.Metadata == nil {
			m.Metadata = map[string]any{}
		}
		m.Metadata[MetadataUserFeedback] = true
		x.board.AppendChannelMessage(engine.MainChannel, m)
	}
}

// MetadataUserFeedback marks a user message that reached the run as
// feedback (a signal) while it executed.
const MetadataUserFeedback = "agentd.user_feedback"
