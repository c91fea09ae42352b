package runtime

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"sync"

	"agentd/internal/engine"
	"agentd/internal/errdefs"
	"agentd/internal/run"
)

// MetaAssistant is the run metadata key that records the assistant a run
// was sent to: {"assistant_id", "version", "context"}. The runtime writes
// it when the run is sent, from the assistant's latest version then, and
// every attempt of the run (a resume, a recovery on another replica)
// configures its agent from it: a run keeps the version it was sent with,
// whatever happens to the assistant afterwards. A client's own value
// under this key is dropped.
const MetaAssistant = "agentd.assistant"

// AssistantRef is what MetaAssistant records.
type AssistantRef struct {
	ID      string
	Version int
	Context map[string]any
}

// AssistantOf returns the assistant task t was sent to, if any.
func AssistantOf(t run.Task) (AssistantRef, bool) {
	m, ok := t.Metadata[MetaAssistant].(map[string]any)
	if !ok {
		return AssistantRef{}, false
	}
	ref := AssistantRef{}
	ref.ID, _ = m["assistant_id"].(string)
	switch v := m["version"].(type) {
	case int:
		ref.Version = v
	case float64: // as decoded from the store
		ref.Version = int(v)
	}
	ref.Context, _ = m["context"].(map[string]any)
	return ref, ref.ID != ""
}

// withAssistant resolves the assistant req names, if any: its latest
// version is read from the store (so a write on another replica is seen
// at once) and recorded in the run's metadata; the agent is the
// assistant's. A client's MetaAssistant is dropped either way.
func (r *Runtime) withAssistant(ctx context.Context, req SendRequest) (SendRequest, error) {
	_, spoofed := req.Metadata[MetaAssistant]
	if req.AssistantID == "" && !spoofed {
		return req, nil
	}
	md := maps.Clone(req.Metadata)
	delete(md, MetaAssistant)
	req.Metadata = md
	if req.AssistantID == "" || req.TaskID != "" {
		return req, nil // a continued run keeps its own assistant
	}
	a, err := r.GetAssistant(ctx, req.AssistantID, 0)
	if err != nil {
		return req, errdefs.WithField("assistant_id", err)
	}
	switch req.AgentID {
	case "":
		req.AgentID = a.AgentID
	case a.AgentID:
	default:
		return req, errdefs.WithField("assistant_id", errdefs.Validationf("assistant %q configures agent %q, not %q", a.ID, a.AgentID, req.AgentID))
	}
	if md == nil {
		md = map[string]any{}
	}
	md[MetaAssistant] = map[string]any{"assistant_id": a.ID, "version": a.Version, "context": a.Context}
	req.Metadata = md
	return req, nil
}

// configuredAgents caches the agents assistants configure, by agent and
// overrides (as canonical JSON): the configuration a key names never
// changes in a process, so an entry is never stale. The cache is bounded;
// when full it starts again (building an engine costs about as much as
// checking the overrides).
type configuredAgents struct {
	mu    sync.Mutex
	byKey map[string]*Agent
}

// maxConfiguredAgents bounds configuredAgents.
const maxConfiguredAgents = 256

// agentFor returns a as the assistant run t was sent to configures it, a
// itself when t names none. Overrides the agent no longer accepts (its
// configuration changed since the assistant was stored) make an agent
// whose runs fail with that error, naming the assistant.
func (r *Runtime) agentFor(a *Agent, t run.Task) *Agent {
	ref, ok := AssistantOf(t)
	if !ok || len(ref.Context) == 0 {
		return a
	}
	canon, err := json.Marshal(ref.Context)
	key := a.ID + "\x00" + string(canon)
	c := &r.configured
	c.mu.Lock()
	defer c.mu.Unlock()
	if got := c.byKey[key]; got != nil && err == nil {
		return got
	}
	var eng engine.Engine
	if err == nil && a.Configure == nil {
		err = errdefs.Validationf("agent %q takes no overrides", a.ID)
	}
	if err == nil {
		eng, err = a.Configure("context", ref.Context)
	}
	if err != nil {
		failure := errdefs.Validation(fmt.Errorf("assistant %s version %d: %w", ref.ID, ref.Version, err))
		eng = engine.EngineFunc(func(_ context.Context, _ engine.Run, _ engine.Host, b *engine.Board) (*engine.Board, error) {
			return b, failure
		})
	}
	configured := *a
	configured.Engine = eng
	if c.byKey == nil || len(c.byKey) >= maxConfiguredAgents {
		c.byKey = map[string]*Agent{}
	}
	c.byKey[key] = &configured
	return &configured
}
