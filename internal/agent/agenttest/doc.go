// Package agenttest holds the contract suites for the interfaces of
// package agent that callers implement: RunDeciderSuite for Decider and
// RunObserverSuite for Observer. Every implementation in agentd runs the
// suite for its interface:
//
//	func TestMyDecider(t *testing.T) {
//		agenttest.RunDeciderSuite(t, func() agent.Decider { return NewMyDecider() })
//	}
//
// The suites check the generic contracts only — never mutating the Request
// or Result shown, tolerating zero (and, for observers, nil) inputs without
// panicking, safety for concurrent use (under -race) — not what a decision
// should be. The checks are also exported as Cases over the small Reporter
// interface, so a harness other than testing.T can run them, and so the
// suites' own tests can prove that they fail on a bad implementation.
//
// Imports: agent, engine, errdefs, model.
package agenttest
