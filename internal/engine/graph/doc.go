// Package graph is the DAG workflow engine: it runs workflow documents in
// zenflow's published spec v1 format (zendev-sh/zenflow, spec/v1) as
// durable, resumable runs. A file zenflow accepts loads here unchanged; a
// file it rejects is rejected for the same reason.
//
// Loading: Parse checks one document — the structural layer against the
// spec's JSON Schema (SchemaJSON, embedded) and every validator rule of
// spec §11 — and compiles its CEL expressions; Load and ParseIn also
// resolve @ file references, contextFiles and included sub-workflows
// relative to the document's directory. Every problem is reported, not
// the first one, as Problems: one Problem per finding, with the path in
// the document (`steps[3].dependsOn[0]: unknown step "reserch" (did you
// mean "research"?)`) and a code from the spec's conformance test cases.
//
// Running: Execute publishes the plan (engine.run.<run>.plan: the DAG),
// then runs ready steps in parallel. Each agent step is a child run: when
// the host is an engine.ChildRunner (agentd's runtime), a run of its own
// there — its own task, transcript, event log and checkpoints, keyed by
// the step's namespaced id and attempt, so that a workflow resumed after a
// crash resumes an interrupted step from the step's own checkpoint;
// otherwise the step's engine runs here and its checkpoints are dropped.
// Either way its events are also published in the workflow's run, nested
// under the step's actor ("<agent>.node.<step>/<child actor>").
//
// Outcomes: a workflow whose steps all completed (or were skipped by their
// condition) completes; one where some completed while others failed, were
// cancelled or were skipped because a dependency failed — possible under
// onStepFailure: skip-dependents — completes partially: Execute returns
// nil after publishing an engine.Outcome (StatusPartial, the steps that
// did not complete); otherwise a failure is Execute's error.
//
// Prompts: each dependency's content and result are cut to
// MaxDependencyBytes and the whole prompt to MaxPromptBytes, as zenflow's
// executor does; the history of a loop with outputMode: cumulative
// escapes both. options.isolation is honoured for "none" only: New (and
// Supported) refuse another value rather than run the steps unisolated.
//
// Beyond the spec, zenflow's library features (its seed's types), each
// enabled by the Config and persisted in the checkpoint payload: shared
// memory (memory.go: the shared_memory_read/_write tools, entries
// namespaced by writer), mailboxes (mailbox.go: send_message, bounded
// per-step mailboxes, drop reasons, messages read once across a resume; a
// message to a completed step resumes it, resume.go) and a coordinator
// (coordinator.go: an agent in turns beside the steps, whose finalize
// summary is the answer). The workflow tools those features give agents
// are defined here (tools.go, msgtools.go) and reach the run through
// their call's context. Every message, drop, narration, resume and memory
// write is an engine.WorkflowNote named after zenflow's progress event.
//
// Goroutines and locks, added: the coordinator's inbox turns run on a
// goroutine runSteps starts and waits for; a resumed step runs on its
// sender's tool call. A childHost's mu is taken before execution.mu, never
// after; resumeLocks serialise the resumes of one step and are taken
// before either.
//
// Imports: engine, errdefs, model, strictjson, tool (to define the
// workflow tools, Tool). graph must not import runtime, store, api, a2a,
// llm or any other engine: a step's agent is reached through the Agents
// interface the host wires in.
package graph
