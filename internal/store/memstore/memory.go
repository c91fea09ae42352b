package memstore

import (
	"context"
	"encoding/json"
	"slices"
	"sync"
	"time"

	"agentd/internal/errdefs"
	"agentd/internal/run"
	"agentd/internal/store"
)

// memoryTable holds the long-term memory items (store.Memory), apart from
// the runs: its own lock, taken without s.mu.
type memoryTable struct {
	mu sync.Mutex
	// byTenant maps a tenant to its items by namespace and key.
	byTenant map[string]map[memoryKey]*memoryRecord
	// puts counts the puts: every sweepEvery-th sweeps its tenant's
	// expired items.
	puts int
}

// sweepEvery is how often a put sweeps its tenant's expired items (a scan
// of the tenant's items, so not at every put).
const sweepEvery = 128

// memoryKey names an item: its namespace encoded as JSON (unambiguous
// whatever the labels hold) and its key.
type memoryKey struct{ ns, key string }

// memoryRecord is a stored item; its value is kept as JSON, so that
// nothing mutable is shared with callers.
type memoryRecord struct {
	namespace  []string
	key        string
	value      []byte
	created    time.Time
	updated    time.Time
	ttl        time.Duration
	expires    time.Time
	words      map[string]bool // the text's words (memorytext.go)
	vector     []float32
	valueCache map[string]any // decoded once, for filters; never handed out
}

var _ store.Memory = (*Store)(nil)

func memoryKeyOf(namespace []string, key string) memoryKey {
	b, _ := json.Marshal(namespace) // a []string always encodes
	return memoryKey{string(b), key}
}

func (r *memoryRecord) live(at time.Time) bool { return r.expires.IsZero() || r.expires.After(at) }

// refresh restarts the record's TTL at at.
func (r *memoryRecord) refresh(at time.Time) {
	if r.ttl > 0 {
		r.expires = store.StoredTime(at.Add(r.ttl))
	}
}

func (r *memoryRecord) item() run.MemoryItem {
	var v map[string]any
	_ = json.Unmarshal(r.value, &v) // encoded by PutMemory
	return run.MemoryItem{
		Namespace: slices.Clone(r.namespace), Key: r.key, Value: v,
		CreatedAt: r.created, UpdatedAt: r.updated, TTL: r.ttl, ExpiresAt: r.expires,
	}
}

// tenantItems returns the tenant's items, creating the map when create.
func (t *memoryTable) tenantItems(ctx context.Context, create bool) map[memoryKey]*memoryRecord {
	tenant := run.TenantFrom(ctx)
	m := t.byTenant[tenant]
	if m == nil && create {
		if t.byTenant == nil {
			t.byTenant = map[string]map[memoryKey]*memoryRecord{}
		}
		m = map[memoryKey]*memoryRecord{}
		t.byTenant[tenant] = m
	}
	return m
}

// PutMemory stores the item whole; a live item keeps its created_at.
func (s *Store) PutMemory(ctx context.Context, rec store.MemoryRecord) (run.MemoryItem, error) {
	if err := live(ctx); err != nil {
		return run.MemoryItem{}, err
	}
	it := rec.Item
	value, err := json.Marshal(it.Value)
	if err != nil {
		return run.MemoryItem{}, errdefs.Validationf("memstore: put memory %q: value: %v", it.Key, err)
	}
	var decoded map[string]any
	_ = json.Unmarshal(value, &decoded)
	at := now()
	t := &s.memory
	t.mu.Lock()
	defer t.mu.Unlock()
	m := t.tenantItems(ctx, true)
	k := memoryKeyOf(it.Namespace, it.Key)
	r := &memoryRecord{
		namespace: slices.Clone(it.Namespace), key: it.Key, value: value, created: at, updated: at,
		ttl: it.TTL, words: wordsOf(rec.Text), vector: slices.Clone(rec.Vector), valueCache: decoded,
	}
	if old, ok := m[k]; ok && old.live(at) {
		r.created = old.created
	}
	if t.puts++; t.puts%sweepEvery == 0 {
		for k, r := range m {
			if !r.live(at) {
				delete(m, k)
			}
		}
	}
	r.refresh(at)
	m[k] = r
	return r.item(), nil
}

