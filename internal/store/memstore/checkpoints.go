package memstore

import (
	"context"
	"strconv"

	"agentd/internal/engine"
	"agentd/internal/errdefs"
	"agentd/internal/model"
	"agentd/internal/store"
)

// SaveCheckpoint appends cp to its run's history, unless a newer attempt
// has already checkpointed the run (a stale writer: Conflict).
func (s *Store) SaveCheckpoint(ctx context.Context, cp engine.Checkpoint) error {
	if err := live(ctx); err != nil {
		return err
	}
	in, err := encodeCheckpoint(cp)
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	t := s.writeTenant(ctx)
	if err := t.checkFresh(cp.ExecID, in); err != nil {
		return err
	}
	t.run(cp.ExecID).addCheckpoint(in)
	return nil
}

// runCheckpoint is a checkpoint of a Change, encoded before the lock.
type runCheckpoint struct {
	runID string
	in    storedCheckpoint
}

// prepareCheckpoints encodes a change's checkpoints, one per run.
func prepareCheckpoints(cps []engine.Checkpoint) ([]runCheckpoint, error) {
	if len(cps) == 0 {
		return nil, nil
	}
	out := make([]runCheckpoint, 0, len(cps))
	for _, cp := range cps {
		in, err := encodeCheckpoint(cp)
		if err != nil {
			return nil, err
		}
		for _, o := range out {
			if o.runID == cp.ExecID {
				return nil, errdefs.Validationf("checkpoint of run %q: a change holds at most one per run", cp.ExecID)
			}
		}
		out = append(out, runCheckpoint{runID: cp.ExecID, in: in})
	}
	return out, nil
}

// checkFresh refuses a checkpoint of runID older than the newest one
// stored (a stale writer). Callers hold s.mu.
func (t *tenant) checkFresh(runID string, in storedCheckpoint) error {
	r := t.runs[runID]
	if r == nil || len(r.checkpoints) == 0 {
		return nil
	}
	if newest := r.checkpoints[len(r.checkpoints)-1].attempt; in.attempt < newest {
		return errdefs.Conflictf("save checkpoint of run %q: attempt %d is stale, attempt %d has checkpointed since", runID, in.attempt, newest)
	}
	return nil
}

