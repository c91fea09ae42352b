// Package scripted is a deterministic llm.Provider driven by rules from
// configuration. It answers demo agents, tests and benchmarks without a
// model: a rule matches the last user message (by prefix or regular
// expression) and, optionally, a trailing tool result, and streams a reply
// — templated text split into tokens, a generated count of tokens, and/or
// tool calls — at a configured pace, reporting deterministic usage.
//
// Usage is counted in words, deterministically: input tokens are the
// whitespace-separated words of every message (text, tool-call arguments
// plus one per call, tool results); output tokens are one per streamed text
// token plus one per tool call.
//
// A request made for context compaction (llm.MetadataPurpose ==
// llm.PurposeCompaction) is answered only by rules with purpose:
// compaction, or else by a built-in digest (the first words of each line
// of the conversation to summarise); a compaction summary in a request
// counts the assistant turns it stands for (llm.MetadataSummarisedTurns),
// so call ids stay unique.
//
// Invariants: the same conversation always yields the same chunks and
// usage; pacing never outlives the turn's context (a cancelled context ends
// the stream with ctx.Err() at the next token); rules are compiled once, at
// New, so configuration errors surface at startup, naming the rule field at
// fault (rules[2].match).
//
// Imports: errdefs, llm, model.
package scripted
