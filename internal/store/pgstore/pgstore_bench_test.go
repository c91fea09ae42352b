package pgstore_test

import (
	"context"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"agentd/internal/store"
	"agentd/internal/store/pgstore"
)

// statementCounter counts the statements sent, batched ones included, and
// the batches of Apply (not the wake-ups').
type statementCounter struct{ n, batches atomic.Int64 }

func (c *statementCounter) TraceQueryStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceQueryStartData) context.Context {
	c.n.Add(1)
	return ctx
}
func (c *statementCounter) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}
func (c *statementCounter) TraceBatchStart(ctx context.Context, _ *pgx.Conn, d pgx.TraceBatchStartData) context.Context {
	if q := d.Batch.QueuedQueries; len(q) > 0 && !strings.Contains(q[len(q)-1].SQL, "pg_notify") {
		c.batches.Add(1)
	}
	return ctx
}
func (c *statementCounter) TraceBatchQuery(context.Context, *pgx.Conn, pgx.TraceBatchQueryData) {
	c.n.Add(1)
}
func (c *statementCounter) TraceBatchEnd(context.Context, *pgx.Conn, pgx.TraceBatchEndData) {}

// 100 runs append a 10-event batch each, concurrently, per iteration: the
// shape of the runtime's group commit under load.
func BenchmarkApplyConcurrentRuns(b *testing.B) {
	const runs, batch = 100, 10
	var counter statementCounter
	s := open(b, pgstore.WithTracer(&counter), pgstore.WithMaxConns(16))
	ctx := context.Background()
	runIDs := make([]string, runs)
	for i := range runIDs {
		runIDs[i] = "bench-run-" + string(rune('a'+i%26)) + string(rune('a'+i/26))
	}
	var next int64 = 1
	b.ReportAllocs()
	counter.n.Store(0)
	start := time.Now()
	for b.Loop() {
		var wg sync.WaitGroup
		for _, id := range runIDs {
			wg.Go(func() {
				if err := s.Apply(ctx, store.Change{Events: events(id, next, next+batch-1)}); err != nil {
					b.Errorf("Apply run %s %d..%d: %v", id, next, next+batch-1, err)
				}
			})
		}
		wg.Wait()
		next += batch
	}
	elapsed := time.Since(start)
	applies := float64(b.N * runs)
	b.ReportMetric(applies*batch/elapsed.Seconds(), "events/s")
	b.ReportMetric(applies/elapsed.Seconds(), "applies/s")
	b.ReportMetric(float64(counter.n.Load())/applies, "stmts/apply")
}

// Replay of a 10k-event run stored as the runtime writes it (frames of 10):
// the time to the first page a subscriber gets, and to the end of the log
// in pages of 1000.
func BenchmarkReadEvents10k(b *testing.B) {
	const total, batch = 10_000, 10
	s := open(b)
	ctx := context.Background()
	for from := int64(1); from <= total; from += batch {
		if err := s.Apply(ctx, store.Change{Events: events("r", from, from+batch-1)}); err != nil {
			b.Fatalf("seed %d..%d: %v", from, from+batch-1, err)
		}
	}
	b.Run("FirstPage", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			page, err := s.ReadEvents(ctx, "r", 0, 0)
			if err != nil || len(page.Events) != 100 {
				b.Fatalf("ReadEvents: %d events, %v", len(page.Events), err)
			}
		}
	})
	b.Run("ToTheEnd", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			var after int64
			for after < total {
				page, err := s.ReadEvents(ctx, "r", after, 1000)
				if err != nil || len(page.Events) == 0 {
					b.Fatalf("ReadEvents after %d: %d events, %v", after, len(page.Events), err)
				}
				after = page.Events[len(page.Events)-1].Seq
			}
		}
		b.ReportMetric(float64(total*b.N)/b.Elapsed().Seconds(), "events/s")
	})
}

// One renewal round of a replica that executes 10,000 runs: one statement
// (DESIGN §13: renewal of 10,000 runs per replica within one round, which
// is at most a second).
func BenchmarkRenewLeases10k(b *testing.B) {
	const runs = 10_000
	s := open(b)
	ctx := context.Background()
	leases := make([]store.Lease, runs)
	for i := range leases {
		l, err := s.AcquireLease(ctx, "renew-"+strconv.Itoa(i), "replica-a", time.Minute)
		if err != nil {
			b.Fatal(err)
		}
		leases[i] = l
	}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		renewed, err := s.RenewLeases(ctx, leases, time.Minute)
		if err != nil || len(renewed) != runs {
			b.Fatalf("RenewLeases: %d renewed, %v", len(renewed), err)
		}
	}
}
