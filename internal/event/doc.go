// Package event carries what an engine publishes to its host: the Envelope
// (one event: subject, ids, time, JSON payload) and the Subject naming
// scheme (dot-separated tokens, e.g. "engine.run.r1.stream.echo.delta").
//
// There is no bus. The runtime turns each envelope an engine publishes into
// an event of the run's log (internal/runlog), reading what it reports from
// its subject once, and the log alone fans events out to readers, because
// an event may be seen only once it is durable (docs/architecture.md,
// invariant 3): a pub/sub bus beside the log would either deliver before
// durability or duplicate the log's own wake-ups.
//
// event imports only internal/errdefs and the standard library; everything
// else in agentd may import it.
package event
