package api

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net/http"
	"strconv"
	"time"

	"agentd/internal/errdefs"
	"agentd/internal/logctx"
	"agentd/internal/run"
	"agentd/internal/runtime"
)

// sseWriter writes a run's events as Server-Sent Events: `id:` is the seq,
// `event:` the type, `data:` the event's JSON (encoded once, when the event
// was logged). Writes are buffered and flushed once per batch of events.
type sseWriter struct {
	w  http.ResponseWriter
	rc *http.ResponseController
	bw *bufio.Writer
}

func startSSE(w http.ResponseWriter, status int) *sseWriter {
	setSSEHeaders(w.Header())
	rc := http.NewResponseController(w)
	// Streams outlive any server write timeout.
	_ = rc.SetWriteDeadline(time.Time{})
	w.WriteHeader(status)
	s := &sseWriter{w: w, rc: rc, bw: bufio.NewWriterSize(w, 4096)}
	_ = s.comment("stream open")
	return s
}

// setSSEHeaders sets the headers of an event stream.
func setSSEHeaders(h http.Header) {
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("Connection", "keep-alive")
	h.Set("X-Accel-Buffering", "no")
}

func (s *sseWriter) event(ev run.Event) {
	b := s.bw
	b.WriteString("id: ")
	b.WriteString(strconv.FormatInt(ev.Seq, 10))
	b.WriteString("\nevent: ")
	b.WriteString(ev.Type)
	b.WriteString("\ndata: ")
	b.Write(ev.Data) // compact JSON: never contains a newline
	b.WriteString("\n\n")
}

func (s *sseWriter) comment(text string) error {
	s.bw.WriteString(": ")
	s.bw.WriteString(text)
	s.bw.WriteString("\n\n")
	return s.flush()
}

func (s *sseWriter) flush() error {
	if err := s.bw.Flush(); err != nil {
		return err
	}
	return s.rc.Flush()
}

// streamRun copies a run's events to the client until the run ends, the
// client goes away, or the server shuts down; it sends a keep-alive comment
// whenever the run is silent for heartbeat. A stream of one attempt (the
// answer to a message) closes at that attempt's run.end; a run's event
// stream closes at a run.end that ends the run or parks it (input-required)
// when nothing follows yet (a resume or a retry goes on in the same log).
func streamRun(ctx context.Context, s *sseWriter, st *runtime.Stream, heartbeat time.Duration, attemptOnly bool) {
	for {
		evs, err := st.Next(ctx, 512, heartbeat)
		if err != nil {
			if !errors.Is(err, io.EOF) && ctx.Err() == nil {
				if !errdefs.IsPublic(err) {
					logctx.From(ctx).WarnContext(ctx, "event stream ended by an error", "err", err)
				}
				_ = s.comment("error: " + errdefs.ClientText(err))
			}
			return
		}
		if len(evs) == 0 {
			if s.comment("keep-alive") != nil {
				return
			}
			continue
		}
		for len(evs) > 0 {
			end := -1
			for i, ev := range evs {
				if ev.Type == runtime.EventRunEnd {
					end = i
					break
				}
			}
			if end < 0 {
				for _, ev := range evs {
					s.event(ev)
				}
				break
			}
			for _, ev := range evs[:end+1] {
				s.event(ev)
			}
			if attemptOnly {
				_ = s.flush()
				return
			}
			if evs = evs[end+1:]; len(evs) == 0 {
				// Ended or parked: go on only if the next attempt (a
				// resume, a retry) is already there.
				if evs, err = st.Next(ctx, 512, 0); err != nil || len(evs) == 0 {
					_ = s.flush()
					return
				}
			}
		}
		if s.flush() != nil {
			return
		}
	}
}
