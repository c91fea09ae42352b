package a2a

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/a2aproject/a2a-go/v2/a2a"
)

// flushCounter is a ResponseWriter that counts flushes.
type flushCounter struct {
	*httptest.ResponseRecorder
	flushes int
}

func (f *flushCounter) Flush() { f.flushes++ }

// TestBatchFlush drives a deferredWriter as the SDK's SSE writer does (an
// id line, a data block and a flush per event) and checks that a stream
// flushes once per batch the handler holds, after the batch's last event,
// and always after a keep-alive or an update outside a batch.
func TestBatchFlush(t *testing.T) {
	var f batchFlush
	rec := &flushCounter{ResponseRecorder: httptest.NewRecorder()}
	d := &deferredWriter{ResponseWriter: rec, flush: &f}
	d.Header().Set("Content-Type", "text/event-stream")
	d.WriteHeader(http.StatusOK)
	yield := f.count(func(a2a.Event, error) bool { return true })
	event := func(seq string) {
		yield(nil, nil)
		_, _ = d.Write([]byte("id: x\n"))
		_, _ = d.Write([]byte(`data: {"metadata":{"` + MetaSeq + `":` + seq + "}}\n\n"))
		d.Flush()
	}
	steps := []struct {
		name    string
		do      func()
		flushes int
	}{
		{"the opening Task commits the stream", func() { event("0") }, 1},
		{"a batch of three: held", func() { f.hold(3); event("1"); event("2") }, 1},
		{"the batch's last event flushes", func() { event("3") }, 2},
		{"a keep-alive flushes", func() { _, _ = d.Write([]byte(": keep-alive\n\n")); d.Flush() }, 3},
		{"a batch of one flushes", func() { f.hold(1); event("4") }, 4},
		{"an update outside a batch flushes", func() { event("5") }, 5},
		{"an error after a batch flushes", func() { f.hold(2); event("6"); event("7"); event("") }, 7},
	}
	for _, s := range steps {
		s.do()
		if rec.flushes != s.flushes {
			t.Fatalf("%s: %d flushes, want %d", s.name, rec.flushes, s.flushes)
		}
	}
}
