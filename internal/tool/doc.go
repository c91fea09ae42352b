// Package tool owns what a model can call: the Tool interface (name,
// description, JSON Schema of the arguments, flags), the Registry that
// validates arguments and runs calls, and the small, safe built-in tools
// (clock, calculator, and http_get when configured).
//
// The loop and flow engines ask a Registry for Specs to list in a model
// request, then hand it the model's calls: Execute runs one, ExecuteAll runs
// a turn's calls (parallel-safe ones concurrently, the rest alone and in
// order). Peer agents and handoffs join as ordinary Tools built elsewhere.
//
// Tools declare their effects (effects.go: none, idempotent, keyed,
// unsafe), which engines record in the run's effect ledger; a Reconciler
// can tell whether a call in doubt took effect. HTTP tools (httptool.go)
// send the call's effect key as Idempotency-Key.
//
// Invariants:
//   - Arguments are validated against the tool's schema before the tool runs.
//     Each schema is compiled once, at Register, offline: references outside
//     the schema itself are refused, never fetched.
//   - Execute and ExecuteAll never panic and never return a Go error for a
//     bad call: unknown tools, malformed or invalid arguments, tool errors,
//     tool panics and cancelled contexts all become error Results whose
//     content names the tool and what to fix, written for the model, with
//     the classified cause (errdefs) in Result.Err for the host.
//   - ExecuteAll returns results in call order and returns only after every
//     goroutine it started has finished.
//   - Registration errors (bad name, schema or flags, duplicates) are
//     errdefs Validation errors naming the tool.
//
// Imports: errdefs, model, netguard. It must not import engines, agents, the
// runtime, stores or HTTP layers.
package tool
