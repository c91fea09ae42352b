// Package pgstore is the PostgreSQL implementation of store.Store, on a
// pgx v5 connection pool. Open connects, applies the embedded migrations of
// agentd/migrations (goose, under a session advisory lock so that replicas
// starting together do not race) and returns a Store; it passes the same
// storetest contract suite as memstore.
//
// Imports: engine, errdefs, migrations, model, run, store. It must not
// import runtime, api, a2a or memstore.
//
// # Schema, from the access paths
//
// Every table but leases is keyed by tenant first, so a record of another
// tenant is simply not found. See migrations/00001_init.sql.
//
//   - tasks (tenant, id): indexes (tenant, context_id, created_at DESC, id
//     DESC), (tenant, agent_id, created_at DESC, id DESC) and (tenant,
//     created_at DESC, id DESC) serve "a context's tasks newest first", "an
//     agent's tasks newest first" (A2A ListTasks) and the keyset cursor of
//     ListTasks. Filtered scalars are columns; structured parts (status
//     message, error, artifacts, usage and usage by model, metadata, pending
//     signals) are json documents.
//   - contexts (tenant, context_id, last_position) + messages (tenant,
//     context_id, position): a context's transcript in order is a primary-key
//     range. The head row is upserted by every append, which locks it and
//     hands each Apply a consecutive block of positions.
//   - idempotency_keys (tenant, context_id, message_id) → task_id.
//   - runs (tenant, run_id): the per-run head — last_seq and pruned_through
//     of the event log, checkpoint_attempt and checkpoint_seq of the
//     checkpoint history.
//   - event_frames (tenant, run_id, seq_to) with seq_from and events: a run's
//     events after a seq are a primary-key range.
//   - checkpoints (tenant, run_id, seq): the history per run, oldest first;
//     the newest is the last key of the range. The whole engine.Checkpoint
//     (OriginalStartedAt and SpecVersion included) is one json document.
//   - push_configs (tenant, task_id, id).
//   - leases (run_id), global: recovery scans every tenant's expired leases
//     through a partial index on expires_at of held leases.
//   - replicas (id), global: the URL each replica is reached at, for the
//     owner probe before a takeover (store.Replicas).
//
// # Events: one row per batch, never per event or token
//
// The runtime coalesces token deltas and group-commits, so one Apply
// carries a batch of consecutive events of a run. pgstore stores that batch
// as one frame row — seq_from, seq_to and a JSON array of {seq, type, time,
// data} — cut at 256 events. Compared with a multi-row INSERT of one row per
// event, a frame costs one heap tuple and one index entry per batch instead
// of per event, and a replay reads a tenth of the rows; the price is that a
// read or a prune may start inside a frame, which the reader handles by
// skipping the frame's events at or below max(after, pruned_through). The
// 256-event cap turns "frames overlapping (start, start+limit]" into one
// index range on seq_to (a frame that starts by start+limit ends before
// start+limit+256), so the first page of a 10k-event run reads a handful of
// rows.
//
// Documents are json, never jsonb. jsonb refuses text holding U+0000
// (SQLSTATE 22P05), which a message, its metadata or a checkpoint may
// legitimately carry (a tool that read a binary file, a model echoing one),
// and memstore — the contract's reference — keeps it; no query looks inside
// a document, so jsonb's operators would buy nothing.
//
// Frames are json, not jsonb: the runtime encodes each event once and that
// is what every subscriber gets, so a replayed event is byte-identical to
// the live one, and the hot write path skips jsonb's decomposition. The
// store never looks inside a frame in SQL.
//
// Seqs stay dense per run inside the transaction: the frame INSERT selects
// from a conditional UPDATE of the run's head (last_seq = first-1 → last),
// so frames are written only if the head moved, and the row lock makes a
// concurrent writer of the same seqs wait, re-check, and insert nothing (a
// Conflict).
//
// # One transaction per change, in one round trip
//
// Apply validates and encodes the Change once (plan.go), then sends every
// statement as one pipelined batch ending in a single Sync, which
// PostgreSQL runs as one implicit transaction: committed when the server
// reaches the Sync, rolled back as a whole if a statement fails. There is
// no BEGIN or COMMIT to wait for, so a change costs one round trip (two
// the first time a connection meets its statements, which pgx prepares).
// A guarded write cannot report its row count for the client to decide on
// a rollback, so each checks itself: agentd_check (migration 00011) raises
// SQLSTATE AG409 naming the guard and the task or run when the condition
// failed — idempotency key, task creation, task version, fence, lease,
// event seqs, checkpoint, in the contract's order — and explain (apply.go)
// reads, after the rollback, what it needs to say why. Rows are locked in
// a fixed order (key, task, fences, lease, contexts by id, runs by id) so
// that Applies do not deadlock each other.
//
// # Group commit
//
// Applies that arrive while the store's transactions are in flight (at
// most two at once) wait, and the next transaction writes them together:
// up to 64 changes, one after the other, in one batch — one round trip and
// one commit for all (group.go). Under load a blocking send costs about
// 0.4 commits instead of two. A change whose guard fails inside a group is
// written alone for its own answer and the rest again without it, so each
// change gets the outcome it would have had alone; an unknown outcome is
// every member's.
//
// An update or a create can answer the task as stored
// (store.Change.Stored: the statement's RETURNING, in the same round
// trip), so a run's final commit — or the create it carries, for a
// blocking send's run written once at its end — tells its blocking caller
// the outcome without a read.
//
// # Transient failures and unknown commits
//
// Lost connections, server restarts (57P01-3), serialization failures and
// deadlocks are retried with jittered exponential backoff (WithRetry) by
// every operation that may be repeated: reads, Ping, idempotent writes
// (PruneEvents, DeleteCheckpoints, PutPushConfig, the lease operations) and
// SaveCheckpoint (a repeat at worst records the same checkpoint twice).
// Apply retries what surely did not commit: a failure to get a connection,
// a failure while pgx prepared the statements, and an ERROR the server
// answered (the implicit transaction rolled back). Once the batch was
// sent, anything else — the connection broke, the server shut down
// (FATAL), the context ended while it was in flight — leaves the change
// durable or not: Apply returns an error wrapping ErrCommitUnknown,
// classified NotAvailable, and never retries it blindly. The caller
// resolves it by applying the same Change again: success means the first
// attempt did not commit; a Conflict — the event seqs no longer continue
// the log, the task version moved, or a *store.DuplicateError naming the
// same task for the idempotency key — means it did. A Change the caller
// cannot recognise that way (messages alone) should be re-read rather than
// replayed.
//
// # Notifications
//
// Other replicas learn that a run's log grew from pg_notify('agentd_events',
// '<run id>:<last seq>'), sent after the Apply committed by the store's
// notifier (notify.go), not inside the Apply: PostgreSQL serialises the
// commits of notifying transactions across their WAL flush, which capped
// blocking sends at one commit per flush. The notifier sends the wake-ups
// of every Apply that committed meanwhile in one transaction with
// synchronous_commit off, at most one per 2 ms, the first after a quiet
// spell at once; a run gets one wake-up per such transaction, with its
// newest seq. The Apply that creates a run announces nothing of it: no
// reader can wait for a run before it exists, so a run written once (a
// blocking send's) costs one transaction in all. A wake-up lost to a
// crash between the commit and the notify is what readers of other
// replicas poll for (runlog.PollInterval).
// Listen holds a dedicated connection with LISTEN and calls back per
// notification; it reconnects with backoff and signals every
// (re)subscription with an empty run id, because notifications sent while
// it was disconnected are lost.
//
// # Memory vectors and the vector extension
//
// A memory item's embedding is stored as bytes (float32, little-endian),
// which every PostgreSQL keeps. Where the database has the vector
// extension (pgvector), Open adds a column derived from those bytes and
// vector searches are ranked by it in SQL; elsewhere, or with
// WithoutVectorExtension, in the server (memoryvector.go). Both paths give
// the same answers; the extension never fails Open (memoryextension.go).
//
// # Times
//
// PostgreSQL keeps microseconds: task, push-config and lease times come
// back truncated to the microsecond. Times inside JSON (message CreatedAt,
// event times, checkpoint timestamps) keep nanoseconds. Lease expiries are
// stamped by the store's clock (WithClock), so replicas' clocks must agree
// to well within a lease TTL.
package pgstore
