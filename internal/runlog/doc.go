// Package runlog is the event log of a run on one replica: it assigns seqs,
// frames events, makes them durable in the store, and fans them out to
// readers. It is the one fan-out of agentd: REST SSE, A2A streams and push
// delivery all read a run's events through a Stream.
//
// The API: Logs (one per replica) opens a run's Log — New and Register for a
// run being created, Activate for an attempt about to execute here, Acquire
// for a reader, Release to let go. Writers Append live events (deltas,
// steps, artifacts) and Commit state changes (a store.Change with its
// run.start, status, input or run.end entries); Flush makes everything
// appended durable now. Readers Open a Stream after a seq and call Next;
// Settle stores what a volatile log showed, for readers of the store.
//
// The invariants it keeps (docs/architecture.md, "Invariants"):
//  1. Seqs are dense and increasing from 1: they are assigned under the
//     log's lock, continuing the store's end when an attempt activates a
//     log that another replica wrote to.
//  2. (run.start and run.end framing every attempt is the runtime's rule;
//     Commit writes them with the state change they belong to.)
//  3. A reader after seq n gets every later event exactly once, in order:
//     from memory while the log holds them, from the store before the
//     log's base or when the run executes on another replica, with a gap
//     event first when retention pruned what it asked for. An event is
//     visible only once durable — a volatile log (memstore, one process)
//     is durable as soon as appended — so no reader, here or elsewhere,
//     before or after a crash, can have seen an event the store lacks.
//  4. Readers never block writers: they copy slices under the log's lock
//     and wait on a channel closed when more becomes visible; one that
//     falls behind reads from further back.
//  5. (Runs not depending on a request is the runtime's rule.)
//  6. A Commit's state change, its entries and every live event before
//     them are one store transaction, shown only once it succeeded; a
//     failed commit leaves nothing visible.
//  7. Deltas are coalesced: the flusher writes the pending events of every
//     dirty run in one Apply, at once after a quiet spell and then at most
//     once per Window, so a burst of tokens is one write per window; an
//     attempt's first token is not delayed: a writer of its own writes it
//     at once, beside the windowed batch in flight.
//
// A new run's create may wait for the run's first write (Log.Defer,
// create.go) when nobody can learn of the run before it answers — a
// blocking send in a context the server just made: the write carries the
// task, its messages, key and lease claim with the events, in one
// transaction, and a run that ends within the window is one write. The
// flusher writes a deferred create one window after it was made at the
// latest. One type holds it until then (Create): the log folds it into
// the run's writes, keeps its entries when a write fails and fences the
// run's later writes with the lease it claimed; the runtime only waits
// for it (Wait) and takes that lease (TakeLease).
//
// An engine's checkpoint may ride with a live event (AppendCheckpointed,
// checkpoint.go): the write that makes the event durable — the flusher's
// batch, a Flush or a Commit — saves the checkpoint in the same store
// transaction (store.Change.Checkpoints), so the two never disagree after
// a crash; a newer staged checkpoint replaces one not yet written.
//
// Every write is fenced by the lease of the attempt that makes it
// (Log.SetFence, store.Change.Fences): a replica that lost a run cannot add
// to its log. When the store refuses a write for that reason the log drops
// what nobody saw and Options.OnLost stops the run.
//
// While the store is unreachable, events wait in memory and the flusher
// retries them; Backlog says how many wait, and WaitBacklog lets the run's
// executor hold its engine back beyond a cap (backlog.go).
//
// Goroutines: Logs.Run is the flusher's, the only one that flushes in
// batches; it starts the first-delta writer's and waits for it to end.
// Commit and Flush run on their caller's goroutine; a Stream belongs to
// one reader goroutine.
//
// Lock order: Logs.mu, then Log.flushMu, then Log.mu. flusher.mu guards
// the set of dirty logs only and is a leaf: it may be taken with flushMu
// held (never with Log.mu), and nothing is acquired while it is held. No lock is held across a
// store call except flushMu, which serialises a run's writes (the
// flusher's and Commit's). Callers may hold their own locks before Logs.mu
// (the runtime's mu) but never call into a Log while holding one that a
// Log's caller could need.
//
// Event frames, token bodies and the bodies every run writes (run.start,
// status, run.end, step events: bodies.go; the state entries keep their
// members as values until the log frames them) are written by hand (frame.go,
// with jsonstring.go's appendString): the one place of hand-written JSON in
// agentd, unexported and fuzzed against encoding/json (here, and by the
// runtime's FuzzStateBodies against its event structs); every other body
// comes encoded by encoding/json.
//
// Imports: engine, errdefs, model, run, store.
package runlog
