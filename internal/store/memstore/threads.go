package memstore

import (
	"bytes"
	"context"
	"encoding/json"
	"sort"
	"sync"

	"agentd/internal/errdefs"
	"agentd/internal/run"
	"agentd/internal/store"
)

// threadTable holds the thread records (store.Threads), apart from the
// runs: its own lock, taken without s.mu.
type threadTable struct {
	mu sync.Mutex
	// byTenant maps a tenant to its threads by id; each record's metadata
	// is kept as JSON, so that nothing mutable is shared with callers.
	byTenant map[string]map[string]threadRecord
}

type threadRecord struct {
	thread   run.Thread // Metadata nil: see meta
	meta     []byte
	sequence int64 // creation order, to sort newest first
}

var _ store.Threads = (*Store)(nil)

// CreateThread stores a new thread; an existing id is a Conflict.
func (s *Store) CreateThread(ctx context.Context, t run.Thread) (run.Thread, error) {
	if err := live(ctx); err != nil {
		return run.Thread{}, err
	}
	if t.ID == "" {
		return run.Thread{}, errdefs.Validationf("memstore: create thread: id is required")
	}
	meta, err := json.Marshal(t.Metadata)
	if err != nil {
		return run.Thread{}, errdefs.Validationf("memstore: create thread %q: metadata: %v", t.ID, err)
	}
	tt := &s.threads
	tt.mu.Lock()
	defer tt.mu.Unlock()
	tenant := run.TenantFrom(ctx)
	if tt.byTenant == nil {
		tt.byTenant = map[string]map[string]threadRecord{}
	}
	m := tt.byTenant[tenant]
	if m == nil {
		m = map[string]threadRecord{}
		tt.byTenant[tenant] = m
	}
	if _, ok := m[t.ID]; ok {
		return run.Thread{}, errdefs.Conflictf("thread %q already exists", t.ID)
	}
	at := store.StoredTime(now())
	rec := threadRecord{thread: run.Thread{ID: t.ID, CreatedAt: at, UpdatedAt: at}, meta: meta, sequence: int64(len(m)) + 1}
	for _, o := range m {
		rec.sequence = max(rec.sequence, o.sequence+1)
	}
	m[t.ID] = rec
	return rec.decode(), nil
}

// GetThread returns the thread of the context's tenant.
func (s *Store) GetThread(ctx context.Context, id string) (run.Thread, error) {
	if err := live(ctx); err != nil {
		return run.Thread{}, err
	}
	tt := &s.threads
	tt.mu.Lock()
	defer tt.mu.Unlock()
	rec, ok := tt.byTenant[run.TenantFrom(ctx)][id]
	if !ok {
		return run.Thread{}, errdefs.NotFoundf("thread %q not found", id)
	}
	return rec.decode(), nil
}

// UpdateThreadMetadata merges metadata into the thread's.
func (s *Store) UpdateThreadMetadata(ctx context.Context, id string, metadata map[string]any) (run.Thread, error) {
	if err := live(ctx); err != nil {
		return run.Thread{}, err
	}
	tt := &s.threads
	tt.mu.Lock()
	defer tt.mu.Unlock()
	m := tt.byTenant[run.TenantFrom(ctx)]
	rec, ok := m[id]
	if !ok {
		return run.Thread{}, errdefs.NotFoundf("thread %q not found", id)
	}
	merged := rec.decode().Metadata
	if merged == nil {
		merged = map[string]any{}
	}
	for k, v := range metadata {
		if v == nil {
			delete(merged, k)
			continue
		}
		merged[k] = v
	}
	meta, err := json.Marshal(merged)
	if err != nil {
		return run.Thread{}, errdefs.Validationf("memstore: update thread %q: metadata: %v", id, err)
	}
	rec.meta = meta
	rec.thread.UpdatedAt = store.StoredTime(now())
	m[id] = rec
	return rec.decode(), nil
}

// DeleteThread deletes the thread record.
func (s *Store) DeleteThread(ctx context.Context, id string) error {
	if err := live(ctx); err != nil {
		return err
	}
	tt := &s.threads
	tt.mu.Lock()
	defer tt.mu.Unlock()
	m := tt.byTenant[run.TenantFrom(ctx)]
	if _, ok := m[id]; !ok {
		return errdefs.NotFoundf("thread %q not found", id)
	}
	delete(m, id)
	return nil
}

// SearchThreads returns one page of the matching threads, newest first.
func (s *Store) SearchThreads(ctx context.Context, q run.ThreadQuery) ([]run.Thread, int, error) {
	if err := live(ctx); err != nil {
		return nil, 0, err
	}
	want, err := encodeValues(q.Metadata)
	if err != nil {
		return nil, 0, errdefs.Validationf("memstore: search threads: metadata: %v", err)
	}
	tt := &s.threads
	tt.mu.Lock()
	var matches []threadRecord
	for id, rec := range tt.byTenant[run.TenantFrom(ctx)] {
		if (len(q.IDs) == 0 || contains(q.IDs, id)) && rec.holds(want) {
			matches = append(matches, rec)
		}
	}
	tt.mu.Unlock()
	sort.Slice(matches, func(i, j int) bool { return matches[i].sequence > matches[j].sequence })
	total := len(matches)
	from := min(max(q.Offset, 0), total)
	to := min(from+q.ThreadPageLimit(), total)
	page := make([]run.Thread, 0, to-from)
	for _, rec := range matches[from:to] {
		page = append(page, rec.decode())
	}
	return page, total, nil
}

func (r threadRecord) decode() run.Thread {
	t := r.thread
	_ = json.Unmarshal(r.meta, &t.Metadata) // encoded by us
	return t
}

// holds reports whether the record's metadata has every key of want with
// an equal value (compared as canonical JSON).
func (r threadRecord) holds(want map[string][]byte) bool {
	if len(want) == 0 {
		return true
	}
	var have map[string]json.RawMessage
	_ = json.Unmarshal(r.meta, &have)
	for k, v := range want {
		h, ok := have[k]
		if !ok {
			return false
		}
		canon, err := canonical(h)
		if err != nil || !bytes.Equal(canon, v) {
			return false
		}
	}
	return true
}

// encodeValues returns each value of m as canonical JSON.
func encodeValues(m map[string]any) (map[string][]byte, error) {
	out := make(map[string][]byte, len(m))
	for k, v := range m {
		b, err := json.Marshal(v)
		if err != nil {
			return nil, err
		}
		if out[k], err = canonical(b); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// canonical re-encodes JSON with sorted keys (encoding/json sorts map keys).
func canonical(b []byte) ([]byte, error) {
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		return nil, err
	}
	return json.Marshal(v)
}

func contains(ids []string, id string) bool {
	for _, x := range ids {
		if x == id {
			return true
		}
	}
	return false
}
