// Package pushtest is a webhook receiver for tests of A2A push
// notifications: a real HTTP server on loopback that records every
// notification as it arrived (headers, body, the decoded StreamResponse
// and its resumable-stream seq) and fails the requests a test tells it
// to — with a status, or by holding the request past the sender's
// timeout.
//
// It is a fake at a true external boundary (the client's webhook) and
// speaks the wire format only; nothing of agentd imports it outside tests
// and benchmarks.
//
// Imports: a2a (for the metadata key of the seq).
package pushtest
