package runtime

import (
	"strings"
	"testing"
	"time"

	"agentd/internal/errdefs"
	"agentd/internal/store"
)

// An agent's timeout bounds each attempt: a run that passes it fails with
// class timeout and a message naming the timeout, and run.end is its last
// event.
func TestAgentTimeoutFailsTheRun(t *testing.T) {
	a := testAgent("slow", blocker(true, nil))
	a.Timeout = 50 * time.Millisecond
	r := newTestRuntime(t, nil, a)
	task := wait(t, r, send(t, r, "slow", "x").ID)
	if task.State != store.StateFailed || task.Error == nil || task.Error.Class != string(errdefs.ClassTimeout) ||
		!strings.Contains(task.Error.Message, "timeout of 50ms") {
		t.Fatalf("run after its timeout: %s %+v, want failed with a timeout naming it", task.State, task.Error)
	}
	evs := readAll(t, r, task.ID, 0, true)
	if evs[len(evs)-1].Type != EventRunEnd {
		t.Fatalf("last event %s, want run.end", evs[len(evs)-1].Type)
	}
}
