package run

import (
	"encoding/json"
	"time"
)

// Event is one entry of a run's event log.
type Event struct {
	RunID string    `json:"run_id"`
	Seq   int64     `json:"seq"`
	Type  string    `json:"type"`
	Time  time.Time `json:"time"`
	// Data is the complete JSON object delivered to clients (it includes
	// run_id, seq and type), encoded once by the runtime.
	Data json.RawMessage `json:"data"`
}

// EventPage is one page of a run's event log (a store's ReadEvents).
type EventPage struct {
	Events []Event
	// LastSeq is the highest seq ever appended to the run's log (0 if none).
	LastSeq int64
	// PrunedThrough is the highest pruned seq (0 if nothing was pruned). A
	// reader whose after < PrunedThrough has missed events for good.
	PrunedThrough int64
}
