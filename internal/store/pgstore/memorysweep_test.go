package pgstore_test

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"agentd/internal/errdefs"
	"agentd/internal/pgtest"
	"agentd/internal/run"
	"agentd/internal/store"
)

// TestMemoryPutsSweepExpired: a put deletes its tenant's expired rows (not
// another tenant's, not the live ones), so that they do not pile up.
func TestMemoryPutsSweepExpired(t *testing.T) {
	dsn := pgtest.DSN(t)
	s := openDSN(t, dsn)
	ctx, other := context.Background(), run.WithTenant(context.Background(), "other")
	put := func(ctx context.Context, key string, ttl time.Duration) {
		t.Helper()
		if _, err := s.PutMemory(ctx, store.MemoryRecord{Item: run.MemoryItem{Namespace: []string{"m"}, Key: key, Value: map[string]any{}, TTL: ttl}}); err != nil {
			t.Fatal(err)
		}
	}
	put(ctx, "short", time.Millisecond)
	put(other, "short", time.Millisecond)
	put(ctx, "long", time.Hour)
	for deadline := time.Now().Add(10 * time.Second); ; {
		_, err := s.GetMemory(ctx, []string{"m"}, "short", false)
		if errdefs.IsNotFound(err) {
			break // expired, by the store's clock
		}
		if time.Now().After(deadline) {
			t.Fatalf("the short item did not expire: %v", err)
		}
		time.Sleep(time.Millisecond)
	}
	put(ctx, "next", 0)
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	rows, err := conn.Query(ctx, `SELECT tenant || '/' || key FROM memory_items ORDER BY 1`)
	if err != nil {
		t.Fatal(err)
	}
	got, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"default/long", "default/next", "other/short"}
	if len(got) != len(want) || got[0] != want[0] || got[1] != want[1] || got[2] != want[2] {
		t.Fatalf("rows after the put = %v, want %v", got, want)
	}
}
