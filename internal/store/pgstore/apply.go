package pgstore

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"agentd/internal/errdefs"
	"agentd/internal/store"
)

// notifyChannel is the LISTEN/NOTIFY channel that wakes other replicas when
// a run's log grows; the payload is "<run id>:<last seq>".
const notifyChannel = "agentd_events"

// Apply writes c in one transaction. The statements go to the server as one
// pipelined batch (one round trip besides BEGIN and COMMIT); each guarded
// write reports through its row count whether its condition held, and the
// first that did not decides the error after the batch, in the contract's
// order: idempotency key, task creation, task version, fences, lease,
// event seqs, checkpoints.
//
// A transient failure before COMMIT is retried: the transaction was rolled
// back. A COMMIT that got no answer is not: it fails with ErrCommitUnknown.
func (s *Store) Apply(ctx context.Context, c store.Change) error {
	tenant := store.TenantFrom(ctx)
	p, err := s.plan(tenant, c)
	if err != nil {
		// The key is checked before anything else, so a retried
		// submission learns its task even if its change is now invalid.
		if dup := s.recordedKey(ctx, tenant, c.Idempotency); dup != nil {
			return dup
		}
		return err
	}
	if p.empty() {
		return nil
	}
	err = s.retry(ctx, func(ctx context.Context) error { return s.applyOnce(ctx, p) })
	return s.classify("apply", err)
}

// recordedKey returns a *DuplicateError if key is already recorded in
// tenant, nil otherwise (lookup failures included: the caller has a better
// error to report).
func (s *Store) recordedKey(ctx context.Context, tenant string, key *store.IdempotencyKey) error {
	if key == nil || key.ContextID == "" || key.MessageID == "" {
		return nil
	}
	owner, err := s.keyOwner(ctx, s.pool, tenant, *key)
	if err != nil || owner == "" {
		return nil
	}
	return &store.DuplicateError{Key: *key, TaskID: owner}
}

// outcome collects what the guarded writes of one batch reported.
type outcome struct {
	keyRecorded bool
	taskCreated bool
	taskUpdated bool
	runAppended []bool
	// lease is the lease the change claimed (RunID empty: refused).
	lease store.Lease
	// fenced[i] says fence i is still held.
	fenced []bool
	// saved[i] says checkpoint i was fresh and is saved.
	saved []bool
}

func (s *Store) applyOnce(ctx context.Context, p *plan) (err error) {
	tx, err := s.pool.Begin(ctx)
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			// The transaction is abandoned; a failed rollback only means
			// the connection is gone, and the server rolls back then.
			rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
			defer cancel()
			_ = tx.Rollback(rctx)
		}
	}()
	var out outcome
	if err := tx.SendBatch(ctx, s.batch(p, &out)).Close(); err != nil {
		return err
	}
	if err := s.checkOutcome(ctx, tx, p, &out); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err // not committed: an unknown outcome needs no guessing
	}
	if err := tx.Commit(ctx); err != nil {
		return commitError(err)
	}
	if p.lease != nil {
		p.lease.Granted = out.lease
	}
	return nil
}

