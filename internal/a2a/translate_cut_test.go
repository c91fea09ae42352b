package a2a

import (
	"encoding/json"
	"testing"

	"github.com/a2aproject/a2a-go/v2/a2a"

	"agentd/internal/engine"
	"agentd/internal/runtime"
	"agentd/internal/store"
)

// cutLog is a run whose first attempt was cut short mid-answer and whose
// second attempt, resumed after the crash, streams the answer again.
func cutLog(t *testing.T) []store.Event {
	t.Helper()
	var evs []store.Event
	add := func(typ string, body any) {
		b, err := json.Marshal(body)
		if err != nil {
			t.Fatal(err)
		}
		evs = append(evs, store.Event{RunID: "r", Seq: int64(len(evs) + 1), Type: typ, Data: b})
	}
	add(runtime.EventRunStart, runtime.RunStartData{Attempt: 1})
	add(runtime.EventStatus, runtime.StatusData{State: store.StateWorking})
	add(runtime.EventDelta, map[string]string{"text": "tok1 "})
	add(runtime.EventDelta, map[string]string{"text": "tok2 "})
	// The cut attempt's model step is torn down with it.
	add(runtime.EventStepError, map[string]any{"actor": "a", "payload": map[string]string{"kind": "model", "error": "context canceled", "error_class": "aborted"}})
	add(runtime.EventRunEnd, runtime.RunEndData{State: store.StateWorking, Error: &store.TaskError{Class: "aborted", Message: "cut"}})
	add(runtime.EventRunStart, runtime.RunStartData{Attempt: 2, Resumed: engine.SignalCrash})
	add(runtime.EventStatus, runtime.StatusData{State: store.StateWorking})
	add(runtime.EventDelta, map[string]string{"text": "tok1 "})
	add(runtime.EventDelta, map[string]string{"text": "tok2 tok3"})
	add(runtime.EventRunEnd, runtime.RunEndData{State: store.StateCompleted})
	return evs
}

// An answer an attempt left open is continued by the resumed attempt,
// whose first chunk replaces it: applied in order, the updates leave one
// artifact holding exactly the answer — for a client that streamed it all,
// and for every client that resumed at a cursor (prime) in between.
func TestCutAnswerIsReplacedNotDoubled(t *testing.T) {
	evs := cutLog(t)
	tk := store.Task{ID: "r", ContextID: "c"}
	for cursor := 0; cursor <= len(evs); cursor++ {
		// The client streams up to the cursor, loses the stream, and
		// resumes after it with a translator primed there.
		held := map[a2a.ArtifactID]*a2a.Artifact{}
		apply := func(x *translator, from []store.Event) {
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
			if got := string(a.Parts[0].Content.(a2a.Text)); got != "tok1 tok2 tok3" {
				t.Errorf("resumed after seq %d: artifact text %q, want the answer", cursor, got)
			}
		}
	}
}

// primed is prime over an in-memory log: back to the last boundary, then
// forwards.
func primed(tk store.Task, seen []store.Event) *translator {
	for i := len(seen) - 1; i >= 0; i-- {
		if boundary(seen[i]) {
			return replay(tk, seen[i], reversed(seen[i+1:]), int64(len(seen)), true)
		}
	}
	return replay(tk, store.Event{}, reversed(seen), int64(len(seen)), true)
}

func reversed(evs []store.Event) []store.Event {
	out := make([]store.Event, len(evs))
	for i, ev := range evs {
		out[len(evs)-1-i] = ev
	}
	return out
}

// An engine whose resumed attempt goes on from where the cut one stopped
// (a re-attached peer, run.start continues) appends to the open answer:
// the answer is the cut part and the rest.
func TestContinuedAnswerIsAppended(t *testing.T) {
	var evs []store.Event
	add := func(typ string, body any) {
		b, err := json.Marshal(body)
		if err != nil {
			t.Fatal(err)
		}
		evs = append(evs, store.Event{RunID: "r", Seq: int64(len(evs) + 1), Type: typ, Data: b})
	}
	add(runtime.EventRunStart, runtime.RunStartData{Attempt: 1})
	add(runtime.EventDelta, map[string]string{"text": "tok1 "})
	add(runtime.EventRunEnd, runtime.RunEndData{State: store.StateWorking, Error: &store.TaskError{Class: "aborted", Message: "cut"}})
	add(runtime.EventRunStart, runtime.RunStartData{Attempt: 2, Resumed: engine.SignalCrash, Continues: true})
	add(runtime.EventDelta, map[string]string{"text": "tok2"})
	add(runtime.EventRunEnd, runtime.RunEndData{State: store.StateCompleted})
	tk := store.Task{ID: "r", ContextID: "c"}
	for cursor := 0; cursor <= len(evs); cursor++ {
		held := map[a2a.ArtifactID]*a2a.Artifact{}
		apply := func(x *translator, from []store.Event) {
			for _, ev := range from {
				if up, ok := x.translate(ev).(*a2a.TaskArtifactUpdateEvent); ok {
					held[up.Artifact.ID] = applyUpdate(held[up.Artifact.ID], up)
				}
			}
		}
		apply(newTranslator(tk), evs[:cursor])
		apply(primed(tk, evs[:cursor]), evs[cursor:])
		if len(held) != 1 {
			t.Fatalf("resumed after seq %d: %d artifacts, want one", cursor, len(held))
		}
		for _, a := range held {
			if got := string(a.Parts[0].Content.(a2a.Text)); got != "tok1 tok2" {
				t.Errorf("resumed after seq %d: %q, want the cut part and the rest", cursor, got)
			}
		}
	}
}
