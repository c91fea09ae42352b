// Package llm is the seam between agentd and language models: a Provider
// streams one chat turn as Chunks (text deltas, reasoning deltas, tool-call
// fragments, usage, finish reason), and Accumulator/Collect reassemble those
// chunks into one assistant model.Message.
//
// Implementations live in sub-packages named after what they adapt:
// llm/openai (any OpenAI-compatible Chat Completions endpoint) and
// llm/scripted (deterministic replies from configuration, for demos, tests
// and benchmarks).
//
// Invariants:
//   - a Stream is consumed by one goroutine; Next returns io.EOF exactly at
//     the end and Close is always safe to call, also twice;
//   - tool-call fragments are joined by index, so every provider must report
//     a stable Index per call; ids may be missing (Collect synthesises
//     "call_<index>");
//   - reasoning text never ends up in the answer text.
//
// Imports: model. llm knows nothing of engines, tools, HTTP servers or
// storage.
package llm
