package agui

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/go-chi/chi/v5"

	"agentd/internal/errdefs"
	"agentd/internal/model"
	"agentd/internal/run"
	"agentd/internal/runtime"
)

// Options configure the faces.
type Options struct {
	// MaxBodyBytes limits request bodies (default 1 MiB).
	MaxBodyBytes int64
	// Heartbeat is the keep-alive interval of silent streams (default 15s).
	Heartbeat time.Duration
	Logger    *slog.Logger
}

// Server serves AG-UI and the AI SDK UI message stream over the runtime.
// It holds no state of its own: every answer is translated from the
// runs' logs and transcripts.
type Server struct {
	rt   *runtime.Runtime
	opts Options
}

// New returns the faces over rt.
func New(rt *runtime.Runtime, opts Options) *Server {
	if opts.MaxBodyBytes <= 0 {
		opts.MaxBodyBytes = 1 << 20
	}
	if opts.Heartbeat <= 0 {
		opts.Heartbeat = 15 * time.Second
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	return &Server{rt: rt, opts: opts}
}

// Mount declares both faces' routes on r.
func (s *Server) Mount(r chi.Router) {
	r.Post("/ag-ui/agents/{agentID}", s.runAgent)
	r.Post("/ag-ui/agents/{agentID}/connect", s.connect)
	r.Get("/ag-ui/agents/{agentID}/threads/{threadID}/runs/{aguiRunID}/events", s.runEvents)
	r.Head("/ag-ui/agents/{agentID}/threads/{threadID}/runs/{aguiRunID}/events", s.runEventsHead)
	r.Post("/ag-ui/agents/{agentID}/threads/{threadID}/runs/{aguiRunID}/cancel", s.cancelRun)

	r.Post("/ai-sdk/agents/{agentID}/chat", s.chat)
	r.Get("/ai-sdk/agents/{agentID}/chat/{chatID}/stream", s.resumeChat)
	r.Head("/ai-sdk/agents/{agentID}/chat/{chatID}/stream", s.resumeChatHead)
}

// runAgent answers POST /ag-ui/agents/{id}: RunAgentInput in, the run as
// AG-UI events out. A runId already known replays that run (idempotent).
func (s *Server) runAgent(w http.ResponseWriter, r *http.Request) {
	agentID := chi.URLParam(r, "agentID")
	if _, err := s.rt.Agent(agentID); err != nil {
		writeError(w, r, err)
		return
	}
	in, err := decodeInput(r.Body, s.opts.MaxBodyBytes)
	if err != nil {
		writeError(w, r, err)
		return
	}
	t, msgs, err := s.lookup(r.Context(), in.ThreadID, in.RunID)
	if err != nil {
		writeError(w, r, err)
		return
	}
	ref, err := s.locateIn(r.Context(), agentID, in.ThreadID, in.RunID, t, msgs)
	if errdefs.IsNotFound(err) {
		ref, err = s.startNew(r.Context(), agentID, in, msgs)
	}
	if err != nil {
		writeError(w, r, err)
		return
	}
	// A retried POST (the same runId) may say what it has seen already.
	s.serveRun(w, r, in.ThreadID, in.RunID, ref, r.Header.Get("Last-Event-ID"))
}

// startNew starts the run of a runId the thread does not know yet — one
// that no resume in another thread used (runids.go) — or joins it when a
// concurrent request with the same runId won the race.
func (s *Server) startNew(ctx context.Context, agentID string, in RunAgentInput, msgs []run.Message) (runRef, error) {
	if err := s.checkRunID(ctx, in.ThreadID, in.RunID); err != nil {
		return runRef{}, err
	}
	ref, err := s.start(ctx, agentID, in, msgs)
	if errdefs.IsConflict(err) && errdefs.FieldOf(err) == "" {
		if again, lerr := s.locate(ctx, agentID, in.ThreadID, in.RunID); lerr == nil {
			return again, nil
		}
	}
	return ref, err
}

// start submits the run an input asks for: an answer to the thread's
// interrupts, frontend tool results, or a new message; msgs is the
// thread's transcript before it.
func (s *Server) start(ctx context.Context, agentID string, in RunAgentInput, msgs []run.Message) (runRef, error) {
	if len(in.Resume) > 0 || in.lastRole() == "tool" {
		parked, err := s.parkedTask(ctx, in.ThreadID)
		if err != nil {
			return runRef{}, err
		}
		if len(in.Resume) > 0 || parked != nil {
			return s.resume(ctx, agentID, in, parked)
		}
	}
	msg, err := in.userMessage()
	if err != nil {
		return runRef{}, err
	}
	msg.Metadata = in.messageMetadata()
	sub, err := s.rt.Send(ctx, runtime.SendRequest{
		AgentID: agentID, ContextID: in.ThreadID, RunID: in.RunID, Message: msg,
		Metadata: in.runMetadata(), Await: runtime.AwaitStream,
	})
	if err != nil {
		return runRef{}, renameFields(err)
	}
	if sub.Duplicate {
		return s.locate(ctx, agentID, in.ThreadID, sub.Task.ID)
	}
	// A new run: its first attempt, after the thread as it was.
	opened := run.Message{ContextID: in.ThreadID, TaskID: sub.Task.ID, Message: msg}
	return runRef{task: sub.Task, startSeq: sub.StartSeq, snapshot: messagesOf(append(msgs, opened))}, nil
}

// resume answers the thread's parked run with the input's resume entries
// (or its trailing tool messages) and returns the attempt that goes on.
func (s *Server) resume(ctx context.Context, agentID string, in RunAgentInput, parked *run.Task) (runRef, error) {
	if parked == nil || parked.StatusMessage == nil {
		return runRef{}, errdefs.WithField("resume", errdefs.Conflictf("thread %q has no run waiting for an answer", in.ThreadID))
	}
	var a answer
	var err error
	if len(in.Resume) > 0 {
		a, err = answerOf(parked.ID, *parked.StatusMessage, in.Resume)
	} else {
		a.message, err = in.toolResults(parked.ID, *parked.StatusMessage)
	}
	if err != nil {
		return runRef{}, err
	}
	if a.cancel {
		if _, err := s.rt.Cancel(ctx, parked.ID); err != nil {
			return runRef{}, err
		}
		start, err := s.lastAttemptStart(ctx, parked.ID, false)
		if err != nil {
			return runRef{}, err
		}
		msgs, err := s.transcript(ctx, in.ThreadID)
		return runRef{task: *parked, startSeq: start, snapshot: messagesOf(msgs)}, err
	}
	if err := s.claimRunID(ctx, in.ThreadID, in.RunID); err != nil {
		return runRef{}, err
	}
	a.message.ID = in.RunID
	md := in.messageMetadata()
	for k, v := range a.message.Metadata {
		md[k] = v
	}
	a.message.Metadata = md
	if _, err := s.rt.Send(ctx, runtime.SendRequest{
		AgentID: agentID, ContextID: in.ThreadID, TaskID: parked.ID, Message: a.message, Await: runtime.AwaitStream,
	}); err != nil {
		return runRef{}, renameFields(err)
	}
	return s.locate(ctx, agentID, in.ThreadID, in.RunID)
}

// parkedTask is the thread's run waiting for input, if any.
func (s *Server) parkedTask(ctx context.Context, threadID string) (*run.Task, error) {
	page, err := s.rt.ListTasks(ctx, run.TaskQuery{ContextID: threadID, States: []run.TaskState{run.StateInputRequired, run.StateAuthRequired}, Limit: 1})
	if err != nil || len(page.Tasks) == 0 {
		return nil, err
	}
	return &page.Tasks[0], nil
}

// serveRun streams AG-UI run runID from ref, skipping the events up to
// lastID (a Last-Event-ID), with the thread's snapshot first.
func (s *Server) serveRun(w http.ResponseWriter, r *http.Request, threadID, runID string, ref runRef, lastID string) {
	skipSeq, skipK, err := parseEventID(lastID)
	if err != nil {
		writeError(w, r, err)
		return
	}
	st, err := s.rt.OpenStream(r.Context(), ref.task.ID, ref.startSeq)
	if err != nil {
		writeError(w, r, err)
		return
	}
	defer st.Close()
	snapshot := ref.snapshot
	if snapshot == nil {
		snapshot = []Message{} // "messages": [], never null
	}
	tr := newTranslator(threadID, runID, &snapshot)
	sse := startSSE(w, nil)
	_ = followStream(r.Context(), st, sse, s.opts.Heartbeat, func(le logEvent) bool {
		for k, ev := range tr.translate(le) {
			if le.Seq < skipSeq || (le.Seq == skipSeq && k <= skipK) {
				continue
			}
			_ = sse.eventAt(le.Seq, k, ev)
		}
		return tr.done()
	})
}

// parseEventID reads an AG-UI stream's event id "<seq>.<k>" ("" = none).
func parseEventID(id string) (int64, int, error) {
	if id == "" {
		return 0, -1, nil
	}
	a, b, ok := strings.Cut(strings.TrimSpace(id), ".")
	seq, err1 := strconv.ParseInt(a, 10, 64)
	k, err2 := strconv.Atoi(b)
	if !ok || err1 != nil || err2 != nil || seq < 0 || k < 0 {
		return 0, 0, errdefs.WithField("Last-Event-ID", errdefs.Validationf("%q is not an event id of this stream (<seq>.<index>)", id))
	}
	return seq, k, nil
}

// connect answers POST /ag-ui/agents/{id}/connect: the AG-UI `connect`
// pattern. The input names the thread (and the run, else the thread's
// latest); the answer is that run from its start — the thread's messages
// before it as MESSAGES_SNAPSHOT, then every event, live until it ends.
func (s *Server) connect(w http.ResponseWriter, r *http.Request) {
	agentID := chi.URLParam(r, "agentID")
	if _, err := s.rt.Agent(agentID); err != nil {
		writeError(w, r, err)
		return
	}
	in, err := decodeInput(r.Body, s.opts.MaxBodyBytes)
	if err != nil && errdefs.FieldOf(err) != "runId" && errdefs.FieldOf(err) != "messages" {
		writeError(w, r, err)
		return
	}
	runID := in.RunID
	if runID == "" {
		if runID, err = s.latestRun(r.Context(), in.ThreadID); err != nil {
			writeError(w, r, err)
			return
		}
	}
	ref, err := s.locate(r.Context(), agentID, in.ThreadID, runID)
	if err != nil {
		writeError(w, r, err)
		return
	}
	s.serveRun(w, r, in.ThreadID, runID, ref, "")
}

// latestRun is the AG-UI id of the thread's latest run.
func (s *Server) latestRun(ctx context.Context, threadID string) (string, error) {
	msgs, err := s.transcript(ctx, threadID)
	if err != nil {
		return "", err
	}
	for i := len(msgs) - 1; i >= 0; i-- {
		if id, ok := msgs[i].Metadata[MetadataRunID].(string); ok && msgs[i].Role == model.RoleUser {
			return id, nil
		}
	}
	return "", errdefs.WithField("threadId", errdefs.NotFoundf("thread %q has no AG-UI run", threadID))
}

// runEvents answers GET …/threads/{threadID}/runs/{runID}/events: the
// run's AG-UI stream, after the Last-Event-ID (or ?after=) the client saw.
func (s *Server) runEvents(w http.ResponseWriter, r *http.Request) {
	agentID, threadID, runID := chi.URLParam(r, "agentID"), chi.URLParam(r, "threadID"), chi.URLParam(r, "aguiRunID")
	ref, err := s.locate(r.Context(), agentID, threadID, runID)
	if err != nil {
		writeError(w, r, err)
		return
	}
	last := r.URL.Query().Get("after")
	if last == "" {
		last = r.Header.Get("Last-Event-ID")
	}
	s.serveRun(w, r, threadID, runID, ref, last)
}

// runEventsHead answers HEAD as GET would start, without following the
// run (HEAD drops the body; the stream would not end before the run).
func (s *Server) runEventsHead(w http.ResponseWriter, r *http.Request) {
	agentID, threadID, runID := chi.URLParam(r, "agentID"), chi.URLParam(r, "threadID"), chi.URLParam(r, "aguiRunID")
	if _, err := s.locate(r.Context(), agentID, threadID, runID); err != nil {
		writeError(w, r, err)
		return
	}
	startSSE(w, nil)
}

// cancelRun answers POST …/runs/{run}/cancel: cancels the agentd run the
// AG-UI run is an attempt of (idempotent); its stream ends with the
// cancelled outcome. 202 while it stops, 200 once it has.
func (s *Server) cancelRun(w http.ResponseWriter, r *http.Request) {
	agentID, threadID, runID := chi.URLParam(r, "agentID"), chi.URLParam(r, "threadID"), chi.URLParam(r, "aguiRunID")
	ref, err := s.locate(r.Context(), agentID, threadID, runID)
	if err != nil {
		writeError(w, r, err)
		return
	}
	t, err := s.rt.Cancel(r.Context(), ref.task.ID)
	if err != nil {
		writeError(w, r, err)
		return
	}
	status := http.StatusOK
	if !t.State.Terminal() {
		status = http.StatusAccepted
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]string{"threadId": threadID, "runId": runID, "status": string(t.State)})
}

// renameFields names the runtime's fields as the protocol does.
func renameFields(err error) error {
	switch errdefs.FieldOf(err) {
	case "context_id":
		return errdefs.WithField("threadId", err)
	case "run_id":
		return errdefs.WithField("runId", err)
	}
	if strings.HasPrefix(errdefs.FieldOf(err), "message") {
		return errdefs.WithField("messages", err)
	}
	return err
}
