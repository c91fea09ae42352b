package agentproto

import (
	"testing"

	runv "agentd/internal/run"
)

// BenchmarkTranslateToken is the face's per-token work in messages-tuple
// mode: a delta event of the run log to its frame (the SSE write aside).
func BenchmarkTranslateToken(b *testing.B) {
	run := runv.Task{ID: "01a22345-b9fd-7002-8cfe-1e91a638de05", ContextID: "thread-1", AgentID: "echo"}
	ev := runv.Event{RunID: run.ID, Seq: 7, Type: "delta", Data: []byte(`{"run_id":"01a22345-b9fd-7002-8cfe-1e91a638de05","seq":7,"type":"delta","time":"2026-11-28T17:48:22.386169563Z","actor":"echo","text":" tok7"}`)}
	tr := newTranslator([]string{"messages-tuple"}, false, "thread-1", run, nil, fakeSource{})
	b.ReportAllocs()
	for b.Loop() {
		if fs := tr.translate(ev); len(fs) != 1 {
			b.Fatalf("%d frames", len(fs))
		}
	}
}
