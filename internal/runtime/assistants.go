package runtime

import (
	"context"
	"errors"
	"maps"
	"strings"

	"github.com/google/uuid"

	"agentd/internal/errdefs"
	"agentd/internal/run"
	"agentd/internal/store"
)

// An assistant is a stored, versioned configuration of a configured agent
// (run.Assistant): its context overrides some of the agent's settings
// (model, system prompt, sampling, tools, response schema: what the agent's
// Configure accepts). The runtime checks every version against its agent
// before it is stored, so nothing the agent would refuse is ever stored,
// and a run that names an assistant reads the assistant's latest version
// from the store when it is sent (assistants_run.go): a write on one
// replica is seen by the next run sent to any replica, with no cache in
// between.

// AssistantPatch is an update of an assistant: a new version made of the
// latest one and what the patch sets.
type AssistantPatch struct {
	// AgentID, when set, moves the assistant to another agent.
	AgentID     string
	Name        *string
	Description *string
	// Context and Config, when not nil, replace the latest version's.
	Context map[string]any
	Config  map[string]any
	// Metadata is merged into the latest version's; a key set to nil is
	// removed.
	Metadata map[string]any
}

// assistantStore returns the store's assistants, looking through wrappers
// that expose Unwrap (the metrics' store).
func (r *Runtime) assistantStore() (store.Assistants, error) {
	st := r.st
	for {
		if as, ok := st.(store.Assistants); ok {
			return as, nil
		}
		u, ok := st.(interface{ Unwrap() store.Store })
		if !ok {
			return nil, errdefs.Public(errdefs.NotAvailablef("this server's store keeps no assistants"))
		}
		st = u.Unwrap()
	}
}

// CreateAssistant checks a and stores it as version 1 of a new assistant.
// An empty id gets a new one; a client's id must be a valid id and no
// agent's.
func (r *Runtime) CreateAssistant(ctx context.Context, a run.Assistant) (run.Assistant, error) {
	st, err := r.assistantStore()
	if err != nil {
		return run.Assistant{}, err
	}
	if a.ID == "" {
		a.ID = uuid.NewString()
	} else if err := checkClientID(a.ID); err != nil {
		return run.Assistant{}, errdefs.WithField("assistant_id", err)
	} else if _, isAgent := r.agents[a.ID]; isAgent {
		return run.Assistant{}, errdefs.WithField("assistant_id", errdefs.Conflictf("%q is an agent's id; choose another", a.ID))
	}
	if err := r.checkAssistant(&a); err != nil {
		return run.Assistant{}, err
	}
	return st.CreateAssistant(ctx, a)
}

// UpdateAssistant stores a new version of the assistant, its latest: the
// latest version with p applied, checked as a new assistant is.
func (r *Runtime) UpdateAssistant(ctx context.Context, id string, p AssistantPatch) (run.Assistant, error) {
	st, err := r.assistantStore()
	if err != nil {
		return run.Assistant{}, err
	}
	a, err := st.GetAssistant(ctx, id, 0)
	if err != nil {
		return run.Assistant{}, err
	}
	if p.AgentID != "" {
		a.AgentID = p.AgentID
	}
	if p.Name != nil {
		a.Name = *p.Name
	}
	if p.Description != nil {
		a.Description = *p.Description
	}
	if p.Context != nil {
		a.Context = p.Context
	}
	if p.Config != nil {
		a.Config = p.Config
	}
	a.Metadata = mergeMetadata(a.Metadata, p.Metadata)
	if err := r.checkAssistant(&a); err != nil {
		return run.Assistant{}, err
	}
	return st.AddAssistantVersion(ctx, a)
}

// GetAssistant returns version of the caller's assistant id, its latest
// for 0.
func (r *Runtime) GetAssistant(ctx context.Context, id string, version int) (run.Assistant, error) {
	st, err := r.assistantStore()
	if err != nil {
		return run.Assistant{}, err
	}
	return st.GetAssistant(ctx, id, version)
}

