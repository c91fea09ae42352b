package pgstore_test

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"agentd/internal/engine"
	"agentd/internal/store"
)

// Checkpoints are JSONB: the payload comes back with its keys reordered
// and its spacing changed, equal in meaning, and the fields the seeds'
// stores dropped (OriginalStartedAt, SpecVersion) survive.
func TestCheckpointPayloadComparesSemantically(t *testing.T) {
	s := open(t)
	started := time.Date(2025, 1, 2, 3, 4, 5, 123456789, time.UTC)
	payload := json.RawMessage(`{"zeta": 1, "alpha": {"y": [1, 2], "b": null}, "mid": "x"}`)
	cp := engine.Checkpoint{
		ExecID:            "r",
		Board:             &engine.BoardSnapshot{Vars: map[string]any{"k": "v"}},
		Payload:           payload,
		Attributes:        map[string]string{store.AttrAttempt: "1"},
		Timestamp:         started.Add(time.Minute),
		OriginalStartedAt: started,
		SpecVersion:       "v7",
	}
	if err := s.SaveCheckpoint(t.Context(), cp); err != nil {
		t.Fatalf("SaveCheckpoint: %v", err)
	}
	got, err := s.LoadCheckpoint(t.Context(), "r")
	if err != nil || got == nil {
		t.Fatalf("LoadCheckpoint: got %v, %v", got, err)
	}
	if bytes.Equal(got.Payload, payload) {
		t.Logf("payload came back byte for byte; JSONB normally reorders keys")
	}
	var gotV, wantV any
	if err := json.Unmarshal(got.Payload, &gotV); err != nil {
		t.Fatalf("decode loaded payload %s: %v", got.Payload, err)
	}
	if err := json.Unmarshal(payload, &wantV); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(gotV, wantV) {
		t.Errorf("payload: got %s, want %s (semantically)", got.Payload, payload)
	}
	if !got.OriginalStartedAt.Equal(started) || got.SpecVersion != "v7" || !got.Timestamp.Equal(cp.Timestamp) {
		t.Errorf("got started %v, spec %q, timestamp %v; want %v, %q, %v",
			got.OriginalStartedAt, got.SpecVersion, got.Timestamp, started, "v7", cp.Timestamp)
	}
}