// batch queues the statements of p; their callbacks fill out.
func (s *Store) batch(p *plan, out *outcome) *pgx.Batch {
	b := &pgx.Batch{}
	if k := p.key; k != nil {
		b.Queue(`INSERT INTO idempotency_keys (tenant, context_id, message_id, task_id)
			VALUES ($1, $2, $3, $4) ON CONFLICT DO NOTHING`,
			p.tenant, k.ContextID, k.MessageID, p.taskID).
			Exec(func(ct pgconn.CommandTag) error { out.keyRecorded = ct.RowsAffected() == 1; return nil })
	}
	if t := p.create; t != nil {
		b.Queue(insertTaskSQL, t.args(p.tenant)...).
			Exec(func(ct pgconn.CommandTag) error { out.taskCreated = ct.RowsAffected() == 1; return nil })
	}
	if t := p.update; t != nil {
		b.Queue(updateTaskSQL, t.updateArgs(p.tenant)...).
			Exec(func(ct pgconn.CommandTag) error { out.taskUpdated = ct.RowsAffected() == 1; return nil })
	}
	// Fences first: FOR SHARE holds each lease row until the commit, so a
	// takeover waits for this change rather than slipping in under it.
	out.fenced = make([]bool, len(p.fences))
	for i, f := range p.fences {
		b.Queue(`SELECT 1 FROM leases WHERE run_id = $1 AND owner = $2 AND generation = $3 FOR SHARE`, f.RunID, f.Owner, f.Generation).
			QueryRow(func(row pgx.Row) error {
				var one int
				err := row.Scan(&one)
				out.fenced[i] = err == nil
				if errNoRows(err) {
					return nil
				}
				return err
			})
	}
	if l := p.lease; l != nil {
		b.Queue(claimLeaseSQL, p.taskID, l.Owner, p.leaseExpires, s.now(), p.tenant, l.TTL.Microseconds()).
			QueryRow(func(row pgx.Row) error {
				out.lease = store.Lease{RunID: p.taskID, Owner: l.Owner, ExpiresAt: p.leaseExpires}
				err := row.Scan(&out.lease.Generation, &out.lease.Tenant)
				if errNoRows(err) {
					out.lease = store.Lease{}
					return nil
				}
				return err
			})
	}
	for _, a := range p.contexts {
		b.Queue(appendMessagesSQL, p.tenant, a.contextID, len(a.bodies), a.taskIDs, a.bodies)
	}
	out.runAppended = make([]bool, len(p.runs))
	notify := make([]string, 0, len(p.runs))
	for i, r := range p.runs {
		sql := appendFramesSQL
		if r.from == 1 {
			sql = appendFirstFramesSQL
		}
		b.Queue(sql, p.tenant, r.runID, r.from, r.to, r.frameFrom, r.frameTo, r.frames).
			Exec(func(ct pgconn.CommandTag) error { out.runAppended[i] = ct.RowsAffected() > 0; return nil })
		notify = append(notify, fmt.Sprintf("%s:%d", r.runID, r.to))
	}
	out.saved = make([]bool, len(p.checkpoints))
	for i, cp := range p.checkpoints {
		b.Queue(saveCheckpointSQL, p.tenant, cp.runID, cp.attempt, cp.doc).
			Exec(func(ct pgconn.CommandTag) error { out.saved[i] = ct.RowsAffected() == 1; return nil })
	}
	if l := p.release; l != nil {
		b.Queue(releaseLeaseSQL, l.RunID, l.Owner, l.Generation, s.now())
	}
	if len(notify) > 0 {
		// One notification per run per Apply, delivered on commit only;
		// listeners read the log, so the payload is a wake-up, not data.
		b.Queue(`SELECT pg_notify('`+notifyChannel+`', n) FROM unnest($1::text[]) AS n`, notify)
	}
	return b
}

// The head row of a context is locked by the upsert, so concurrent appends
// to one context serialise and each gets a consecutive block of positions.
const appendMessagesSQL = `
WITH head AS (
	INSERT INTO contexts (tenant, context_id, last_position) VALUES ($1, $2, $3)
	ON CONFLICT (tenant, context_id)
	DO UPDATE SET last_position = contexts.last_position + EXCLUDED.last_position
	RETURNING last_position
)
INSERT INTO messages (tenant, context_id, position, task_id, message)
SELECT $1, $2, head.last_position - $3 + m.ord, m.task_id, m.body::json
FROM head, unnest($4::text[], $5::text[]) WITH ORDINALITY AS m(task_id, body, ord)`

// The frames are inserted only if the run's head moved from from-1 to to:
// the conditional UPDATE locks the head row, so of two writers appending the
// same seqs the second re-reads the head after the first commits, finds it
// moved and inserts nothing (a Conflict).
const appendFramesSQL = `
WITH head AS (
	UPDATE runs SET last_seq = $4
	WHERE tenant = $1 AND run_id = $2 AND last_seq = $3::bigint - 1
	RETURNING 1
)
INSERT INTO event_frames (tenant, run_id, seq_from, seq_to, events)
SELECT $1, $2, f.seq_from, f.seq_to, f.events::json
FROM head, unnest($5::bigint[], $6::bigint[], $7::text[]) AS f(seq_from, seq_to, events)`