// LoadCheckpoint returns the newest checkpoint of run, or (nil, nil).
func (s *Store) LoadCheckpoint(ctx context.Context, runID string) (*engine.Checkpoint, error) {
	if err := live(ctx); err != nil {
		return nil, err
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	history := s.checkpoints(ctx, runID)
	if len(history) == 0 {
		return nil, nil
	}
	cp := history[len(history)-1].decode()
	return &cp, nil
}

// ListCheckpoints returns the run's checkpoints, oldest first.
func (s *Store) ListCheckpoints(ctx context.Context, runID string) ([]engine.Checkpoint, error) {
	if err := live(ctx); err != nil {
		return nil, err
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	var out []engine.Checkpoint
	for _, cp := range s.checkpoints(ctx, runID) {
		out = append(out, cp.decode())
	}
	return out, nil
}

// DeleteCheckpoints deletes every checkpoint of run.
func (s *Store) DeleteCheckpoints(ctx context.Context, runID string) error {
	if err := live(ctx); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if t := s.readTenant(ctx); t != nil && t.runs[runID] != nil {
		t.runs[runID].deleteCheckpoints()
		t.dropIfEmpty(runID)
	}
	return nil
}

// checkpoints returns the history of runID. Callers hold s.mu.
func (s *Store) checkpoints(ctx context.Context, runID string) []storedCheckpoint {
	if t := s.readTenant(ctx); t != nil && t.runs[runID] != nil {
		return t.runs[runID].checkpoints
	}
	return nil
}

// attemptOf parses the checkpoint's attempt; a missing one counts as 0.
func attemptOf(cp engine.Checkpoint) (int64, error) {
	a, ok := cp.Attributes[store.AttrAttempt]
	if !ok {
		return 0, nil
	}
	n, err := strconv.ParseInt(a, 10, 64)
	if err != nil {
		return 0, errdefs.Validationf("checkpoint of run %q: attribute %s=%q is not a decimal attempt", cp.ExecID, store.AttrAttempt, a)
	}
	return n, nil
}

// storedCheckpoint is a checkpoint as a record, and the attempt that
// wrote it.
type storedCheckpoint struct {
	attempt int64
	record  string
}

// encodeCheckpoint validates cp and encodes it, normalised as messages and
// JSON maps are (putMessage, putJSONMap).
func encodeCheckpoint(cp engine.Checkpoint) (storedCheckpoint, error) {
	field := func() string { return "checkpoint of run " + strconv.Quote(cp.ExecID) }
	if cp.ExecID == "" || cp.Board == nil {
		return storedCheckpoint{}, errdefs.Validationf("%s: exec id and board are required", field())
	}
	attempt, err := attemptOf(cp)
	if err != nil {
		return storedCheckpoint{}, err
	}
	var buf [512]byte // a short run's checkpoint fits: one allocation, for the record
	b := putInt(putString(putString(buf[:0], cp.ExecID), cp.Step), int64(cp.Iteration))
	if b, err = putJSONMap(b, cp.Board.Vars, func() string { return field() + ": board.vars" }); err != nil {
		return storedCheckpoint{}, err
	}
	if b, err = putChannels(b, cp.Board.Channels, field); err != nil {
		return storedCheckpoint{}, err
	}
	if b, err = putRaw(b, cp.Payload, func() string { return field() + ": payload" }); err != nil {
		return storedCheckpoint{}, err
	}
	if cp.Attributes == nil {
		b = putUint(b, 0)
	} else {
		b = putUint(b, uint64(len(cp.Attributes))+1)
		for k, v := range cp.Attributes {
			b = putString(putString(b, k), v)
		}
	}
	if cp.Timestamp.IsZero() {
		cp.Timestamp = now()
	}
	b = putTime(b, store.StoredTime(cp.Timestamp))
	b = putTime(b, store.StoredTime(cp.OriginalStartedAt))
	b = putString(b, cp.SpecVersion)
	return storedCheckpoint{attempt: attempt, record: string(b)}, nil
}

func putChannels(b []byte, channels map[string][]model.Message, field fieldName) ([]byte, error) {
	if channels == nil {
		return putUint(b, 0), nil
	}
	b = putUint(b, uint64(len(channels))+1)
	for name, msgs := range channels {
		b = putUint(putString(b, name), uint64(len(msgs)))
		for i, m := range msgs {
			var err error
			if b, err = putMessage(b, m, func() string { return field() + ": board.channels[" + name + "][" + strconv.Itoa(i) + "]" }); err != nil {
				return b, err
			}
		}
	}
	return b, nil
}

// decode returns the checkpoint, which shares nothing mutable with the
// store.
func (c storedCheckpoint) decode() engine.Checkpoint {
	r := reader{s: c.record}
	cp := engine.Checkpoint{ExecID: r.str(), Step: r.str(), Iteration: int(r.int())}
	cp.Board = &engine.BoardSnapshot{Vars: r.jsonMap()}
	if n := int(r.uint()); n > 0 {
		cp.Board.Channels = make(map[string][]model.Message, n-1)
		for range n - 1 {
			name := r.str()
			msgs := make([]model.Message, r.uint())
			for i := range msgs {
				msgs[i] = r.message(nil)
			}
			cp.Board.Channels[name] = msgs
		}
	}
	cp.Payload = r.bytes()
	if n := int(r.uint()); n > 0 {
		cp.Attributes = make(map[string]string, n-1)
		for range n - 1 {
			k := r.str()
			cp.Attributes[k] = r.str()
		}
	}
	cp.Timestamp = r.time()
	cp.OriginalStartedAt = r.time()
	cp.SpecVersion = r.str()
	return cp
}
