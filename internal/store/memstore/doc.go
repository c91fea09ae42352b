// Package memstore is agentd's embedded store: a store.Store that keeps
// everything in memory, for development, tests and single-replica
// deployments that can afford to lose their state on restart.
//
// It has the semantics of pgstore, proven by the storetest contract suite:
// one Apply is atomic (it is checked completely before anything is
// written), times keep microsecond precision, and JSON-shaped values
// (metadata, board variables) are normalised through encoding/json on the
// way in, so that numbers come back as float64 as they do from JSONB and a
// value that PostgreSQL could not store is rejected here too.
//
// Invariants:
//   - Nothing stored is reachable from outside: every value is copied or
//     encoded on the way in, and what is returned is decoded or copied into
//     fresh memory (but for strings, which cannot change). Returned strings
//     are substrings of their record: a caller that keeps one keeps the
//     record's memory alive, so keep what you need, not whole values, for
//     long (the runtime keeps a running task's, which is small).
//   - One RWMutex guards all state; no method calls out while holding it, so
//     there is no lock order to respect. The store starts no goroutines.
//   - A run's events live in one byte arena and a pointer-free index by
//     seq-PrunedThrough-1, so a read after a seq costs O(k) for k events;
//     a tenant's tasks are indexed by creation (globally and per context)
//     so listing a context does not scan other contexts or tenants.
//   - The retained heap is cheap for the garbage collector to mark, whose
//     work grows with the pointers it must follow: tasks, transcript
//     messages and checkpoints are kept as records — each value encoded
//     into one string (record.go) — and everything of a run hangs off one
//     map entry, everything of a context off another.
//   - Memory is bounded by the runs in flight plus a retention of finished
//     runs (DefaultRetention, WithRetention): past it the oldest finished
//     runs are forgotten with their events, checkpoints, idempotency
//     records, push configs and lease, and a context's transcript once its
//     last task is forgotten. Unfinished runs are never forgotten. Without
//     the bound the heap — and the garbage collector's work — would grow
//     with every run the process ever served.
//
// Imports: engine, errdefs, model, run, store. It must not import runtime,
// api, a2a or pgstore.
package memstore
