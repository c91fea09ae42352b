package pgstore

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"agentd/internal/errdefs"
	"agentd/internal/run"
	"agentd/internal/store"
)

// notifyChannel is the LISTEN/NOTIFY channel that wakes other replicas when
// a run's log grows; the payload is "<run id>:<last seq>".
const notifyChannel = "agentd_events"

// Apply writes c in one transaction, in one round trip, together with the
// changes of other Applies that arrived meanwhile (group commit, group.go).
// The statements go to the server as one pipelined batch that ends in a
// single Sync, which PostgreSQL runs as one implicit transaction —
// committed at the Sync, or rolled back as a whole when a statement fails.
// Each guarded write checks its own condition (agentd_check, migration
// 00011) and fails the transaction when it does not hold; the first to
// fail, in the contract's order — idempotency key, task creation, task
// version, fences, lease, event seqs, checkpoints — is explained after the
// rollback (explain).
//
// A failure the server answered with an ERROR rolled the transaction back,
// and a transient one is retried. A batch that got no complete answer (the
// connection broke, the server shut down) may have committed: it fails
// with ErrCommitUnknown. Once queued, a change is written whatever becomes
// of ctx: the transaction is others' too.
func (s *Store) Apply(ctx context.Context, c store.Change) error {
	tenant := run.TenantFrom(ctx)
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
	return s.group.apply(ctx, p)
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

// send writes the changes of group in one transaction, in one round trip:
// their statements, one after the other, in one pipelined batch. On
// success each member's lease claim and stored task are filled in.
func (s *Store) send(ctx context.Context, group []*member) error {
	conn, err := s.pool.Acquire(ctx)
	if err != nil {
		return err // nothing was sent
	}
	defer conn.Release()
	b := &pgx.Batch{}
	for _, m := range group {
		s.queue(b, m)
	}
	if err := conn.SendBatch(ctx, b).Close(); err != nil {
		return sentError(err)
	}
	for _, m := range group {
		if m.p.lease != nil {
			m.p.lease.Granted = m.granted
		}
		if m.p.stored != nil {
			*m.p.stored = m.stored
		}
		s.notify.add(m.p.runs, m.p.created())
	}
	return nil
}

// sentError classifies the failure of a batch that was sent. Only an ERROR
// the server answered proves the transaction rolled back (a guard's, from
// agentd_check, is explained by the caller); it is returned for retry or
// explanation. Anything else — the connection broke, the server shut down
// (FATAL), ctx ended while the batch was in flight — leaves the outcome
// unknown, and a retry could apply the change twice. (pgconn.SafeToRetry
// does not help: a connection that died in flight can report itself
// "closed" as if nothing had been sent.) A failure while pgx prepared the
// statements or encoded their arguments is before anything ran.
func sentError(err error) error {
	var pe *pgconn.PgError
	var pre pgx.ErrPreprocessingBatch
	if errors.As(err, &pre) || errors.As(err, &pe) && pe.Severity == "ERROR" {
		return err
	}
	return errdefs.NotAvailable(fmt.Errorf("%w: %w", ErrCommitUnknown, err))
}

// checkFailed is the SQLSTATE of agentd_check: a guarded write's condition
// did not hold.
const checkFailed = "AG409"

// checked makes a guarded write fail the transaction when it writes no row:
// write is an INSERT or UPDATE without RETURNING, ctes the WITH entries it
// reads ("" for none, else ending in a comma). The failure names the guard
// (what) and the id in parameter $idParam.
func checked(ctes, write, what string, idParam int) string {
	return fmt.Sprintf("WITH %s w AS (%s RETURNING 1) SELECT agentd_check(EXISTS (SELECT FROM w), '%s', $%d::text)",
		ctes, write, what, idParam)
}

var (
	keySQL = checked("", `INSERT INTO idempotency_keys (tenant, context_id, message_id, task_id)
		VALUES ($1, $2, $3, $4) ON CONFLICT DO NOTHING`, "key", 4)
	checkedInsertTaskSQL = checked("", insertTaskSQL, "create", 2)
	checkedFramesSQL     = checked(framesHead+",", framesInsert, "run", 2)
	checkedFirstFrames   = checked(firstFramesHead+",", framesInsert, "run", 2)
	checkedCheckpointSQL = checked(checkpointHead+",", checkpointInsert, "checkpoint", 2)
)

// Fences first: FOR SHARE holds each lease row until the commit, so a
// takeover waits for this change rather than slipping in under it.
const fenceSQL = `SELECT agentd_check(EXISTS (
	SELECT 1 FROM leases WHERE run_id = $1 AND owner = $2 AND generation = $3 FOR SHARE), 'fence', $1)`

// checkedUpdateTaskSQL is updateTaskSQL failing when the version moved,
// answering the task as stored (Change.Stored).
const checkedUpdateTaskSQL = `WITH w AS (` + updateTaskSQL + ` RETURNING ` + taskColumns + `)
SELECT w.* FROM (SELECT agentd_check(EXISTS (SELECT FROM w), 'update', $2::text)) AS c LEFT JOIN w ON true`

// storedInsertTaskSQL is checkedInsertTaskSQL answering the task as
// stored: a task created with its first update folded in (a run's create
// written with its final commit) answers like an update.
const storedInsertTaskSQL = `WITH w AS (` + insertTaskSQL + ` RETURNING ` + taskColumns + `)
SELECT w.* FROM (SELECT agentd_check(EXISTS (SELECT FROM w), 'create', $2::text)) AS c LEFT JOIN w ON true`

// claimSQL is claimLeaseSQL failing when the lease is held by another.
const claimSQL = `WITH w AS (` + claimLeaseSQL + `)
SELECT w.generation, w.tenant FROM (SELECT agentd_check(EXISTS (SELECT FROM w), 'lease', $1)) AS c LEFT JOIN w ON true`

// queue adds the statements of m's change to b; the lease claim's callback
// fills m.granted, the task update's m.stored (when the change asks).
func (s *Store) queue(b *pgx.Batch, m *member) {
	p := m.p
	if k := p.key; k != nil {
		b.Queue(keySQL, p.tenant, k.ContextID, k.MessageID, p.taskID)
	}
	if t := p.create; t != nil {
		if p.stored != nil && p.update == nil {
			b.Queue(storedInsertTaskSQL, t.args(p.tenant)...).QueryRow(m.scanStored)
		} else {
			b.Queue(checkedInsertTaskSQL, t.args(p.tenant)...)
		}
	}
	if t := p.update; t != nil {
		q := b.Queue(checkedUpdateTaskSQL, t.updateArgs(p.tenant)...)
		if p.stored != nil {
			q.QueryRow(m.scanStored)
		}
	}
	for _, f := range p.fences {
		b.Queue(fenceSQL, f.RunID, f.Owner, f.Generation)
	}
	if l := p.lease; l != nil {
		b.Queue(claimSQL, p.taskID, l.Owner, p.leaseExpires, s.now(), p.tenant, l.TTL.Microseconds()).
			QueryRow(func(row pgx.Row) error {
				m.granted = store.Lease{RunID: p.taskID, Owner: l.Owner, ExpiresAt: p.leaseExpires}
				return row.Scan(&m.granted.Generation, &m.granted.Tenant)
			})
	}
	for _, a := range p.contexts {
		b.Queue(appendMessagesSQL, p.tenant, a.contextID, len(a.bodies), a.taskIDs, a.bodies)
	}
	for _, r := range p.runs {
		sql := checkedFramesSQL
		if r.from == 1 {
			sql = checkedFirstFrames
		}
		b.Queue(sql, p.tenant, r.runID, r.from, r.to, r.frameFrom, r.frameTo, r.frames)
	}
	for _, cp := range p.checkpoints {
		b.Queue(checkedCheckpointSQL, p.tenant, cp.runID, cp.attempt, cp.doc)
	}
	if l := p.release; l != nil {
		b.Queue(releaseLeaseSQL, l.RunID, l.Owner, l.Generation, s.now())
	}
}

// scanStored reads the task a create or update answered (Change.Stored).
func (m *member) scanStored(row pgx.Row) (err error) {
	m.stored, err = scanTask(row)
	return err
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
const framesHead = `head AS (
	UPDATE runs SET last_seq = $4
	WHERE tenant = $1 AND run_id = $2 AND last_seq = $3::bigint - 1
	RETURNING 1
)`

// firstFramesHead starts a log: the head may not exist yet, or exist empty
// because a checkpoint created it.
const firstFramesHead = `head AS (
	INSERT INTO runs (tenant, run_id, last_seq) VALUES ($1, $2, $4)
	ON CONFLICT (tenant, run_id) DO UPDATE SET last_seq = EXCLUDED.last_seq
	WHERE runs.last_seq = $3::bigint - 1
	RETURNING 1
)`

const framesInsert = `
INSERT INTO event_frames (tenant, run_id, seq_from, seq_to, events)
SELECT $1, $2, f.seq_from, f.seq_to, f.events::json
FROM head, unnest($5::bigint[], $6::bigint[], $7::text[]) AS f(seq_from, seq_to, events)`

// explain turns the guard that failed (pe, from agentd_check) into the
// contract's error, reading what it needs to say why. The transaction has
// rolled back: these reads see the state that made the guard fail, or a
// later one.
func (s *Store) explain(ctx context.Context, p *plan, pe *pgconn.PgError) error {
	id := pe.Detail
	switch pe.Message {
	case "key":
		owner, err := s.keyOwner(ctx, s.pool, p.tenant, *p.key)
		if err != nil {
			return err
		}
		return &store.DuplicateError{Key: *p.key, TaskID: owner}
	case "create":
		return errdefs.Conflictf("pgstore: task %q already exists", id)
	case "update":
		var version int64
		err := s.pool.QueryRow(ctx, `SELECT version FROM tasks WHERE tenant = $1 AND id = $2`, p.tenant, id).Scan(&version)
		if errNoRows(err) {
			return errdefs.NotFoundf("pgstore: task %q not found", id)
		}
		if err != nil {
			return err
		}
		return errdefs.Conflictf("pgstore: task %q is at version %d, the update was for version %d", id, version, p.update.Version)
	case "fence":
		for _, f := range p.fences {
			if f.RunID == id {
				return errdefs.Conflictf("pgstore: the lease on run %q is no longer held by %q (generation %d)", f.RunID, f.Owner, f.Generation)
			}
		}
	case "lease":
		return errdefs.Conflictf("pgstore: lease on run %q is held by another owner than %q", id, p.lease.Owner)
	case "run":
		return s.explainSeqs(ctx, p, id)
	case "checkpoint":
		for _, cp := range p.checkpoints {
			if cp.runID == id {
				return cp.stale()
			}
		}
	}
	return errdefs.Internalf("pgstore: apply: unexpected check failure %q on %q", pe.Message, id)
}

// explainSeqs says why the events of run id did not continue its log.
func (s *Store) explainSeqs(ctx context.Context, p *plan, id string) error {
	for _, r := range p.runs {
		if r.runID != id {
			continue
		}
		var last int64
		err := s.pool.QueryRow(ctx, `SELECT last_seq FROM runs WHERE tenant = $1 AND run_id = $2`, p.tenant, id).Scan(&last)
		if err != nil && !errNoRows(err) {
			return err
		}
		return errdefs.Conflictf("pgstore: run %q: events %d..%d do not continue the log at seq %d", id, r.from, r.to, last)
	}
	return errdefs.Internalf("pgstore: apply: check failed on run %q, which the change does not append to", id)
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
