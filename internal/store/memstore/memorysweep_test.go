package memstore

import (
	"context"
	"strconv"
	"testing"
	"time"

	"agentd/internal/errdefs"
	"agentd/internal/run"
	"agentd/internal/store"
)

// TestMemoryPutsSweepExpired: within sweepEvery puts, expired items leave
// the table.
func TestMemoryPutsSweepExpired(t *testing.T) {
	s, ctx := New(), context.Background()
	put := func(key string, ttl time.Duration) {
		t.Helper()
		if _, err := s.PutMemory(ctx, store.MemoryRecord{Item: run.MemoryItem{Namespace: []string{"m"}, Key: key, Value: map[string]any{}, TTL: ttl}}); err != nil {
			t.Fatal(err)
		}
	}
	put("short", time.Millisecond)
	for deadline := time.Now().Add(10 * time.Second); ; {
		if _, err := s.GetMemory(ctx, []string{"m"}, "short", false); errdefs.IsNotFound(err) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the short item did not expire")
		}
		time.Sleep(time.Millisecond)
	}
	for i := range sweepEvery {
		put("k"+strconv.Itoa(i), 0)
	}
	s.memory.mu.Lock()
	defer s.memory.mu.Unlock()
	if _, ok := s.memory.byTenant[run.DefaultTenant][memoryKeyOf([]string{"m"}, "short")]; ok {
		t.Fatalf("the expired item is still held after %d puts", sweepEvery)
	}
}
