package loop_test

import (
	"context"
	"encoding/json"
	"net"
	"strings"
	"testing"
	"time"

	"agentd/internal/engine"
	"agentd/internal/engine/enginetest"
	"agentd/internal/engine/loop"
	"agentd/internal/errdefs"
	"agentd/internal/governor"
	"agentd/internal/llm/scripted"
	"agentd/internal/tool"
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
	for _, ev := range h.Events() {
		b, _ := json.Marshal(ev)
		if p := string(b); strings.Contains(p, port) || strings.Contains(p, "connection refused") {
			t.Fatalf("event %T carries the governor's address or dial error: %s", ev, p)
		}
	}
	for _, m := range b.Channel(engine.MainChannel) {
		if strings.Contains(m.Text(), port) {
			t.Fatalf("the transcript carries the governor's address: %q", m.Text())
		}
	}
}

// A tool whose dependency cannot be reached: the model, the transcript and
// the step.error event read that it is unavailable, not the dial error
// with its address; the class stays not_available.
func TestUnreachableDependencyLeaksNothing(t *testing.T) {
	down := tool.New(tool.Spec{Name: "lookup", Description: "looks up"}, func(context.Context, json.RawMessage) (tool.Result, error) {
		return tool.Result{}, errdefs.NotAvailablef("dial tcp 10.1.2.3:5432: connect: connection refused")
	})
	rules := []scripted.Rule{
		{Prefix: "look", ToolCalls: []scripted.ToolCall{{Name: "lookup"}}},
		{AfterTool: "lookup", Reply: "it said: {{.ToolResult}}"},
	}
	eng := newEngine(t, loop.Config{Provider: newScripted(t, rules...), Tools: registry(t, &counter{}, down), ToolNames: []string{"lookup"}})
	h := enginetest.NewRecordingHost()
	b, err := execute(t, eng, engine.Run{ID: "r-down"}, userBoard("look it up"), h)
	if err != nil {
		t.Fatal(err)
	}
	if got := lastToolResult(t, b); !strings.Contains(got, "unavailable right now") {
		t.Fatalf("tool result %q", got)
	}
	var stepErr bool
	for _, ev := range h.Events() {
		b, _ := json.Marshal(ev)
		p := string(b)
		if f, ok := ev.(engine.StepFailed); ok {
			p += " " + f.Err.Error()
			stepErr = stepErr || errdefs.ClassOf(f.Err) == errdefs.ClassNotAvailable
		}
		if strings.Contains(p, "10.1.2.3") || strings.Contains(p, "connection refused") {
			t.Fatalf("event %T carries the dial error: %s", ev, p)
		}
	}
	if !stepErr {
		t.Error("no step.error event with class not_available")
	}
}
