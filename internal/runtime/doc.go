// Package runtime starts and owns runs. It is the one package that knows
// the agents, the engines, the store and the event logs together; the HTTP
// faces (api, a2a) call it and hold no business state.
//
// A message becomes a task (a run) in one store transaction together with
// its first events and its idempotency record; the run then executes in a
// goroutine owned by the runtime, never by the request (invariant 5). Each
// attempt of a run — the first, a resume after input, a recovery after a
// crash — is framed by the runtime's own run.start and run.end events
// whatever the engine does (invariant 2), and its outcome (state, transcript
// messages, run.end) is written in one transaction before anyone sees it
// (invariant 6).
//
// Events: a run's log on this replica (runLog) assigns dense seqs, and an
// event becomes visible to readers only once the store holds it; the
// flusher writes live events in group commits (the first after a quiet spell
// at once, then at most one write per window). A Stream reads a run's events
// after a seq from memory or the store and then waits for more — every event
// exactly once, in order (invariant 3) — and a reader that falls behind never
// slows the run or anyone else (invariant 4). Readers of runs executing on
// other replicas read the store, woken by Wake (PostgreSQL NOTIFY) or a poll.
//
// Runs: AskUser parks a run in input-required (checkpoint, goroutine
// released) and the next message to the task resumes it from its latest
// checkpoint; cancel interrupts cooperatively, then cancels the run's
// context after a grace period; each context runs one task at a time under
// the agent's multitask policy (reject, enqueue, interrupt); a client's
// message id makes a submission idempotent; usage is checked against token
// budgets. Executing attempts hold a lease in the store and renew it; a
// replica that dies stops renewing, and another replica's sweep claims the
// expired lease and resumes the run from its last checkpoint. Shutdown drains.
//
// Lock order: Runtime.mu, then runLog.flushMu, then runLog.mu, then
// execution.mu; no lock is held across a store call except flushMu, which
// serialises a run's writes.
//
// runtime imports agent, engine, store, event, model and errdefs; never api,
// a2a, config, an engine implementation or a store implementation.
package runtime
