package memstore

import (
	"encoding/json"
	"maps"
	"slices"
	"time"

	"agentd/internal/errdefs"
	"agentd/internal/store"
)

// Values on their way into the store are validated and normalised as
// PostgreSQL would store them: times at microsecond precision, maps of
// JSON values through an encoding/json round trip. Most are then encoded
// as records (record.go); the "in*" functions copy those that are not.

// fieldName names the input a value came from, for error messages. It is
// a function so that the name is built only when an error needs it: built
// eagerly, names cost allocations on every write.
type fieldName func() string

// orNow returns t at stored precision, or now when t is zero.
func orNow(t, now time.Time) time.Time {
	if t.IsZero() {
		return now
	}
	return store.StoredTime(t)
}

// inJSONMap round-trips m through encoding/json: the result is a fresh map
// of JSON values (numbers as float64), as a JSONB column returns it. A map
// of values the round trip would not change — strings of valid UTF-8,
// finite float64s, bools and nils — is copied directly: the common case
// (an empty board, flat metadata) then costs one allocation, not a decoder.
func inJSONMap(m map[string]any, field fieldName) (map[string]any, error) {
	if m == nil {
		return nil, nil
	}
	if store.Flat(m) {
		return maps.Clone(m), nil
	}
	b, err := json.Marshal(m)
	if err != nil {
		return nil, errdefs.Validationf("%s: not encodable as JSON: %w", field(), err)
	}
	var out map[string]any
	if err := json.Unmarshal(b, &out); err != nil {
		return nil, errdefs.Validationf("%s: not encodable as JSON: %w", field(), err)
	}
	return out, nil
}

// inRaw copies an optional raw JSON value, rejecting invalid JSON.
func inRaw(b json.RawMessage, field fieldName) (json.RawMessage, error) {
	if len(b) == 0 {
		return nil, nil
	}
	if !json.Valid(b) {
		return nil, errdefs.Validationf("%s: invalid JSON", field())
	}
	return slices.Clone(b), nil
}

// inRequiredRaw is inRaw for a value that must be present.
func inRequiredRaw(b json.RawMessage, field fieldName) (json.RawMessage, error) {
	if len(b) == 0 {
		return nil, errdefs.Validationf("%s: required JSON value is missing", field())
	}
	return inRaw(b, field)
}
