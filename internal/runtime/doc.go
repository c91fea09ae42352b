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
// Events: each run's event log on this replica is a runlog.Log, which
// assigns seqs, makes events durable (with a state change in Commit, or in
// the flusher's group commits) and shows them to readers only once durable;
// OpenStream returns its reader (invariants 1, 3, 4, 6, 7: see runlog). The
// runtime decides what is logged and when: the run.start/run.end framing of
// every attempt, and which state change each event belongs to.
//
// Checkpoints: Host.Checkpoint makes the events published before it
// durable, then saves the checkpoint; Host.PublishCheckpointed
// (engine.CheckpointedPublisher) stages the checkpoint with its event in
// the log (runlog's AppendCheckpointed), so the two are saved in one
// transaction — an engine relaying a stream (remote) never finds after a
// crash an event its checkpoint does not cover.
//
// Runs: AskUser parks a run in input-required (checkpoint, goroutine
// released) and the next message to the task resumes it from its latest
// checkpoint; cancel interrupts cooperatively, then cancels the run's
// context after a grace period; each context runs one task at a time under
// the agent's multitask policy (reject, enqueue, interrupt); a client's
// message id makes a submission idempotent; usage is checked against token
// budgets. Executing attempts hold a lease in the store and renew it; a
// replica that dies stops renewing, and another replica's sweep claims the
// expired lease and resumes the run from its last checkpoint — unless the
// owner answers (OwnerProbe) that it still executes the run: then it keeps
// it through a store outage up to the outage bound. Shutdown drains.
//
// Files: submit.go (Send: a new task), resume.go (Send to a parked task:
// its next attempt), registry.go (the executions of this replica and the
// context queues), create.go (a new task's create: written at once, or
// handed to its run's log to ride with the run's first write when the
// caller awaits the run), message.go (checks of user messages and ids),
// worker.go (the goroutines runs execute on), execution.go (one attempt:
// its state and run), outcome.go (how an attempt ends: its outcome and its
// final commit), host.go (the engine's Host and its events), commit.go,
// lease.go (leases, renewal, recovery), outage.go (what an unreachable
// store may cost: the outage bound, back-pressure, the owner asked before
// a takeover), control.go (cancel, shutdown), parked.go, child.go,
// budget.go (usage and the agent's budgets), budget_share.go (a child
// run's share of its parent's budget: it fails alone, its parent decides),
// calltree.go (a child run's place in its call tree), wait.go, reads.go,
// contexts.go (the conversations list), threads.go (thread records and
// status, for the Agent Protocol), checkpoints.go (a run's checkpoint
// history, checkpoint ids), fork.go (a run that starts from an earlier
// checkpoint: time travel; keeping checkpoints on a volatile store),
// tokens.go (a token read from its delta event without decoding it),
// assistants.go and assistants_run.go (stored, versioned configurations of
// agents; a run names one and keeps the version it was sent with);
// workflow.go (a workflow's notes as workflow events, its partial outcome
// beside the completed state), child_feedback.go (what a child's parent
// side has for it, read once across a resume);
// schedules.go (cron schedules: create, read, search, delete) and
// schedules_fire.go (the scheduler loop: one replica fires each tick, the
// missed-tick policy).
//
// Lock order: Runtime.mu, then configuredAgents.mu (held across an agent's
// Configure, which builds an engine in memory and does no I/O), then the
// runlog locks (Logs.mu, Log.flushMu,
// Log.mu), then execution.leaseMu, then execution.mu, then host.mu. No lock
// is held across a store call except a Log's flushMu, which serialises a
// run's writes, and the leaseMus of a renewal round, held across its one
// RenewLeases call (bounded by the lease TTL) so that no renewal extends a
// lease given up meanwhile.
//
// Effects: the host is the engines' engine.EffectLedger (effects.go): a
// tool call's intent, result, doubt and resolution are effect.* events of
// the run's log, made durable by a flush (with a checkpoint, when the
// engine gives one) before CommitEffects returns; PriorEffects reads what
// earlier attempts logged, once per attempt.
//
// Imports: agent, calltree, engine, errdefs, model, run, runlog, store
// (and github.com/robfig/cron/v3, the cron expressions' parser).
// Never api, a2a, config, an engine implementation or a store
// implementation.
package runtime
