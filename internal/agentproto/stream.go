package agentproto

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/go-chi/chi/v5"

	"agentd/internal/run"
	"agentd/internal/runtime"
)

// eventID is a frame's SSE id: the seq of the log event it translates and
// its index among that event's frames, "<seq>-<k>".
type eventID struct {
	seq int64
	k   int
}

func (e eventID) String() string { return strconv.FormatInt(e.seq, 10) + "-" + strconv.Itoa(e.k) }

// parseEventID reads a Last-Event-ID ("" is the zero id: nothing seen).
func parseEventID(s string) (eventID, error) {
	if s == "" {
		return eventID{}, nil
	}
	seq, k, ok := strings.Cut(s, "-")
	n, err1 := strconv.ParseInt(seq, 10, 64)
	m, err2 := strconv.Atoi(k)
	if !ok || err1 != nil || err2 != nil || n < 0 || m < 0 {
		return eventID{}, badInput("Last-Event-ID", "%q: want <seq>-<index>, an id of this stream", s)
	}
	return eventID{n, m}, nil
}

// sse writes frames as Server-Sent Events.
type sse struct {
	rc *http.ResponseController
	bw *bufio.Writer
	// scratch formats event ids without allocating.
	scratch []byte
}

func startStream(w http.ResponseWriter) *sse {
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no")
	rc := http.NewResponseController(w)
	_ = rc.SetWriteDeadline(time.Time{})
	w.WriteHeader(http.StatusOK)
	return &sse{rc: rc, bw: bufio.NewWriterSize(w, 4096)}
}

// write writes f, with id unless it is the zero eventID.
func (s *sse) write(id eventID, f frame) {
	if id != (eventID{}) {
		s.scratch = append(s.scratch[:0], "id: "...)
		s.scratch = strconv.AppendInt(s.scratch, id.seq, 10)
		s.scratch = append(s.scratch, '-')
		s.scratch = strconv.AppendInt(s.scratch, int64(id.k), 10)
		s.scratch = append(s.scratch, '\n')
		s.bw.Write(s.scratch)
	}
	s.bw.WriteString("event: ")
	s.bw.WriteString(f.event)
	s.bw.WriteString("\ndata: ")
	switch data := f.data.(type) {
	case tokenJSON:
		data.writeTo(s.bw)
	case encoded:
		s.bw.Write(data)
	default:
		b, err := json.Marshal(f.data)
		if err != nil {
			b = []byte("null")
		}
		s.bw.Write(b)
	}
	s.bw.WriteString("\n\n")
}

func (s *sse) flush() error {
	if err := s.bw.Flush(); err != nil {
		return err
	}
	return s.rc.Flush()
}

// pump copies the run's frames to the client: those after skip, until the
// attempt ends (attemptOnly) or the run stops — ends, or waits for input
// with nothing after — or the client leaves. It reports whether it saw
// the run stop.
func (s *Server) pump(ctx context.Context, out *sse, st *runtime.Stream, tr *translator, skip eventID, attemptOnly bool) bool {
	for {
		evs, err := st.Next(ctx, 512, s.opts.Heartbeat)
		if err != nil {
			return errors.Is(err, io.EOF)
		}
		if len(evs) == 0 {
			out.bw.WriteString(": heartbeat\n\n")
			if out.flush() != nil {
				return false
			}
			continue
		}
		stopped := false
		for _, ev := range evs {
			for k, f := range tr.translate(ev) {
				if id := (eventID{ev.Seq, k}); ev.Seq > skip.seq || (ev.Seq == skip.seq && k > skip.k) {
					out.write(id, f)
				}
			}
			if ev.Type == runtime.EventRunEnd {
				var end struct {
					State run.TaskState `json:"state"`
				}
				_ = json.Unmarshal(ev.Data, &end)
				stopped = attemptOnly || end.State.Terminal() || end.State.Interrupted()
			}
		}
		if out.flush() != nil {
			return false
		}
		if stopped {
			// A next attempt already logged (a retry) goes on in this stream.
			if attemptOnly {
				return true
			}
			if evs, err := st.Next(ctx, 512, 0); err != nil || len(evs) == 0 {
				return err == nil || errors.Is(err, io.EOF)
			}
		}
	}
}

