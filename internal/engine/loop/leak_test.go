package loop_test

import (
	"net"
	"strings"
	"testing"
	"time"

	"agentd/internal/engine"
	"agentd/internal/engine/enginetest"
	"agentd/internal/engine/loop"
	"agentd/internal/governor"
)

// An unreachable governor denies the call, and neither the model nor the
// run's events read its address or the dial error.
func TestUnreachableGovernorLeaksNothing(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close() // nothing listens there now
	g, err := governor.New("http://"+addr+"/review", time.Second, true)
	if err != nil {
		t.Fatal(err)
	}
	eng := newEngine(t, loop.Config{Governance: loop.Governance{Mode: "enforce", Governor: g}})
	h := enginetest.NewRecordingHost()
	b, err := execute(t, eng, engine.Run{ID: "r-gov"}, userBoard("what is 2+2?"), h)
	if err != nil {
		t.Fatal(err)
	}
	got := lastToolResult(t, b)
	if !strings.HasPrefix(got, "calculator: denied by policy: governor (governor failed: unavailable right now") {
		t.Fatalf("tool result %q", got)
	}
	_, port, _ := net.SplitHostPort(addr)
	for _, env := range h.Envelopes() {
		if p := string(env.Payload); strings.Contains(p, port) || strings.Contains(p, "connection refused") {
			t.Fatalf("event %s carries the governor's address or dial error: %s", env.Subject, p)
		}
	}
	for _, m := range b.Channel(engine.MainChannel) {
		if strings.Contains(m.Text(), port) {
			t.Fatalf("the transcript carries the governor's address: %q", m.Text())
		}
	}
}