// AssistantVersions returns one page of the assistant's versions, newest
// first.
func (r *Runtime) AssistantVersions(ctx context.Context, id string, q run.AssistantQuery) ([]run.Assistant, error) {
	st, err := r.assistantStore()
	if err != nil {
		return nil, err
	}
	return st.ListAssistantVersions(ctx, id, q)
}

// SetLatestAssistant makes version the one runs of the assistant use.
func (r *Runtime) SetLatestAssistant(ctx context.Context, id string, version int) (run.Assistant, error) {
	st, err := r.assistantStore()
	if err != nil {
		return run.Assistant{}, err
	}
	return st.SetLatestAssistant(ctx, id, version)
}

// DeleteAssistant deletes the assistant and its versions. Runs already
// sent keep the version they were sent with (assistants_run.go).
func (r *Runtime) DeleteAssistant(ctx context.Context, id string) error {
	st, err := r.assistantStore()
	if err != nil {
		return err
	}
	return st.DeleteAssistant(ctx, id)
}

// SearchAssistants returns one page of the caller's assistants, at their
// latest versions, and how many match.
func (r *Runtime) SearchAssistants(ctx context.Context, q run.AssistantQuery) ([]run.Assistant, int, error) {
	st, err := r.assistantStore()
	if err != nil {
		return nil, 0, err
	}
	return st.SearchAssistants(ctx, q)
}

// checkAssistant checks a version against its agent: the agent exists,
// config holds nothing (agentd reads an assistant's settings from its
// context), and the agent's Configure accepts the context. It names the
// assistant after its agent when it has no name.
func (r *Runtime) checkAssistant(a *run.Assistant) error {
	ag, ok := r.agents[a.AgentID]
	if !ok {
		return errdefs.WithField("agent_id", errdefs.Validationf("unknown agent %q (agents: %s)", a.AgentID, strings.Join(r.order, ", ")))
	}
	for k, v := range a.Config {
		if empty(v) {
			continue // what clients send by default ({"configurable": {}})
		}
		return errdefs.WithField("config."+k, errdefs.Validationf(
			"not read: an assistant's settings (model, system_prompt, temperature, top_p, max_tokens, tools, response_schema) go in its context"))
	}
	if a.Name == "" {
		a.Name = ag.Card.Name
	}
	if len(a.Context) == 0 {
		return nil
	}
	if ag.Configure == nil {
		return errdefs.WithField("context", errdefs.Validationf("agent %q (engine %s) takes no overrides: its assistants may set name, description and metadata only", ag.ID, ag.EngineKind))
	}
	if _, err := ag.Configure("context", a.Context); err != nil {
		return errdefs.Public(overrideError(err))
	}
	return nil
}

// overrideError classifies an error of Configure as a request's mistake in
// the member its message starts with ("context.tools[1]: unknown tool …"),
// so that faces can name the field as they do for their own members.
func overrideError(err error) error {
	msg := err.Error()
	if field, reason, ok := strings.Cut(msg, ": "); ok && strings.HasPrefix(field, "context") && !strings.ContainsAny(field, " \"") {
		return errdefs.WithField(field, errdefs.Validation(errors.New(reason)))
	}
	return errdefs.Validation(err)
}

// empty reports whether a decoded JSON value holds nothing: null, {} or [].
func empty(v any) bool {
	switch v := v.(type) {
	case nil:
		return true
	case map[string]any:
		return len(v) == 0
	case []any:
		return len(v) == 0
	}
	return false
}

// mergeMetadata is have with set merged in; a nil value removes its key.
func mergeMetadata(have, set map[string]any) map[string]any {
	out := maps.Clone(have)
	if out == nil {
		out = map[string]any{}
	}
	for k, v := range set {
		if v == nil {
			delete(out, k)
			continue
		}
		out[k] = v
	}
	return out
}
