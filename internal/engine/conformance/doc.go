// Package conformance is the engine of the `conformance` demo agent: it
// implements the A2A test-kit behaviours, chosen by the text prefix of the
// newest user message (tck-complete-task, tck-input-required, …; see
// Behaviours), so any A2A conformance suite can be pointed at agentd.
//
// It is a real engine — it publishes run and step events, artifacts and
// stream deltas through the Host, checkpoints before it asks the user, and
// resumes from that checkpoint — and it passes enginetest.
//
// Imports: engine, errdefs, model.
package conformance