// appendFirstFramesSQL starts a log: the head may not exist yet, or exist
// empty because a checkpoint created it.
const appendFirstFramesSQL = `
WITH head AS (
	INSERT INTO runs (tenant, run_id, last_seq) VALUES ($1, $2, $4)
	ON CONFLICT (tenant, run_id) DO UPDATE SET last_seq = EXCLUDED.last_seq
	WHERE runs.last_seq = $3::bigint - 1
	RETURNING 1
)
INSERT INTO event_frames (tenant, run_id, seq_from, seq_to, events)
SELECT $1, $2, f.seq_from, f.seq_to, f.events::json
FROM head, unnest($5::bigint[], $6::bigint[], $7::text[]) AS f(seq_from, seq_to, events)`

// checkOutcome turns the first unmet condition of the batch into the
// contract's error, reading what it needs to explain it inside tx.
func (s *Store) checkOutcome(ctx context.Context, tx pgx.Tx, p *plan, out *outcome) error {
	if p.key != nil && !out.keyRecorded {
		owner, err := s.keyOwner(ctx, tx, p.tenant, *p.key)
		if err != nil {
			return err
		}
		return &store.DuplicateError{Key: *p.key, TaskID: owner}
	}
	if p.create != nil && !out.taskCreated {
		return errdefs.Conflictf("pgstore: task %q already exists", p.create.ID)
	}
	if p.update != nil && !out.taskUpdated {
		var version int64
		err := tx.QueryRow(ctx, `SELECT version FROM tasks WHERE tenant = $1 AND id = $2`,
			p.tenant, p.update.ID).Scan(&version)
		if errNoRows(err) {
			return errdefs.NotFoundf("pgstore: task %q not found", p.update.ID)
		}
		if err != nil {
			return err
		}
		return errdefs.Conflictf("pgstore: task %q is at version %d, the update was for version %d",
			p.update.ID, version, p.update.Version)
	}
	for i, f := range p.fences {
		if !out.fenced[i] {
			return errdefs.Conflictf("pgstore: the lease on run %q is no longer held by %q (generation %d)", f.RunID, f.Owner, f.Generation)
		}
	}
	if p.lease != nil && out.lease.RunID == "" {
		return errdefs.Conflictf("pgstore: lease on run %q is held by another owner than %q", p.taskID, p.lease.Owner)
	}
	for i, r := range p.runs {
		if out.runAppended[i] {
			continue
		}
		var last int64
		err := tx.QueryRow(ctx, `SELECT last_seq FROM runs WHERE tenant = $1 AND run_id = $2`,
			p.tenant, r.runID).Scan(&last)
		if err != nil && !errNoRows(err) {
			return err
		}
		return errdefs.Conflictf("pgstore: run %q: events %d..%d do not continue the log at seq %d",
			r.runID, r.from, r.to, last)
	}
	for i, cp := range p.checkpoints {
		if !out.saved[i] {
			return cp.stale()
		}
	}
	return nil
}

// querier is what keyOwner needs of a pool or a transaction.
type querier interface {
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// keyOwner returns the task that recorded key, "" if none did.
func (s *Store) keyOwner(ctx context.Context, q querier, tenant string, key store.IdempotencyKey) (string, error) {
	var owner string
	err := q.QueryRow(ctx, `SELECT task_id FROM idempotency_keys
		WHERE tenant = $1 AND context_id = $2 AND message_id = $3`,
		tenant, key.ContextID, key.MessageID).Scan(&owner)
	if errNoRows(err) {
		return "", nil
	}
	return owner, err
}

// commitError explains a failed COMMIT. Only an ERROR the server answered
// to it proves the transaction rolled back (a serialization failure at
// commit); that error is returned for retry. Anything else — the connection
// broke, the server shut down (FATAL), the context ended while COMMIT was in
// flight — leaves the outcome unknown, and retrying could apply the change
// twice. pgconn.SafeToRetry does not help here: a connection that died
// while COMMIT was in flight can report itself "closed" as if nothing had
// been sent.
func commitError(err error) error {
	var pe *pgconn.PgError
	if errors.As(err, &pe) && pe.Severity == "ERROR" {
		return err
	}
	return errdefs.NotAvailable(fmt.Errorf("%w: %w", ErrCommitUnknown, err))
}
