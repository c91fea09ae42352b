package memstore

import (
	"context"
	"time"

	"agentd/internal/store"
)

// usageKey is a store.UsageKey as a comparable map key (a time.Time's
// location pointer would make equal instants different keys).
type usageKey struct {
	agent  string
	period time.Duration
	start  int64
}

func keyOf(k store.UsageKey) usageKey {
	return usageKey{agent: k.AgentID, period: k.Period, start: k.Start.UnixNano()}
}

// AddUsage adds tokens to the counter k of the context's tenant.
func (s *Store) AddUsage(ctx context.Context, k store.UsageKey, tokens int64) (int64, error) {
	if err := live(ctx); err != nil {
		return 0, err
	}
	if err := store.ValidateUsage(k, tokens); err != nil {
		return 0, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	t := s.writeTenant(ctx)
	if t.usage == nil {
		t.usage = map[usageKey]int64{}
	}
	t.usage[keyOf(k)] += tokens
	return t.usage[keyOf(k)], nil
}

// Usage returns the counter k of the context's tenant.
func (s *Store) Usage(ctx context.Context, k store.UsageKey) (int64, error) {
	if err := live(ctx); err != nil {
		return 0, err
	}
	if err := store.ValidateUsage(k, 0); err != nil {
		return 0, err
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	t := s.readTenant(ctx)
	if t == nil {
		return 0, nil
	}
	return t.usage[keyOf(k)], nil
}
