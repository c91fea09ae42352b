// Package storetest is the contract suite every store.Store implementation
// runs: RunSuite(t, factory) checks, through the public interface only, the
// rules written in store.go's doc comments and the decisions below, which
// settle what those comments leave open. Every subtest gets a fresh store
// from the factory. Only lease expiry needs time to pass: the suite then
// polls for it with a deadline (and a 1 ms TTL), and needs no clock
// resolution beyond microseconds.
//
// Imports: engine, errdefs, model, run, store. It must not import an
// implementation (memstore, pgstore).
//
// # Decisions the contract leaves open
//
// Times. Stored times keep microsecond precision (PostgreSQL's); the suite
// compares times with time.Equal after truncating to the microsecond, so an
// implementation may return them in any location.
//
// JSON. Metadata maps, board variables, Data, Payload, tool-call arguments and
// push configs are compared semantically (decoded, key order ignored), so an
// implementation may store them as JSONB. A json.RawMessage that is not valid
// JSON is a Validation error, and so is a map holding a value that cannot be
// encoded as JSON. Numbers in maps may come back as float64.
//
// Tasks. CreateTask: ID, ContextID and AgentID are required, State must be
// valid and Version 0 (else Validation); the store sets Version 1 and Tenant
// from the context, keeps a non-zero CreatedAt and otherwise sets it to its
// clock, and sets UpdatedAt to its clock (equal to CreatedAt when that was
// defaulted). UpdateTask of an unknown task (or another tenant's) is
// NotFound; a Version other than the stored one is Conflict; on success it
// replaces the mutable fields, keeps the immutable ones (Tenant, ContextID,
// AgentID, CreatedAt) whatever the update says, and sets UpdatedAt to the
// store's clock.
//
// ListTasks orders by CreatedAt descending, ties broken by ID descending.
// Cursors are opaque and positional (they name the last task returned), so a
// listing continues past older tasks while newer ones are inserted; a cursor
// that cannot be decoded is Validation. Limit 0 means 50, more than 100 means
// 100, negative is Validation; an unknown state in States is Validation.
//
// Transcripts. A message's TaskID defaults to Change.TaskID. Its ContextID is
// required (Validation). Position is assigned by the store (the input is
// ignored); the messages of one Apply get consecutive positions even when
// other Applies append to the same context concurrently. A zero CreatedAt is
// set to the store's clock. MessageQuery.ContextID is required; negative
// After, Last or Limit is Validation; Limit 0 means 100, more than 1000
// means 1000. NextAfter is non-zero exactly when more matching messages
// follow. An unknown context is an empty page, not an error.
//
// Events. RunID and Type are required and Data must be valid JSON
// (Validation; with Change.EventsValid the store may skip the JSON scan,
// not the other checks); a zero Time is set to the store's clock. One Change may
// append to several runs. ReadEvents: negative after or limit is Validation;
// limit 0 means 100, more than 1000 means 1000; an unknown run is an empty
// page with LastSeq 0. PrunedThrough is reported on every read, and events
// are returned from max(after, PrunedThrough)+1. PruneEvents never moves
// PrunedThrough backwards nor beyond LastSeq (a larger through is clamped);
// pruning an unknown run is a no-op, a negative through is Validation.
//
// Idempotency. A key needs ContextID, MessageID and Change.TaskID
// (Validation). The idempotency check comes before every other check of the
// Change, so a retried submission always learns its original task.
//
// Checkpoints. ExecID and Board are required, Payload must be valid JSON
// when set (Validation); a zero Timestamp is set to the store's clock. A
// missing AttrAttempt counts as attempt 0; a non-decimal one is Validation.
// A checkpoint whose attempt equals the newest one's is accepted.
// ListCheckpoints of an unknown run is empty. After DeleteCheckpoints the
// stale-writer check starts afresh.
//
// Push configs. TaskID and ID are required and Config must be valid JSON
// (Validation); a zero CreatedAt is set to the store's clock.
// ListPushConfigs orders by ID. Get or Delete of an unknown config is
// NotFound. Whether the task must exist is left to the implementation: the
// suite always creates it first.
//
// Leases. runID and owner are required and ttl must be positive
// (Validation). A run's first lease has Generation 1. Generation grows by
// one whenever the lease goes to an owner after a release or to a different
// owner; re-acquiring or renewing one's own lease keeps it (even after
// expiry, as long as nobody took it over). RenewLease is Conflict only when
// the lease was released or taken over (owner or generation differ).
// ExpiredLeases lists held leases with ExpiresAt strictly before now, the
// earliest expiry first; released leases are never listed; limit 0 means
// 100, negative is Validation.
//
// Tenancy. Tasks, transcripts (a context id names a separate transcript in
// each tenant, positions included), event logs (keyed by tenant and run
// id), idempotency keys, checkpoints and push configs are scoped by the
// tenant of the context: another tenant sees NotFound, empty pages, or
// (nil, nil). Leases are global, keyed by run id alone, because recovery
// scans every tenant's expired leases; run ids are globally unique UUIDs.
//
// Lifecycle. Ping on a fresh store succeeds. Close returns nil and must be
// idempotent, because the factory's own cleanup may close the store again.
package storetest
