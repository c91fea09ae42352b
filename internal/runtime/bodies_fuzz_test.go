package runtime

import (
	"bytes"
	"encoding/json"
	"testing"

	"agentd/internal/engine"
	"agentd/internal/model"
	"agentd/internal/run"
	"agentd/internal/runlog"
)

// FuzzStateBodies holds the bodies runlog writes by hand (run.start,
// status, run.end, step events) to what encoding/json writes for the
// runtime's structs of the same events: the wire must not change with the
// fast path.
func FuzzStateBodies(f *testing.F) {
	for _, s := range []string{"", "echo", "a\"b\\c", "<tag>&", "\u2028\u00e9\x01", "\xff"} {
		f.Add(s, s, 1, true, true, int64(2), s)
	}
	f.Fuzz(func(t *testing.T, a, b string, n int, flag, withErr bool, tokens int64, detail string) {
		var taskErr *run.TaskError
		if withErr {
			taskErr = &run.TaskError{Class: a, Message: b}
		}
		usage := model.TokenUsage{InputTokens: tokens, OutputTokens: -tokens, TotalTokens: tokens * 3}
		start := RunStartData{ContextID: a, AgentID: b, Attempt: n, Resumed: detail, Continues: flag}
		status := StatusData{State: run.TaskState(a), Error: taskErr, Outcome: detail}
		end := RunEndData{State: run.TaskState(b), Error: taskErr, Usage: usage, Outcome: detail}
		for _, e := range []struct {
			entry runlog.Entry
			v     any
		}{{runStartEvent(start), start}, {statusEvent(status), status}, {runEndEvent(end), end}} {
			if e.entry.Body != nil {
				t.Fatalf("%T: no hand-written body", e.v)
			}
			got, err := e.entry.JSON()
			if err != nil {
				t.Fatal(err)
			}
			checkJSON(t, got, e.v)
		}
		var d any
		if flag {
			d = map[string]any{"iteration": n, "note": detail}
		}
		var err error
		if withErr {
			err = errStep(detail)
		}
		s := engine.Step{RunID: a, Actor: b, Kind: detail, Detail: d}
		body, berr := stepLogBody(s, err)
		if berr != nil {
			t.Fatal(berr)
		}
		checkJSON(t, body.JSON(), stepBody(s, err))
	})
}

type errStep string

func (e errStep) Error() string { return string(e) }

func checkJSON(t *testing.T, got []byte, v any) {
	t.Helper()
	want, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("hand-written body differs from encoding/json's:\n got %s\nwant %s", got, want)
	}
}
