package agentproto

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	runv "agentd/internal/run"
)

var update = flag.Bool("update", false, "rewrite the golden files of testdata")

// fakeSource answers the run's final values and checkpoints as a test
// fixes them.
type fakeSource struct{}

func (fakeSource) finalValues() map[string]any {
	return map[string]any{"messages": []lcMessage{}, "final": true}
}

func (fakeSource) runStates() []stateJSON {
	return []stateJSON{{Values: map[string]any{"n": 1}, Next: []string{}, Checkpoint: &checkpointJSON{ID: "r.1"}}}
}

// readLog reads a run's recorded event log (one event's data a line, as
// GET /v1/runs/{id}/events sends it).
func readLog(t *testing.T, name string) (runv.Task, []runv.Event) {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("testdata", name+".jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	var evs []runv.Event
	sc := bufio.NewScanner(bytes.NewReader(raw))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var head struct {
			RunID string `json:"run_id"`
			Seq   int64  `json:"seq"`
			Type  string `json:"type"`
		}
		if err := json.Unmarshal(sc.Bytes(), &head); err != nil {
			t.Fatal(err)
		}
		evs = append(evs, runv.Event{RunID: head.RunID, Seq: head.Seq, Type: head.Type, Data: append([]byte(nil), sc.Bytes()...)})
	}
	var start struct {
		AgentID string `json:"agent_id"`
	}
	if err := json.Unmarshal(evs[0].Data, &start); err != nil || start.AgentID == "" {
		t.Fatalf("%s: the first event names no agent: %v", name, err)
	}
	return runv.Task{ID: evs[0].RunID, ContextID: "thread-1", AgentID: start.AgentID}, evs
}

// TestTranslateGolden translates recorded runs of the demo agents — echo,
// the assistant's tool call, the research workflow's steps and subgraphs,
// the refund flow's interrupt, a tool approval, the desk's hand-offs to a
// local agent and to a peer (subgraphs) — in every stream mode,
// with subgraphs, and compares the frames with testdata/<run>.golden
// (go test -update rewrites them).
func TestTranslateGolden(t *testing.T) {
	all := []string{"values", "updates", "messages-tuple", "messages", "events", "custom", "debug", "tasks", "checkpoints"}
	for _, name := range []string{"echo", "assistant", "research", "refund", "refund_resumed", "guarded", "desk", "desk_peer"} {
		t.Run(name, func(t *testing.T) {
			run, evs := readLog(t, name)
			seed := []lcMessage{toLC(humanText("earlier"))}
			tr := newTranslator(all, true, "thread-1", run, seed, fakeSource{})
			var b strings.Builder
			for _, ev := range evs {
				for k, f := range tr.translate(ev) {
					data, ok := f.data.(encoded)
					if !ok {
						var err error
						if data, err = json.Marshal(f.data); err != nil {
							t.Fatal(err)
						}
					}
					fmt.Fprintf(&b, "%s %s %s\n", eventID{ev.Seq, k}, f.event, data)
				}
			}
			golden := filepath.Join("testdata", name+".golden")
			if *update {
				if err := os.WriteFile(golden, []byte(b.String()), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatal(err)
			}
			if b.String() != string(want) {
				t.Errorf("frames differ from %s (go test -update rewrites it):\n%s", golden, firstDiff(b.String(), string(want)))
			}
		})
	}
}

func firstDiff(got, want string) string {
	g, w := strings.Split(got, "\n"), strings.Split(want, "\n")
	for i := range min(len(g), len(w)) {
		if g[i] != w[i] {
			return fmt.Sprintf("line %d:\n got %s\nwant %s", i+1, g[i], w[i])
		}
	}
	return fmt.Sprintf("got %d lines, want %d", len(g), len(w))
}

// TestTokenFastPathMatchesDecode: a token read without decoding its event
// (textDelta) yields the frames the decoded event yields (delta).
func TestTokenFastPathMatchesDecode(t *testing.T) {
	modes := []string{"messages-tuple", "messages", "events"}
	for _, name := range []string{"echo", "assistant", "research"} {
		run, evs := readLog(t, name)
		fast := newTranslator(modes, true, "thread-1", run, nil, fakeSource{})
		slow := newTranslator(modes, true, "thread-1", run, nil, fakeSource{})
		tokens := 0
		for _, ev := range evs {
			got := fast.translate(ev)
			var want []frame
			var d logData
			if ev.Type == "delta" && json.Unmarshal(ev.Data, &d) == nil && d.Text != "" {
				want = slow.delta(nil, ev.Seq, d)
				tokens++
			} else {
				want = slow.translate(ev)
			}
			if encode(t, got) != encode(t, want) {
				t.Fatalf("%s event %d:\nfast %s\nslow %s", name, ev.Seq, encode(t, got), encode(t, want))
			}
		}
		if tokens == 0 {
			t.Fatalf("%s: no token compared", name)
		}
	}
}

func encode(t *testing.T, fs []frame) string {
	t.Helper()
	var b strings.Builder
	for _, f := range fs {
		data, ok := f.data.(encoded)
		if !ok {
			var err error
			if data, err = json.Marshal(f.data); err != nil {
				t.Fatal(err)
			}
		}
		fmt.Fprintf(&b, "%s %s\n", f.event, data)
	}
	return b.String()
}
