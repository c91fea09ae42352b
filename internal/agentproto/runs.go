package agentproto

import (
	"context"
	"net/http"
	"time"

	"github.com/go-chi/chi/v5"

	"agentd/internal/errdefs"
	"agentd/internal/run"
	"agentd/internal/runtime"
)

// The run metadata keys that record how the run was streamed.
const (
	metaStreamMode = "agentd.stream_mode"
	metaSubgraphs  = "agentd.stream_subgraphs"
)

// runJSON is a run as LangGraph clients read it.
type runJSON struct {
	RunID             string         `json:"run_id"`
	ThreadID          string         `json:"thread_id"`
	AssistantID       string         `json:"assistant_id"`
	CreatedAt         time.Time      `json:"created_at"`
	UpdatedAt         time.Time      `json:"updated_at"`
	Status            string         `json:"status"`
	Metadata          map[string]any `json:"metadata"`
	MultitaskStrategy string         `json:"multitask_strategy"`
	Kwargs            map[string]any `json:"kwargs"`
}

// runStatus names a task state as the Agent Protocol does.
func runStatus(t run.Task) string {
	switch {
	case t.State == run.StateSubmitted:
		return "pending"
	case t.State == run.StateWorking:
		return "running"
	case t.State.Interrupted(), t.State == run.StateCanceled:
		return "interrupted"
	case t.State == run.StateCompleted:
		return "success"
	case t.Error != nil && t.Error.Class == "timeout":
		return "timeout"
	}
	return "error"
}

func runOf(t run.Task) runJSON {
	md := t.Metadata
	if md == nil {
		md = map[string]any{}
	}
	kw := map[string]any{"graph_id": t.AgentID}
	if c, ok := md[metaContext]; ok {
		kw["context"] = c
	}
	if c, ok := md[metaConfigurable]; ok {
		kw["config"] = map[string]any{"configurable": c}
	}
	return runJSON{
		RunID: t.ID, ThreadID: t.ContextID, AssistantID: runAssistantID(t), CreatedAt: t.CreatedAt, UpdatedAt: t.UpdatedAt,
		Status: runStatus(t), Metadata: md, MultitaskStrategy: "reject", Kwargs: kw,
	}
}

// submit starts the run the body asks for on thread threadID ("" for a
// stateless run, in a new context), or resumes the thread's interrupted
// run with command.resume.
func (s *Server) submit(ctx context.Context, threadID string, b *runBody, await runtime.Await) (runtime.Submission, error) {
	rc, err := b.prepare(await)
	if err != nil {
		return runtime.Submission{}, err
	}
	a, stored, err := s.agentOf(ctx, b.AssistantID)
	if err != nil {
		return runtime.Submission{}, err
	}
	if threadID != "" {
		if err := s.ensureThread(ctx, threadID, b.IfNotExists); err != nil {
			return runtime.Submission{}, err
		}
	}
	if b.Command != nil && nonEmpty(b.Command.Resume) {
		return s.resume(ctx, threadID, a, b, rc, await)
	}
	if threadID == "" && b.forkFrom() != "" {
		return runtime.Submission{}, badInput("checkpoint_id", "a stateless run has no checkpoints to continue from; run on a thread")
	}
	msg, err := userMessage(b.Input)
	if err != nil {
		return runtime.Submission{}, err
	}
	md, err := s.runMetadata(ctx, threadID, b)
	if err != nil {
		return runtime.Submission{}, err
	}
	msg = rc.apply(msg, md)
	req := runtime.SendRequest{AgentID: a.ID, AssistantID: stored, ContextID: threadID, Message: msg, Metadata: md, Await: await, Multitask: b.multitask()}
	if b.MultitaskStrategy == "rollback" && threadID != "" {
		if err := s.rollback(ctx, threadID); err != nil {
			return runtime.Submission{}, err
		}
	}
	var sub runtime.Submission
	if b.AfterSeconds > 0 {
		sub.Task, err = s.rt.SendAfter(ctx, req, afterDelay(b.AfterSeconds))
	} else {
		sub, err = s.rt.Send(ctx, req)
	}
	if errdefs.IsConflict(err) && threadID != "" {
		return sub, errdefs.Public(errdefs.Conflictf("thread %s is busy with another run; wait for it, or choose multitask_strategy enqueue, interrupt or rollback", threadID))
	}
	if err == nil && b.Webhook != "" {
		err = s.registerWebhook(ctx, sub, b.Webhook)
	}
	return sub, err
}

// ensureThread checks that the thread is one of the caller's, creating it
// when if_not_exists says so.
func (s *Server) ensureThread(ctx context.Context, threadID, ifNotExists string) error {
	_, err := s.rt.GetThread(ctx, threadID)
	if errdefs.IsNotFound(err) && ifNotExists == "create" {
		_, err = s.rt.CreateThread(ctx, run.Thread{ID: threadID})
		if errdefs.IsConflict(err) {
			return nil // created meanwhile
		}
	}
	return err
}

