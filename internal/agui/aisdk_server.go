package agui

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/go-chi/chi/v5"

	"agentd/internal/errdefs"
	"agentd/internal/model"
	"agentd/internal/run"
	"agentd/internal/runtime"
)

// chatBody is the body useChat's transport posts: the chat's id and its
// UI messages (the last one is the new user message).
type chatBody struct {
	ID       string      `json:"id"`
	Messages []uiMessage `json:"messages"`
	Trigger  string      `json:"trigger,omitempty"`
}

// uiMessage is an AI SDK UI message; only text parts are read.
type uiMessage struct {
	ID    string `json:"id"`
	Role  string `json:"role"`
	Parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	} `json:"parts"`
}

// uiStreamHeader marks a UI message stream response (protocol v1).
var uiStreamHeader = http.Header{"X-Vercel-Ai-Ui-Message-Stream": {"v1"}}

// chat answers POST /ai-sdk/agents/{id}/chat: the chat's new user message
// starts (or, sent again, replays) a run — or answers the chat's run that
// waits for input — answered as a UI message stream.
func (s *Server) chat(w http.ResponseWriter, r *http.Request) {
	agentID := chi.URLParam(r, "agentID")
	if _, err := s.rt.Agent(agentID); err != nil {
		writeError(w, r, err)
		return
	}
	body, msg, err := decodeChat(r.Body, s.opts.MaxBodyBytes)
	if err != nil {
		writeError(w, r, err)
		return
	}
	req := runtime.SendRequest{AgentID: agentID, ContextID: body.ID, Message: msg, Await: runtime.AwaitStream}
	// A chat whose run asked something: the user's next message answers it
	// and the same run goes on (approvals: "approve" or "reject").
	parked, err := s.parkedTask(r.Context(), body.ID)
	if err != nil {
		writeError(w, r, err)
		return
	}
	if parked != nil && parked.AgentID == agentID {
		req.TaskID = parked.ID
	}
	sub, err := s.rt.Send(r.Context(), req)
	if err != nil {
		if errdefs.FieldOf(err) == "context_id" {
			err = errdefs.WithField("id", err)
		}
		writeError(w, r, err)
		return
	}
	s.serveChat(w, r, sub.Task.ID, sub.StartSeq)
}

func decodeChat(r io.Reader, limit int64) (chatBody, model.Message, error) {
	var b chatBody
	data, err := io.ReadAll(io.LimitReader(r, limit+1))
	if err != nil || int64(len(data)) > limit {
		return b, model.Message{}, errdefs.Validationf("request body unreadable or larger than %d bytes", limit)
	}
	if err := json.NewDecoder(bytes.NewReader(data)).Decode(&b); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) && te.Field != "" {
			return b, model.Message{}, errdefs.WithField(te.Field, errdefs.Validationf("must be %s, got %s", jsonType(te.Type.Kind().String()), te.Value))
		}
		return b, model.Message{}, errdefs.Validationf("request body is not a JSON object: %v", err)
	}
	if strings.TrimSpace(b.ID) == "" {
		return b, model.Message{}, errdefs.WithField("id", errdefs.Validationf("required: the chat's id"))
	}
	if len(b.Messages) == 0 {
		return b, model.Message{}, errdefs.WithField("messages", errdefs.Validationf("required: the chat's messages, ending with the user's"))
	}
	i := len(b.Messages) - 1
	last := b.Messages[i]
	if last.Role != "user" {
		return b, model.Message{}, errdefs.WithField(fmt.Sprintf("messages[%d].role", i), errdefs.Validationf("the last message must be the user's, got %q", last.Role))
	}
	var parts []model.Part
	for _, p := range last.Parts {
		if p.Type == "text" && strings.TrimSpace(p.Text) != "" {
			parts = append(parts, model.TextPart(p.Text))
		}
	}
	if len(parts) == 0 {
		return b, model.Message{}, errdefs.WithField(fmt.Sprintf("messages[%d].parts", i), errdefs.Validationf("needs a non-blank text part"))
	}
	return b, model.Message{ID: last.ID, Role: model.RoleUser, Parts: parts}, nil
}

// resumeChat answers GET /ai-sdk/agents/{id}/chat/{chatId}/stream, what
// useChat({resume: true}) calls: the chat's active run from the start of
// its current attempt, replayed from the log and then live; 204 when no
// run of the chat is active.
func (s *Server) resumeChat(w http.ResponseWriter, r *http.Request) {
	t, ok := s.activeChatRun(w, r)
	if !ok {
		return
	}
	start, err := s.lastAttemptStart(r.Context(), t.ID, true)
	if err != nil {
		writeError(w, r, err)
		return
	}
	s.serveChat(w, r, t.ID, start)
}

// resumeChatHead answers HEAD as GET would start.
func (s *Server) resumeChatHead(w http.ResponseWriter, r *http.Request) {
	if _, ok := s.activeChatRun(w, r); ok {
		startSSE(w, uiStreamHeader)
	}
}

// activeChatRun is the chat's active run; otherwise it answers (204, or
// the error) and returns false.
func (s *Server) activeChatRun(w http.ResponseWriter, r *http.Request) (run.Task, bool) {
	agentID, chatID := chi.URLParam(r, "agentID"), chi.URLParam(r, "chatID")
	if _, err := s.rt.Agent(agentID); err != nil {
		writeError(w, r, err)
		return run.Task{}, false
	}
	page, err := s.rt.ListTasks(r.Context(), run.TaskQuery{ContextID: chatID, AgentID: agentID, Limit: 1})
	if err != nil {
		writeError(w, r, err)
		return run.Task{}, false
	}
	if len(page.Tasks) == 0 || page.Tasks[0].State.Terminal() || page.Tasks[0].State.Interrupted() {
		w.WriteHeader(http.StatusNoContent)
		return run.Task{}, false
	}
	return page.Tasks[0], true
}

// serveChat streams run runID's attempt after seq `after` as UI message
// stream chunks, ending with [DONE].
func (s *Server) serveChat(w http.ResponseWriter, r *http.Request, runID string, after int64) {
	st, err := s.rt.OpenStream(r.Context(), runID, after)
	if err != nil {
		writeError(w, r, err)
		return
	}
	defer st.Close()
	tr := newUITranslator()
	sse := startSSE(w, uiStreamHeader)
	_ = followStream(r.Context(), st, sse, s.opts.Heartbeat, func(le logEvent) bool {
		for _, c := range tr.translate(le) {
			_ = sse.event("", c)
		}
		if tr.finished {
			sse.raw("", []byte("[DONE]"))
		}
		return tr.finished
	})
}
