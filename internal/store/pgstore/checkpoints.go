package pgstore

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"

	"agentd/internal/engine"
	"agentd/internal/errdefs"
	"agentd/internal/run"
	"agentd/internal/store"
)

// SaveCheckpoint appends cp to its run's history unless a newer attempt
// already saved one. The fence lives in the run's head row: the upsert
// moves checkpoint_attempt forward (or keeps it) and takes the next
// checkpoint seq only when cp's attempt is not lower, and the insert reads
// its seq from that upsert, so the check and the append are one atomic
// statement. The whole checkpoint (OriginalStartedAt and SpecVersion
// included) is one json document.
//
// Unlike Apply, a save whose answer was lost is retried: at worst the
// history holds the same checkpoint twice in a row, which changes neither
// the newest checkpoint nor the fence.
func (s *Store) SaveCheckpoint(ctx context.Context, cp engine.Checkpoint) error {
	row, err := s.encodeCheckpoint(cp)
	if err != nil {
		return err
	}
	tenant := run.TenantFrom(ctx)
	var saved bool
	err = s.retry(ctx, func(ctx context.Context) error {
		ct, err := s.pool.Exec(ctx, saveCheckpointSQL, tenant, row.runID, row.attempt, row.doc)
		saved = ct.RowsAffected() == 1
		return err
	})
	if err != nil {
		return s.classify(fmt.Sprintf("save checkpoint of run %q", cp.ExecID), err)
	}
	if !saved {
		return row.stale()
	}
	return nil
}

// checkpointRow is a checkpoint validated and encoded for saveCheckpointSQL.
type checkpointRow struct {
	runID   string
	attempt int
	doc     []byte
}

// stale is the error of a save the fence refused.
func (r checkpointRow) stale() error {
	return errdefs.Conflictf("pgstore: save checkpoint of run %q: attempt %d is stale, a newer attempt saved a checkpoint", r.runID, r.attempt)
}

// encodeCheckpoint validates cp and encodes it (stamped now when it has
// no time), for SaveCheckpoint and for Apply.
func (s *Store) encodeCheckpoint(cp engine.Checkpoint) (checkpointRow, error) {
	if cp.ExecID == "" || cp.Board == nil {
		return checkpointRow{}, errdefs.Validationf("pgstore: save checkpoint of run %q: exec id and board are required", cp.ExecID)
	}
	if cp.Payload != nil && !json.Valid(cp.Payload) {
		return checkpointRow{}, errdefs.Validationf("pgstore: save checkpoint of run %q: payload is not valid JSON", cp.ExecID)
	}
	attempt, err := checkpointAttempt(cp)
	if err != nil {
		return checkpointRow{}, err
	}
	if cp.Timestamp.IsZero() {
		cp.Timestamp = s.now()
	}
	doc, err := json.Marshal(cp)
	if err != nil {
		return checkpointRow{}, errdefs.Validationf("pgstore: save checkpoint of run %q: %w", cp.ExecID, err)
	}
	return checkpointRow{runID: cp.ExecID, attempt: attempt, doc: doc}, nil
}

// checkpointHead moves the run's checkpoint head unless a newer attempt
// saved one; checkpointInsert writes the checkpoint only if it moved.
const (
	checkpointHead = `head AS (
	INSERT INTO runs (tenant, run_id, checkpoint_attempt, checkpoint_seq) VALUES ($1, $2, $3, 1)
	ON CONFLICT (tenant, run_id) DO UPDATE
	SET checkpoint_attempt = EXCLUDED.checkpoint_attempt, checkpoint_seq = runs.checkpoint_seq + 1
	WHERE runs.checkpoint_attempt <= EXCLUDED.checkpoint_attempt
	RETURNING checkpoint_seq
)`
	checkpointInsert = `
INSERT INTO checkpoints (tenant, run_id, seq, attempt, checkpoint)
SELECT $1, $2, head.checkpoint_seq, $3, $4 FROM head`
	saveCheckpointSQL = `WITH ` + checkpointHead + checkpointInsert
)

// checkpointAttempt reads the attempt that wrote cp (0 when unrecorded).
func checkpointAttempt(cp engine.Checkpoint) (int, error) {
	v, ok := cp.Attributes[store.AttrAttempt]
	if !ok {
		return 0, nil
	}
	n, err := strconv.ParseUint(v, 10, 31)
	if err != nil {
		return 0, errdefs.Validationf("pgstore: save checkpoint of run %q: attribute %s = %q is not a decimal attempt number",
			cp.ExecID, store.AttrAttempt, v)
	}
	return int(n), nil
}

// LoadCheckpoint returns the newest checkpoint of run, or (nil, nil).
func (s *Store) LoadCheckpoint(ctx context.Context, runID string) (*engine.Checkpoint, error) {
	cps, err := s.checkpoints(ctx, runID, `ORDER BY seq DESC LIMIT 1`)
	if err != nil || len(cps) == 0 {
		return nil, err
	}
	return &cps[0], nil
}

// ListCheckpoints returns the run's checkpoints, oldest first.
func (s *Store) ListCheckpoints(ctx context.Context, runID string) ([]engine.Checkpoint, error) {
	return s.checkpoints(ctx, runID, `ORDER BY seq`)
}

func (s *Store) checkpoints(ctx context.Context, runID, order string) ([]engine.Checkpoint, error) {
	tenant := run.TenantFrom(ctx)
	var cps []engine.Checkpoint
	err := s.retry(ctx, func(ctx context.Context) error {
		cps = nil
		rows, err := s.pool.Query(ctx, `SELECT seq, checkpoint FROM checkpoints WHERE tenant = $1 AND run_id = $2 `+order, tenant, runID)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var (
				seq int64
				doc []byte
				cp  engine.Checkpoint
			)
			if err := rows.Scan(&seq, &doc); err != nil {
				return err
			}
			if err := json.Unmarshal(doc, &cp); err != nil {
				return errdefs.Internalf("pgstore: run %q: corrupt checkpoint %d: %w", runID, seq, err)
			}
			cps = append(cps, cp)
		}
		return rows.Err()
	})
	return cps, s.classify(fmt.Sprintf("load checkpoints of run %q", runID), err)
}

// DeleteCheckpoints deletes every checkpoint of run and resets the fence,
// so that the next save of any attempt starts a new history.
func (s *Store) DeleteCheckpoints(ctx context.Context, runID string) error {
	tenant := run.TenantFrom(ctx)
	err := s.retry(ctx, func(ctx context.Context) error {
		_, err := s.pool.Exec(ctx, `
WITH head AS (
	UPDATE runs SET checkpoint_attempt = 0 WHERE tenant = $1 AND run_id = $2
)
DELETE FROM checkpoints WHERE tenant = $1 AND run_id = $2`, tenant, runID)
		return err
	})
	return s.classify(fmt.Sprintf("delete checkpoints of run %q", runID), err)
}