// runMetadata is the client's metadata, plus the fork the run continues
// from: the checkpoint the body names, or, on a thread that was forked,
// the newest checkpoint of its branch, so that later runs stay on it.
func (s *Server) runMetadata(ctx context.Context, threadID string, b *runBody) (map[string]any, error) {
	md := make(map[string]any, len(b.Metadata)+1)
	for k, v := range b.Metadata {
		md[k] = v
	}
	delete(md, runtime.MetaForkFrom)
	delete(md, runtime.MetaForkReplay)
	if threadID != "" {
		// A thread's history and forks read every checkpoint; a stateless
		// run's context is never read as a thread.
		md[runtime.MetaKeepCheckpoints] = true
	}
	if len(b.StreamMode) > 0 || b.StreamSubgraphs {
		// A stream that reconnects (the SDK's join after a cut) is
		// translated with the same modes, so that its ids match.
		md[metaStreamMode] = []string(b.StreamMode)
		md[metaSubgraphs] = b.StreamSubgraphs
	}
	from := b.forkFrom()
	if from != "" {
		md[runtime.MetaForkReplay] = true
	}
	if from == "" && threadID != "" {
		head, err := s.rt.ThreadHead(ctx, threadID)
		if err != nil {
			return nil, err
		}
		if head != nil && head.Metadata[runtime.MetaForkFrom] != nil {
			cps, err := s.rt.RunCheckpoints(ctx, head.ID)
			if err != nil {
				return nil, err
			}
			if len(cps) > 0 {
				from = runtime.CheckpointRef{RunID: head.ID, N: len(cps)}.String()
			}
		}
	}
	if from != "" {
		owner, err := s.checkpointThread(ctx, threadID, from)
		if err != nil {
			return nil, err
		}
		if err := s.rt.CheckFork(ctx, owner, map[string]any{runtime.MetaForkFrom: from}); err != nil {
			return nil, err
		}
		md[runtime.MetaForkFrom] = from
	}
	return md, nil
}

// resume answers the thread's interrupted run with command.resume.
func (s *Server) resume(ctx context.Context, threadID string, a *runtime.Agent, b *runBody, rc runConfig, await runtime.Await) (runtime.Submission, error) {
	if threadID == "" {
		return runtime.Submission{}, badInput("command.resume", "a stateless run has nothing to resume; resume on the thread")
	}
	head, err := s.rt.ThreadHead(ctx, threadID)
	if err != nil {
		return runtime.Submission{}, err
	}
	if head == nil || !head.State.Interrupted() {
		return runtime.Submission{}, badInput("command.resume", "thread %s has no interrupted run to resume", threadID)
	}
	if head.AgentID != a.ID {
		return runtime.Submission{}, badInput("assistant_id", "the interrupted run of thread %s belongs to assistant %q", threadID, head.AgentID)
	}
	msg, err := resumeMessage(*head, b.Command.Resume)
	if err != nil {
		return runtime.Submission{}, err
	}
	msg = rc.apply(msg, map[string]any{}) // the run's metadata is its first request's
	sub, err := s.rt.Send(ctx, runtime.SendRequest{AgentID: a.ID, TaskID: head.ID, Message: msg, Metadata: b.Metadata, Await: await})
	if err == nil && b.Webhook != "" {
		err = s.registerWebhook(ctx, sub, b.Webhook)
	}
	return sub, err
}

// setRunHeaders names the run as LangGraph servers do: Content-Location
// (the SDK's onRunCreated reads it) and, for streams, Location — the
// join-stream path, relative to the API root, where the SDK reconnects.
func setRunHeaders(w http.ResponseWriter, t run.Task, stream bool) {
	path := "/threads/" + t.ContextID + "/runs/" + t.ID
	w.Header().Set("Content-Location", Prefix+path)
	if stream {
		w.Header().Set("Location", path+"/stream")
	}
}

// pathRun returns the run the path names, which must belong to the
// thread the path names (404 otherwise, as for another tenant's).
func (s *Server) pathRun(w http.ResponseWriter, r *http.Request) (run.Task, bool) {
	runID := chi.URLParam(r, "runID")
	t, err := s.rt.GetTask(r.Context(), runID)
	if errdefs.IsNotFound(err) {
		err = errdefs.NotFoundf("run %q not found", runID) // the store's wording is its own
	}
	if threadID := chi.URLParam(r, "threadID"); err == nil && threadID != "" && t.ContextID != threadID {
		err = errdefs.NotFoundf("run %q not found in thread %q", t.ID, threadID)
	}
	if err != nil {
		writeError(w, r, err)
		return run.Task{}, false
	}
	return t, true
}
