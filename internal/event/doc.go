// Package event carries what an engine publishes to its host: the Envelope
// (one event: subject, ids, time, JSON payload) and the Subject naming
// scheme (dot-separated tokens, e.g. "engine.run.r1.stream.echo.delta").
//
// There is no bus. The runtime turns each envelope an engine publishes into
// an event of the run's log (internal/runlog), and the log alone fans events
// out to readers, because an event may be seen only once it is durable
// (DESIGN.md §4, invariant 3): a pub/sub bus beside the log would either
// deliver before durability or duplicate the log's own wake-ups. A bus and
// a StreamRouter were built from the seed and removed unused; see
// docs/architecture.md.
//
// event imports only internal/errdefs and the standard library; everything
// else in agentd may import it.
package event
