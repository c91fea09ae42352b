package memory

import (
	"context"
	"fmt"
	"strings"

	"agentd/internal/errdefs"
	"agentd/internal/run"
	"agentd/internal/tool"
)

// UserKey is the run metadata member that names the run's user: the
// {user} of a memory namespace.
const UserKey = "user_id"

// Tools is the memory as the memory tools see it (tool.Memory): scoped to
// the namespace of the call's run.
type Tools struct {
	svc *Service
}

var _ tool.Memory = (*Tools)(nil)

// NewTools returns the memory tools' view of svc.
func NewTools(svc *Service) *Tools { return &Tools{svc: svc} }

// Namespace fills the template's {user} (the run's metadata user_id) and
// {context} (its conversation). A run without a user_id cannot use a
// namespace that names {user}: memories would otherwise be shared across
// users.
func (t *Tools) Namespace(ctx context.Context, template []string) ([]string, error) {
	needsRun := false
	for _, l := range template {
		needsRun = needsRun || strings.Contains(l, "{user}") || strings.Contains(l, "{context}")
	}
	if !needsRun {
		return template, nil
	}
	cur, ok := run.CurrentFrom(ctx) // the runtime's, for every attempt
	if !ok {
		return nil, errdefs.NotAvailablef("memory: the call is outside a run, so {user} and {context} are unknown")
	}
	user, _ := cur.Metadata[UserKey].(string)
	out := make([]string, len(template))
	for i, l := range template {
		if strings.Contains(l, "{user}") && user == "" {
			return nil, errdefs.Validationf("memory: this run has no metadata.%s, and the agent's memory namespace names {user}", UserKey)
		}
		out[i] = strings.NewReplacer("{user}", user, "{context}", cur.ContextID).Replace(l)
	}
	if err := checkNamespace("namespace", out, true); err != nil {
		return nil, fmt.Errorf("memory: the namespace %q of this run: %w", out, err)
	}
	return out, nil
}

// Put saves value under key.
func (t *Tools) Put(ctx context.Context, namespace []string, key string, value map[string]any) error {
	_, err := t.svc.Put(ctx, Put{Namespace: namespace, Key: key, Value: value})
	return err
}

// Get returns the value under key, found false when there is none.
func (t *Tools) Get(ctx context.Context, namespace []string, key string) (map[string]any, bool, error) {
	it, err := t.svc.Get(ctx, namespace, key, true)
	if errdefs.IsNotFound(err) {
		return nil, false, nil
	}
	return it.Value, err == nil, err
}

// Search returns the best matches of query (at most limit, default 5).
func (t *Tools) Search(ctx context.Context, namespace []string, query string, limit int) ([]tool.MemoryHit, error) {
	if limit <= 0 {
		limit = 5
	}
	items, err := t.svc.Search(ctx, run.MemorySearch{Prefix: namespace, Query: query, Limit: limit, RefreshTTL: true})
	if err != nil {
		return nil, err
	}
	hits := make([]tool.MemoryHit, len(items))
	for i, it := range items {
		hits[i] = tool.MemoryHit{Key: it.Key, Value: it.Value, Score: it.Score}
	}
	return hits, nil
}
