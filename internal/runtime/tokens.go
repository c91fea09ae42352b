package runtime

import "agentd/internal/runlog"

// TokenLiterals reads a delta event's data (EventDelta) without decoding
// it and returns its actor and text members still encoded as JSON string
// literals, so that a face can splice a token into its own frame; ok is
// false for any other shape (decode it with encoding/json). The reading is
// the log's own (runlog.TokenLiterals): JSON is read and written by hand
// nowhere else.
func TokenLiterals(data []byte) (actor, text []byte, ok bool) { return runlog.TokenLiterals(data) }
