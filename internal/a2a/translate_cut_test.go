package a2a

import (
	"encoding/json"
	"testing"

	"github.com/a2aproject/a2a-go/v2/a2a"

	"agentd/internal/engine"
	"agentd/internal/run"
	"agentd/internal/runtime"
)

// eventLog builds a run's log from (type, body) pairs.
func eventLog(t *testing.T, entries ...any) []run.Event {
	t.Helper()
	var evs []run.Event
	for i := 0; i < len(entries); i += 2 {
		b, err := json.Marshal(entries[i+1])
		if err != nil {
			t.Fatal(err)
		}
		evs = append(evs, run.Event{RunID: "r", Seq: int64(len(evs) + 1), Type: entries[i].(string), Data: b})
	}
	return evs
}

// wantAnswerAtEveryCursor streams evs to a client that loses the stream at
// every cursor and resumes there with a primed translator (prime's rule),
// and checks it ends up with one artifact holding want.
func wantAnswerAtEveryCursor(t *testing.T, evs []run.Event, want string) {
	t.Helper()
	tk := run.Task{ID: "r", ContextID: "c"}
	for cursor := 0; cursor <= len(evs); cursor++ {
		held := map[a2a.ArtifactID]*a2a.Artifact{}
		apply := func(x *translator, from []run.Event) {
			for _, ev := range from {
				if up, ok := x.translate(ev).(*a2a.TaskArtifactUpdateEvent); ok {
					held[up.Artifact.ID] = applyUpdate(held[up.Artifact.ID], up)
				}
			}
		}
		apply(newTranslator(tk), evs[:cursor])
		apply(primed(tk, evs[:cursor]), evs[cursor:])
		if len(held) != 1 {
			t.Errorf("resumed after seq %d: %d artifacts, want one", cursor, len(held))
			continue
		}
		for _, a := range held {
			if got := string(a.Parts[0].Content.(a2a.Text)); got != want {
				t.Errorf("resumed after seq %d: artifact text %q, want %q", cursor, got, want)
			}
		}
	}
}

// An answer an attempt left open is continued by the resumed attempt,
// whose first chunk replaces it: applied in order, the updates leave one
// artifact holding exactly the answer — for a client that streamed it all,
// and for every client that resumed at a cursor (prime) in between. The
// cut attempt's model step is torn down with it (a step.error, aborted).
func TestCutAnswerIsReplacedNotDoubled(t *testing.T) {
	evs := eventLog(t,
		runtime.EventRunStart, runtime.RunStartData{Attempt: 1},
		runtime.EventStatus, runtime.StatusData{State: run.StateWorking},
		runtime.EventDelta, map[string]string{"text": "tok1 "},
		runtime.EventDelta, map[string]string{"text": "tok2 "},
		runtime.EventStepError, map[string]any{"actor": "a", "payload": map[string]string{"kind": "model", "error": "context canceled", "error_class": "aborted"}},
		runtime.EventRunEnd, runtime.RunEndData{State: run.StateWorking, Error: &run.TaskError{Class: "aborted", Message: "cut"}},
		runtime.EventRunStart, runtime.RunStartData{Attempt: 2, Resumed: engine.SignalCrash},
		runtime.EventStatus, runtime.StatusData{State: run.StateWorking},
		runtime.EventDelta, map[string]string{"text": "tok1 "},
		runtime.EventDelta, map[string]string{"text": "tok2 tok3"},
		runtime.EventRunEnd, runtime.RunEndData{State: run.StateCompleted},
	)
	wantAnswerAtEveryCursor(t, evs, "tok1 tok2 tok3")
}

// An engine whose resumed attempt goes on from where the cut one stopped
// (a re-attached peer, run.start continues) appends to the open answer:
// the answer is the cut part and the rest.
func TestContinuedAnswerIsAppended(t *testing.T) {
	evs := eventLog(t,
		runtime.EventRunStart, runtime.RunStartData{Attempt: 1},
		runtime.EventDelta, map[string]string{"text": "tok1 "},
		runtime.EventRunEnd, runtime.RunEndData{State: run.StateWorking, Error: &run.TaskError{Class: "aborted", Message: "cut"}},
		runtime.EventRunStart, runtime.RunStartData{Attempt: 2, Resumed: engine.SignalCrash, Continues: true},
		runtime.EventDelta, map[string]string{"text": "tok2"},
		runtime.EventRunEnd, runtime.RunEndData{State: run.StateCompleted},
	)
	wantAnswerAtEveryCursor(t, evs, "tok1 tok2")
}

// primed is prime over an in-memory log: back to the last boundary, then
// forwards.
func primed(tk run.Task, seen []run.Event) *translator {
	for i := len(seen) - 1; i >= 0; i-- {
		if boundary(seen[i]) {
			return replay(tk, seen[i], reversed(seen[i+1:]), int64(len(seen)), true)
		}
	}
	return replay(tk, run.Event{}, reversed(seen), int64(len(seen)), true)
}

func reversed(evs []run.Event) []run.Event {
	out := make([]run.Event, len(evs))
	for i, ev := range evs {
		out[len(evs)-1-i] = ev
	}
	return out
}
