package main

import (
	"strings"

	"agentd/internal/telemetry/otlptest"
)

// peerRun finds the A2A hop under ancestor that started the peer's run of
// the assistant: A's client span and B's request span under it. A peer
// call makes one more request after the run (GetTask, for the peer's usage),
// whose hop starts no run.
func (tr spanTree) peerRun(ancestor string) (client, req otlptest.Span) {
	tr.t.Helper()
	parent := map[string]string{}
	for _, s := range tr.spans {
		parent[s.SpanID] = s.ParentID
	}
	under := func(id string) bool {
		for p := parent[id]; p != ""; p = parent[p] {
			if p == ancestor {
				return true
			}
		}
		return false
	}
	for _, c := range tr.spans {
		if c.Service != "agentd-a" || !strings.HasPrefix(c.Name, "a2a POST /agents/assistant/") || !under(c.SpanID) {
			continue
		}
		for _, r := range tr.named("agentd-b", "POST /agents/{agentID}/jsonrpc", c.SpanID) {
			if len(tr.named("agentd-b", "run assistant", r.SpanID)) == 1 {
				return c, r
			}
		}
	}
	tr.t.Fatalf("no hop under %s started the peer's run; the trace:%s", ancestor, tr.dump())
	return client, req
}
