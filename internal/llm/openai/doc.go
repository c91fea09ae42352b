// Package openai is an llm.Provider for any OpenAI-compatible Chat
// Completions endpoint (OpenAI, Ollama, vLLM, llama.cpp, LM Studio, …),
// written on net/http alone.
//
// It POSTs {BaseURL}/chat/completions with stream=true and
// stream_options.include_usage, parses the Server-Sent Events answer and
// turns each event into an llm.Chunk. It absorbs the dialects real servers
// speak: tool calls split into fragments or sent whole, with or without ids
// and indexes, arguments as a string or as an object; reasoning in
// reasoning_content or reasoning; usage in a final choice-less chunk, in
// every chunk, or not at all; a plain JSON answer when a server ignores
// stream=true.
//
// Invariants:
//   - a request is retried (exponential backoff with jitter, honouring
//     Retry-After) only on 408/409/429/5xx and connection failures before
//     the response arrives — never once the stream has started;
//   - no bytes for Config.IdleTimeout (waiting for headers or mid-stream)
//     ends the attempt with an errdefs.Timeout error;
//   - every error is classified with errdefs and names the URL and, where
//     the server gave one, its error message; the API key never appears in
//     errors or logs;
//   - the stream's resources (response body, watchdog timer) are released
//     by Close, at the end of the stream, or when its context ends; the
//     package starts no goroutines of its own beyond the watchdog timer's
//     callback.
//
// Imports: errdefs, llm, model.
package openai
