package memstore

import (
	"context"
	"encoding/json"
	"sort"
	"sync"

	"agentd/internal/errdefs"
	"agentd/internal/run"
	"agentd/internal/store"
)

// assistantTable holds the versioned assistants (store.Assistants), apart
// from the runs: its own lock, taken without s.mu.
type assistantTable struct {
	mu       sync.Mutex
	byTenant map[string]map[string]*assistantRecord
	sequence int64 // creation order, to sort newest first
}

// assistantRecord is one assistant: its versions, each kept as JSON so
// that nothing mutable is shared with callers.
type assistantRecord struct {
	versions [][]byte // versions[i] is version i+1
	latest   int
	sequence int64
	updated  run.Assistant // CreatedAt and UpdatedAt of the assistant
}

var _ store.Assistants = (*Store)(nil)

// tenantAssistants returns the context's tenant's assistants, made when
// create is set. Callers hold t.mu.
func (t *assistantTable) tenantAssistants(ctx context.Context, create bool) map[string]*assistantRecord {
	tenant := run.TenantFrom(ctx)
	m := t.byTenant[tenant]
	if m == nil && create {
		if t.byTenant == nil {
			t.byTenant = map[string]map[string]*assistantRecord{}
		}
		m = map[string]*assistantRecord{}
		t.byTenant[tenant] = m
	}
	return m
}

// CreateAssistant stores version 1 of a new assistant.
func (s *Store) CreateAssistant(ctx context.Context, a run.Assistant) (run.Assistant, error) {
	if err := live(ctx); err != nil {
		return run.Assistant{}, err
	}
	if a.ID == "" || a.AgentID == "" {
		return run.Assistant{}, errdefs.Validationf("memstore: create assistant: id and agent id are required")
	}
	t := &s.assistants
	t.mu.Lock()
	defer t.mu.Unlock()
	m := t.tenantAssistants(ctx, true)
	if _, ok := m[a.ID]; ok {
		return run.Assistant{}, errdefs.Conflictf("assistant %q already exists", a.ID)
	}
	at := now()
	a.Version, a.CreatedAt, a.UpdatedAt, a.VersionCreatedAt = 1, at, at, at
	b, err := json.Marshal(a)
	if err != nil {
		return run.Assistant{}, errdefs.Validationf("memstore: create assistant %q: %v", a.ID, err)
	}
	t.sequence++
	rec := &assistantRecord{versions: [][]byte{b}, latest: 1, sequence: t.sequence, updated: a}
	m[a.ID] = rec
	return rec.version(1), nil
}

// AddAssistantVersion stores a new version and makes it the latest.
func (s *Store) AddAssistantVersion(ctx context.Context, a run.Assistant) (run.Assistant, error) {
	if err := live(ctx); err != nil {
		return run.Assistant{}, err
	}
	t := &s.assistants
	t.mu.Lock()
	defer t.mu.Unlock()
	rec, ok := t.tenantAssistants(ctx, false)[a.ID]
	if !ok {
		return run.Assistant{}, errdefs.NotFoundf("assistant %q not found", a.ID)
	}
	at := now()
	a.Version = len(rec.versions) + 1
	a.CreatedAt, a.UpdatedAt, a.VersionCreatedAt = rec.updated.CreatedAt, at, at
	b, err := json.Marshal(a)
	if err != nil {
		return run.Assistant{}, errdefs.Validationf("memstore: update assistant %q: %v", a.ID, err)
	}
	rec.versions = append(rec.versions, b)
	rec.latest, rec.updated.UpdatedAt = a.Version, at
	return rec.version(a.Version), nil
}

// GetAssistant returns one version, the latest for 0.
func (s *Store) GetAssistant(ctx context.Context, id string, version int) (run.Assistant, error) {
	if err := live(ctx); err != nil {
		return run.Assistant{}, err
	}
	t := &s.assistants
	t.mu.Lock()
	defer t.mu.Unlock()
	rec, ok := t.tenantAssistants(ctx, false)[id]
	if !ok {
		return run.Assistant{}, errdefs.NotFoundf("assistant %q not found", id)
	}
	if version == 0 {
		version = rec.latest
	}
	if version < 1 || version > len(rec.versions) {
		return run.Assistant{}, errdefs.NotFoundf("assistant %q has no version %d", id, version)
	}
	return rec.version(version), nil
}