// streamRun starts a run and streams it as the body's stream modes say.
func (s *Server) streamRun(w http.ResponseWriter, r *http.Request) {
	b, ok := s.decodeRun(w, r)
	if !ok {
		return
	}
	ctx := r.Context()
	sub, err := s.submit(ctx, chi.URLParam(r, "threadID"), b, runtime.AwaitStream)
	if err != nil {
		writeError(w, r, err)
		return
	}
	t := sub.Task
	st, err := s.rt.OpenStream(ctx, t.ID, sub.StartSeq)
	if err != nil {
		writeError(w, r, err)
		return
	}
	defer st.Close()
	if sub.Durable(ctx) != nil {
		return // the client left; the run goes on
	}
	setRunHeaders(w, t, true)
	out := startStream(w)
	out.write(eventID{}, frame{event: "metadata", data: map[string]any{"run_id": t.ID, "attempt": t.Attempt, "thread_id": t.ContextID}})
	tr := newTranslator(b.StreamMode, b.StreamSubgraphs, t.ContextID, t, s.seed(ctx, t), s.source(ctx, t))
	stopped := s.pump(ctx, out, st, tr, eventID{}, true)
	if !stopped && b.OnDisconnect == "cancel" {
		_, _ = s.rt.Cancel(context.WithoutCancel(ctx), t.ID)
	}
}

// joinStream streams an existing run from its start, or after the frame
// Last-Event-ID names — each frame once, from any replica.
func (s *Server) joinStream(w http.ResponseWriter, r *http.Request) {
	t, ok := s.pathRun(w, r)
	if ok {
		s.join(w, r, t)
	}
}

// threadStream joins the thread's run in progress (its newest, when it
// has not stopped); a thread with none answers a stream that closes at
// once.
func (s *Server) threadStream(w http.ResponseWriter, r *http.Request) {
	th, ok := s.pathThread(w, r)
	if !ok {
		return
	}
	head, err := s.rt.ThreadHead(r.Context(), th.ID)
	if err != nil {
		writeError(w, r, err)
		return
	}
	if head == nil || head.State.Terminal() || head.State.Interrupted() {
		_ = startStream(w).flush()
		return
	}
	s.join(w, r, *head)
}

// join streams run t as joinStream does.
func (s *Server) join(w http.ResponseWriter, r *http.Request, t run.Task) {
	skip, err := parseEventID(r.Header.Get("Last-Event-ID"))
	if err != nil {
		writeError(w, r, err)
		return
	}
	q := r.URL.Query()
	modes, subgraphs := streamedAs(t)
	if len(q["stream_mode"]) > 0 {
		modes = q["stream_mode"]
	}
	ctx := r.Context()
	st, err := s.rt.OpenStream(ctx, t.ID, 0)
	if err != nil {
		writeError(w, r, err)
		return
	}
	defer st.Close()
	out := startStream(w)
	if skip == (eventID{}) {
		out.write(eventID{}, frame{event: "metadata", data: map[string]any{"run_id": t.ID, "attempt": t.Attempt, "thread_id": t.ContextID}})
	}
	tr := newTranslator(modes, subgraphs, t.ContextID, t, s.seed(ctx, t), s.source(ctx, t))
	stopped := s.pump(ctx, out, st, tr, skip, false)
	if !stopped && q.Get("cancel_on_disconnect") == "1" {
		_, _ = s.rt.Cancel(context.WithoutCancel(ctx), t.ID)
	}
}

// streamedAs returns the stream modes the run was created with.
func streamedAs(t run.Task) (modes []string, subgraphs bool) {
	if list, ok := t.Metadata[metaStreamMode].([]any); ok {
		for _, m := range list {
			if s, ok := m.(string); ok {
				modes = append(modes, s)
			}
		}
	}
	subgraphs, _ = t.Metadata[metaSubgraphs].(bool)
	return modes, subgraphs
}
