package agentproto

import (
	"bufio"
	"io"
	"testing"

	runv "agentd/internal/run"
)

// BenchmarkTranslateToken is the face's per-token work in messages-tuple
// mode: a delta event of the run log to its frame, written to the
// stream's buffer (the socket aside).
func BenchmarkTranslateToken(b *testing.B) {
	run := runv.Task{ID: "01a22345-b9fd-7002-8cfe-1e91a638de05", ContextID: "thread-1", AgentID: "echo"}
	ev := runv.Event{RunID: run.ID, Seq: 7, Type: "delta", Data: []byte(`{"run_id":"01a22345-b9fd-7002-8cfe-1e91a638de05","seq":7,"type":"delta","time":"2026-11-28T17:48:22.386169563Z","actor":"echo","text":" tok7"}`)}
	tr := newTranslator([]string{"messages-tuple"}, false, "thread-1", run, nil, fakeSource{})
	out := &sse{bw: bufio.NewWriterSize(io.Discard, 4096)}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		fs := tr.translate(ev)
		if len(fs) != 1 {
			b.Fatalf("%d frames", len(fs))
		}
		out.write(eventID{ev.Seq, 0}, fs[0])
		if i%1000 == 999 {
			tr.building = map[string]*aiBuild{} // a new message now and then: its text stays small
		}
	}
}