// ListAssistantVersions returns one page of versions, newest first.
func (s *Store) ListAssistantVersions(ctx context.Context, id string, q run.AssistantQuery) ([]run.Assistant, error) {
	if err := live(ctx); err != nil {
		return nil, err
	}
	t := &s.assistants
	t.mu.Lock()
	defer t.mu.Unlock()
	rec, ok := t.tenantAssistants(ctx, false)[id]
	if !ok {
		return nil, errdefs.NotFoundf("assistant %q not found", id)
	}
	var all []run.Assistant
	for v := len(rec.versions); v >= 1; v-- {
		if a := rec.version(v); metadataHolds(a.Metadata, q.Metadata) {
			all = append(all, a)
		}
	}
	from := min(max(q.Offset, 0), len(all))
	to := min(from+q.AssistantPageLimit(), len(all))
	return append([]run.Assistant{}, all[from:to]...), nil
}

// SetLatestAssistant makes version the latest.
func (s *Store) SetLatestAssistant(ctx context.Context, id string, version int) (run.Assistant, error) {
	if err := live(ctx); err != nil {
		return run.Assistant{}, err
	}
	t := &s.assistants
	t.mu.Lock()
	defer t.mu.Unlock()
	rec, ok := t.tenantAssistants(ctx, false)[id]
	if !ok {
		return run.Assistant{}, errdefs.NotFoundf("assistant %q not found", id)
	}
	if version < 1 || version > len(rec.versions) {
		return run.Assistant{}, errdefs.NotFoundf("assistant %q has no version %d", id, version)
	}
	rec.latest, rec.updated.UpdatedAt = version, now()
	return rec.version(version), nil
}

// DeleteAssistant deletes the assistant and its versions.
func (s *Store) DeleteAssistant(ctx context.Context, id string) error {
	if err := live(ctx); err != nil {
		return err
	}
	t := &s.assistants
	t.mu.Lock()
	defer t.mu.Unlock()
	m := t.tenantAssistants(ctx, false)
	if _, ok := m[id]; !ok {
		return errdefs.NotFoundf("assistant %q not found", id)
	}
	delete(m, id)
	return nil
}

// SearchAssistants returns one page of latest versions, newest first.
func (s *Store) SearchAssistants(ctx context.Context, q run.AssistantQuery) ([]run.Assistant, int, error) {
	if err := live(ctx); err != nil {
		return nil, 0, err
	}
	t := &s.assistants
	t.mu.Lock()
	type match struct {
		a   run.Assistant
		seq int64
	}
	var all []match
	for _, rec := range t.tenantAssistants(ctx, false) {
		a := rec.version(rec.latest)
		if (q.AgentID == "" || q.AgentID == a.AgentID) && (q.Name == "" || q.Name == a.Name) && metadataHolds(a.Metadata, q.Metadata) {
			all = append(all, match{a, rec.sequence})
		}
	}
	t.mu.Unlock()
	sort.Slice(all, func(i, j int) bool { return all[i].seq > all[j].seq })
	from := min(max(q.Offset, 0), len(all))
	to := min(from+q.AssistantPageLimit(), len(all))
	page := make([]run.Assistant, 0, to-from)
	for _, m := range all[from:to] {
		page = append(page, m.a)
	}
	return page, len(all), nil
}

// version decodes version v (1-based) with the assistant's times.
func (r *assistantRecord) version(v int) run.Assistant {
	var a run.Assistant
	_ = json.Unmarshal(r.versions[v-1], &a) // encoded by us
	a.CreatedAt, a.UpdatedAt = r.updated.CreatedAt, r.updated.UpdatedAt
	return a
}

// metadataHolds reports whether have holds every key of want with an
// equal value (compared as canonical JSON).
func metadataHolds(have, want map[string]any) bool {
	if len(want) == 0 {
		return true
	}
	w, err := encodeValues(want)
	if err != nil {
		return false
	}
	h, err := encodeValues(have)
	if err != nil {
		return false
	}
	for k, v := range w {
		if hv, ok := h[k]; !ok || string(hv) != string(v) {
			return false
		}
	}
	return true
}
