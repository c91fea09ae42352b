package main

import (
	"encoding/json"
	"testing"

	runs "agentd/internal/run"
)

func logOf(types ...string) []runs.Event {
	evs := make([]runs.Event, len(types))
	attempt := 0
	for i, typ := range types {
		data := `{}`
		if typ == "run.start" {
			attempt++
			b, _ := json.Marshal(map[string]int{"attempt": attempt})
			data = string(b)
		}
		evs[i] = runs.Event{Seq: int64(i + 1), Type: typ, Data: json.RawMessage(data)}
	}
	return evs
}

func TestFramed(t *testing.T) {
	for _, tc := range []struct {
		name string
		evs  []runs.Event
		want bool
	}{
		{"one attempt", logOf("run.start", "status", "delta", "run.end"), true},
		{"two attempts", logOf("run.start", "delta", "run.end", "run.start", "delta", "run.end"), true},
		{"unclosed", logOf("run.start", "delta"), false},
		{"event outside an attempt", logOf("run.start", "run.end", "delta"), false},
		{"nested start", logOf("run.start", "run.start", "run.end"), false},
		{"empty", nil, false},
	} {
		if got := framed(tc.evs); got != tc.want {
			t.Errorf("%s: framed = %v, want %v", tc.name, got, tc.want)
		}
	}
	holey := logOf("run.start", "delta", "run.end")
	holey[2].Seq = 4
	if framed(holey) {
		t.Error("a log with a hole in its seqs is framed")
	}
}

// The check counts what a client got wrong: each injected fault shows.
func TestCheckRESTCounts(t *testing.T) {
	evs := logOf("run.start", "delta", "delta", "delta", "run.end")
	for _, tc := range []struct {
		name               string
		seqs               []int64
		lost, dup, reorder int
	}{
		{"exact", []int64{1, 2, 3, 4, 5}, 0, 0, 0},
		{"lost", []int64{1, 2, 4, 5}, 1, 0, 0},
		{"duplicated", []int64{1, 2, 3, 3, 4, 5}, 0, 1, 0},
		{"reordered", []int64{1, 3, 2, 4, 5}, 0, 0, 1},
	} {
		rep := &report{}
		checkREST(&clientRun{id: "r", seqs: tc.seqs}, evs, rep)
		if rep.lost != tc.lost || rep.duplicated != tc.dup || rep.reordered != tc.reorder {
			t.Errorf("%s: lost %d, duplicated %d, reordered %d; want %d, %d, %d",
				tc.name, rep.lost, rep.duplicated, rep.reordered, tc.lost, tc.dup, tc.reorder)
		}
	}
}

func TestNoteInjects(t *testing.T) {
	for inject, want := range map[string]int{"": 12, "drop": 11, "dup": 13} {
		cr := &clientRun{inject: inject}
		for s := int64(1); s <= 12; s++ {
			cr.note(s)
		}
		if len(cr.seqs) != want {
			t.Errorf("inject %q: %d seqs noted, want %d", inject, len(cr.seqs), want)
		}
	}
}
