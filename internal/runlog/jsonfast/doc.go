// Package jsonfast is the one place in agentd where JSON is written and
// read by hand, for the bulk of a run's events: token deltas. An engine
// streams one per piece of generated text, and the runtime turns each into
// an event of the run's log; with encoding/json on both sides a replica
// spends about twice the CPU per streamed event (docs/benchmarks.md, "Issue
// 20: the JSON fast paths"). So:
//
//   - AppendString writes a JSON string exactly as encoding/json does
//     (event frames in internal/runlog, token payloads in internal/engine);
//   - AppendObject writes a one-member-last object from a fixed prefix (the
//     token payload {"type":"token","content":…});
//   - StringAfter takes that last string member out of such an object
//     still encoded, so that the log splices it into the event instead of
//     decoding and encoding it again;
//   - TrailingStrings and Unquote read the last two string members of an
//     object (a delta event's actor and text) for the Agent Protocol face,
//     which translates every token into LangChain's message chunk.
//
// Everything else goes through encoding/json. The tests fuzz each function
// against encoding/json (FuzzAppendString, FuzzStringAfter).
//
// jsonfast imports only the standard library; engine, runlog and
// agentproto import it.
package jsonfast
