package config

import (
	"bytes"
	"encoding/json"
	"fmt"
	"time"
)

// Retention prunes what finished runs leave behind: the event logs and
// checkpoints of runs that reached a terminal state more than MaxAge ago.
// The task itself (its final state, usage and transcript) is kept, so a
// client that comes back still reads the outcome, and a stream that asks
// for pruned events is told so with a gap event.
type Retention struct {
	// MaxAge is how long a finished run's events are kept (required).
	MaxAge Duration `json:"max_age"`
	// Interval is how often retention runs (default 10m).
	Interval Duration `json:"interval,omitempty"`
	// Batch is how many runs one store transaction prunes (default 500).
	Batch int `json:"batch,omitempty"`
}

// UnmarshalJSON decodes and checks the section.
func (r *Retention) UnmarshalJSON(b []byte) error {
	type plain Retention
	var p plain
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&p); err != nil {
		return err
	}
	if p.MaxAge <= 0 {
		return fmt.Errorf("max_age: required, a duration such as \"720h\" (how long a finished run's events are kept)")
	}
	if p.Batch < 0 {
		return fmt.Errorf("batch: %d must not be negative", p.Batch)
	}
	*r = Retention(p)
	return nil
}

// IntervalOr is how often retention runs.
func (r Retention) IntervalOr() time.Duration { return r.Interval.Or(10 * time.Minute) }

// BatchOr is the number of runs pruned per store transaction.
func (r Retention) BatchOr() int {
	if r.Batch == 0 {
		return 500
	}
	return r.Batch
}
