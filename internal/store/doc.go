// Package store declares agentd's persistence contracts: conversations and
// their transcripts, tasks (runs), run event logs, checkpoints, push
// notification configs, leases and idempotency records; and, as the
// optional Threads interface both implementations satisfy (their contract
// is storetest.RunThreadsSuite), the Agent Protocol's thread records; and,
// as the optional Assistants interface (storetest.RunAssistantsSuite),
// versioned assistants per tenant; and, as the optional Memory interface
// (storetest.RunMemorySuite), long-term memory items; and the
// optional Schedules (cron schedules and the claims by which one
// replica fires each tick; contract storetest.RunSchedulesSuite).
//
// Two implementations satisfy it: memstore (embedded, in memory, the default)
// and pgstore (PostgreSQL). Both run the same contract suite, storetest, so
// the runtime can rely on one set of semantics:
//
//   - Every logical change is one Apply call and is atomic: a task's creation
//     with its first message, first events and idempotency record; a state
//     change with its event; a terminal state with the final transcript
//     messages and the run.end event. Nothing is half-written on error.
//   - Tasks carry a Version; an update whose Version is not the stored one
//     fails with errdefs.Conflict and changes nothing.
//   - A run's events have a dense seq starting at 1; appending anything else
//     than last+1 fails with errdefs.Conflict.
//   - Every query is scoped by the tenant in the context (WithTenant); a
//     record of another tenant is invisible (NotFound), never an error that
//     reveals it exists. Leases are the exception: they are keyed by run id
//     (globally unique) because the recovery sweep looks across tenants;
//     each lease records its run's tenant.
//
// Imports: engine, errdefs, run. It must not import runtime, api, a2a or any
// engine implementation.
package store
