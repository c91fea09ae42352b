// Package memory is agentd's long-term memory: items (JSON objects) kept
// per tenant under a namespace — a path of labels such as ["memories",
// "ann"] — and a key, across conversations, as LangGraph's Store keeps
// them. The faces (REST, the Agent Protocol's /store routes) and the
// agents' memory tools reach the store only through its Service.
//
// The Service validates what it is given (errors name the request member:
// "namespace[1]: a namespace label must not be empty"), extracts the text
// an item is searched by (its whole value as JSON, or the fields a put or
// the configuration lists), and, when an OpenAI-compatible embeddings
// endpoint is configured (Embeddings: POST /embeddings), stores the text's
// unit vector with the item and ranks a query's matches by cosine
// similarity. Without one, a query ranks by text: PostgreSQL's full-text
// search on pgstore, the share of the query's words an item holds on
// memstore. Nothing is stored when a check or the endpoint fails.
//
// Tools implements tool.Memory for the memory_put, memory_get and
// memory_search tools of loop agents: each call resolves its agent's
// namespace template for the call's run (run.CurrentFrom, which the
// runtime sets for every attempt) — {user} is the run's metadata.user_id,
// {context} its conversation.
//
// TTL: an item may live a number of minutes after its last write or
// refreshed read; expired items are invisible (the store's contract), and
// later puts of their tenant sweep them (docs/memory.md).
//
// Imports: errdefs, run, store, tool.
package memory
