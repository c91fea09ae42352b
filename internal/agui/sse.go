package agui

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strconv"
	"time"

	"agentd/internal/runtime"
)

// sseWriter writes server-sent events, buffered and flushed per batch.
type sseWriter struct {
	rc      *http.ResponseController
	bw      *bufio.Writer
	scratch []byte
}

func startSSE(w http.ResponseWriter, extra http.Header) *sseWriter {
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("Connection", "keep-alive")
	h.Set("X-Accel-Buffering", "no")
	for k, v := range extra {
		h[k] = v
	}
	rc := http.NewResponseController(w)
	_ = rc.SetWriteDeadline(time.Time{}) // streams outlive any write timeout
	w.WriteHeader(http.StatusOK)
	return &sseWriter{rc: rc, bw: bufio.NewWriterSize(w, 4096)}
}

// event writes one event: its id (empty: none) and its data, one JSON
// value (compact: never a newline).
func (s *sseWriter) event(id string, v any) error {
	var b []byte
	var err error
	switch e := v.(type) { // their MarshalJSON, without encoding/json's check of it
	case Event:
		b, err = e.MarshalJSON()
	case chunk:
		b, err = e.MarshalJSON()
	default:
		b, err = json.Marshal(v)
	}
	if err != nil {
		return err
	}
	s.raw(id, b)
	return nil
}

// eventAt writes event v of log event seq, the k-th it produced: its id
// is "<seq>.<k>", written without building the string.
func (s *sseWriter) eventAt(seq int64, k int, v Event) error {
	b, err := v.MarshalJSON()
	if err != nil {
		return err
	}
	s.scratch = strconv.AppendInt(append(s.scratch[:0], "id: "...), seq, 10)
	s.scratch = strconv.AppendInt(append(s.scratch, '.'), int64(k), 10)
	s.bw.Write(append(s.scratch, "\ndata: "...))
	s.bw.Write(b)
	s.bw.WriteString("\n\n")
	return nil
}

func (s *sseWriter) raw(id string, data []byte) {
	if id != "" {
		s.bw.WriteString("id: ")
		s.bw.WriteString(id)
		s.bw.WriteByte('\n')
	}
	s.bw.WriteString("data: ")
	s.bw.Write(data)
	s.bw.WriteString("\n\n")
}

func (s *sseWriter) comment(text string) error {
	s.bw.WriteString(": " + text + "\n\n")
	return s.flush()
}

func (s *sseWriter) flush() error {
	if err := s.bw.Flush(); err != nil {
		return err
	}
	return s.rc.Flush()
}

// followStream reads a run's log from st and hands each event to emit
// until emit says the face's run is over, the log ends, the client leaves
// or the server drains. It writes a keep-alive comment whenever the run is
// silent for heartbeat and flushes once per batch.
func followStream(ctx context.Context, st *runtime.Stream, s *sseWriter, heartbeat time.Duration, emit func(logEvent) bool) error {
	var dec logDecoder
	for {
		evs, err := st.Next(ctx, 512, heartbeat)
		if err != nil {
			if errors.Is(err, io.EOF) || ctx.Err() != nil {
				return nil
			}
			return err
		}
		if len(evs) == 0 {
			if s.comment("keep-alive") != nil {
				return nil
			}
			continue
		}
		for _, ev := range evs {
			le, err := dec.decode(ev)
			if err != nil {
				continue // not an object: nothing a face can translate
			}
			if emit(le) {
				return s.flush()
			}
		}
		if s.flush() != nil {
			return nil
		}
	}
}
