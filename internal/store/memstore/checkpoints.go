package memstore

import (
	"context"
	"maps"
	"slices"
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
	in, attempt, err := inCheckpoint(cp)
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	t := s.writeTenant(ctx)
	history := t.checkpoints[cp.ExecID]
	if len(history) > 0 {
		// The newest was validated when it was saved.
		newest, _ := attemptOf(history[len(history)-1])
		if attempt < newest {
			return errdefs.Conflictf("save checkpoint of run %q: attempt %d is stale, attempt %d has checkpointed since", cp.ExecID, attempt, newest)
		}
	}
	t.checkpoints[cp.ExecID] = append(history, in)
	return nil
}

// LoadCheckpoint returns the newest checkpoint of run, or (nil, nil).
func (s *Store) LoadCheckpoint(ctx context.Context, runID string) (*engine.Checkpoint, error) {
	if err := live(ctx); err != nil {
		return nil, err
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	t := s.readTenant(ctx)
	if t == nil || len(t.checkpoints[runID]) == 0 {
		return nil, nil
	}
	history := t.checkpoints[runID]
	cp := outCheckpoint(history[len(history)-1])
	return &cp, nil
}

// ListCheckpoints returns the run's checkpoints, oldest first.
func (s *Store) ListCheckpoints(ctx context.Context, runID string) ([]engine.Checkpoint, error) {
	if err := live(ctx); err != nil {
		return nil, err
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	t := s.readTenant(ctx)
	if t == nil {
		return nil, nil
	}
	var out []engine.Checkpoint
	for _, cp := range t.checkpoints[runID] {
		out = append(out, outCheckpoint(cp))
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
	if t := s.readTenant(ctx); t != nil {
		delete(t.checkpoints, runID)
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

func inCheckpoint(cp engine.Checkpoint) (engine.Checkpoint, int64, error) {
	field := func() string { return "checkpoint of run " + strconv.Quote(cp.ExecID) }
	if cp.ExecID == "" || cp.Board == nil {
		return cp, 0, errdefs.Validationf("%s: exec id and board are required", field())
	}
	attempt, err := attemptOf(cp)
	if err != nil {
		return cp, 0, err
	}
	board := engine.BoardSnapshot{}
	if board.Vars, err = inJSONMap(cp.Board.Vars, func() string { return field() + ": board.vars" }); err != nil {
		return cp, 0, err
	}
	if cp.Board.Channels != nil {
		board.Channels = make(map[string][]model.Message, len(cp.Board.Channels))
		for name, msgs := range cp.Board.Channels {
			ch := make([]model.Message, len(msgs))
			for i, m := range msgs {
				if ch[i], err = inMessage(m, func() string { return field() + ": board.channels[" + name + "][" + strconv.Itoa(i) + "]" }); err != nil {
					return cp, 0, err
				}
			}
			board.Channels[name] = ch
		}
	}
	cp.Board = &board
	if cp.Payload, err = inRaw(cp.Payload, func() string { return field() + ": payload" }); err != nil {
		return cp, 0, err
	}
	cp.Attributes = maps.Clone(cp.Attributes)
	cp.Timestamp = orNow(cp.Timestamp, now())
	cp.OriginalStartedAt = storedTime(cp.OriginalStartedAt)
	return cp, attempt, nil
}

func outCheckpoint(cp engine.Checkpoint) engine.Checkpoint {
	board := engine.BoardSnapshot{Vars: copyJSONMap(cp.Board.Vars)}
	if cp.Board.Channels != nil {
		board.Channels = make(map[string][]model.Message, len(cp.Board.Channels))
		for name, msgs := range cp.Board.Channels {
			ch := make([]model.Message, len(msgs))
			for i, m := range msgs {
				ch[i] = m.Clone()
			}
			board.Channels[name] = ch
		}
	}
	cp.Board = &board
	cp.Payload = slices.Clone(cp.Payload)
	cp.Attributes = maps.Clone(cp.Attributes)
	return cp
}