// GetMemory returns the live item, refreshing its TTL when refresh.
func (s *Store) GetMemory(ctx context.Context, namespace []string, key string, refresh bool) (run.MemoryItem, error) {
	if err := live(ctx); err != nil {
		return run.MemoryItem{}, err
	}
	t := &s.memory
	t.mu.Lock()
	defer t.mu.Unlock()
	at := now()
	r, ok := t.tenantItems(ctx, false)[memoryKeyOf(namespace, key)]
	if !ok || !r.live(at) {
		return run.MemoryItem{}, errdefs.NotFoundf("memory item %q not found in namespace %q", key, namespace)
	}
	if refresh {
		r.refresh(at)
	}
	return r.item(), nil
}

// DeleteMemory deletes the live item.
func (s *Store) DeleteMemory(ctx context.Context, namespace []string, key string) error {
	if err := live(ctx); err != nil {
		return err
	}
	t := &s.memory
	t.mu.Lock()
	defer t.mu.Unlock()
	m := t.tenantItems(ctx, false)
	k := memoryKeyOf(namespace, key)
	r, ok := m[k]
	if !ok || !r.live(now()) {
		return errdefs.NotFoundf("memory item %q not found in namespace %q", key, namespace)
	}
	delete(m, k)
	return nil
}

// SearchMemory returns one page of the matching items, in the order
// store.MemoryQuery describes.
func (s *Store) SearchMemory(ctx context.Context, q store.MemoryQuery) ([]run.MemoryItem, error) {
	if err := live(ctx); err != nil {
		return nil, err
	}
	t := &s.memory
	t.mu.Lock()
	defer t.mu.Unlock()
	at := now()
	hits := matchMemory(t.tenantItems(ctx, false), q, at)
	hits = page(hits, q.Offset, q.PageLimit())
	out := make([]run.MemoryItem, len(hits))
	for i, h := range hits {
		if q.RefreshTTL {
			h.r.refresh(at)
		}
		out[i] = h.r.item()
		if h.ranked {
			out[i].Score = &h.score
		}
	}
	return out, nil
}

// ListMemoryNamespaces lists the namespaces of live items, cut at
// MaxDepth, in label order.
func (s *Store) ListMemoryNamespaces(ctx context.Context, q run.NamespaceQuery) ([][]string, error) {
	if err := live(ctx); err != nil {
		return nil, err
	}
	t := &s.memory
	t.mu.Lock()
	defer t.mu.Unlock()
	at := now()
	seen := map[string]bool{}
	var out [][]string
	for _, r := range t.tenantItems(ctx, false) {
		ns := r.namespace
		if !r.live(at) || !hasPrefix(ns, q.Prefix) || !hasSuffix(ns, q.Suffix) {
			continue
		}
		if q.MaxDepth > 0 && len(ns) > q.MaxDepth {
			ns = ns[:q.MaxDepth]
		}
		if k := memoryKeyOf(ns, "").ns; !seen[k] {
			seen[k] = true
			out = append(out, slices.Clone(ns))
		}
	}
	slices.SortFunc(out, slices.Compare)
	return page(out, q.Offset, q.PageLimit()), nil
}

func page[T any](s []T, offset, limit int) []T {
	if offset >= len(s) {
		return nil
	}
	s = s[max(offset, 0):]
	return s[:min(limit, len(s))]
}

func hasPrefix(ns, prefix []string) bool {
	return len(ns) >= len(prefix) && slices.Equal(ns[:len(prefix)], prefix)
}

func hasSuffix(ns, suffix []string) bool {
	return len(ns) >= len(suffix) && slices.Equal(ns[len(ns)-len(suffix):], suffix)
}
