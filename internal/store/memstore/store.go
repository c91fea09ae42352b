package memstore

import (
	"context"
	"fmt"
	"sync"
	"time"

	"agentd/internal/engine"
	"agentd/internal/store"
)

// Store is an in-memory store.Store, safe for concurrent use. The zero
// value is not usable; call New.
type Store struct {
	mu      sync.RWMutex
	tenants map[string]*tenant
	// leases are global: recovery scans every tenant's expired leases.
	leases map[string]*leaseRecord
	// retain is the retention (WithRetention); finished[finishedHead:]
	// queues the finished runs, oldest first, for eviction.
	retain       int
	finished     []finishedRun
	finishedHead int
}

// tenant holds one tenant's records.
type tenant struct {
	tasks       map[string]*store.Task
	allTasks    taskIndex
	byContext   map[string]*taskIndex
	transcripts map[string]*transcript
	logs        map[string]*eventLog
	keys        map[store.IdempotencyKey]string
	keysByTask  map[string][]store.IdempotencyKey
	checkpoints map[string][]engine.Checkpoint
	push        map[string]map[string]store.PushConfig
}

var _ store.Store = (*Store)(nil)

// New returns an empty store that keeps DefaultRetention finished runs,
// or as the options say.
func New(opts ...Option) *Store {
	s := &Store{tenants: map[string]*tenant{}, leases: map[string]*leaseRecord{}, retain: DefaultRetention}
	for _, o := range opts {
		o(s)
	}
	return s
}

// Ping reports whether the store is usable; an in-memory store always is,
// unless ctx is done.
func (s *Store) Ping(ctx context.Context) error { return live(ctx) }

// Close releases nothing: the store holds no external resources. It is
// idempotent, and the store stays usable after it.
func (s *Store) Close() error { return nil }

// readTenant returns the tenant of ctx for reading, or nil if it has never
// written anything. Callers hold s.mu.
func (s *Store) readTenant(ctx context.Context) *tenant {
	return s.tenants[store.TenantFrom(ctx)]
}

// writeTenant returns the tenant of ctx, creating it. Callers hold s.mu for
// writing.
func (s *Store) writeTenant(ctx context.Context) *tenant {
	name := store.TenantFrom(ctx)
	t := s.tenants[name]
	if t == nil {
		t = &tenant{
			tasks:       map[string]*store.Task{},
			byContext:   map[string]*taskIndex{},
			transcripts: map[string]*transcript{},
			logs:        map[string]*eventLog{},
			keys:        map[store.IdempotencyKey]string{},
			keysByTask:  map[string][]store.IdempotencyKey{},
			checkpoints: map[string][]engine.Checkpoint{},
			push:        map[string]map[string]store.PushConfig{},
		}
		s.tenants[name] = t
	}
	return t
}

// now is the store's clock at PostgreSQL's precision.
func now() time.Time { return time.Now().UTC().Truncate(time.Microsecond) }

// live fails once ctx is done, as a database call would.
func live(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("memstore: %w", err)
	}
	return nil
}
