package main

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"agentd/internal/runtime"
	"agentd/internal/store"
	"agentd/internal/store/pgstore"
)

// pgFlushWindow coalesces live events into at most one write per window
// (DESIGN §13: at most one insert batch per run per 25 ms).
const pgFlushWindow = 25 * time.Millisecond

// memFlushWindow is the in-memory store's: its events are shown before they
// are written (a volatile store), so the window only batches the writes.
const memFlushWindow = 50 * time.Millisecond

// openPostgres opens the PostgreSQL store; with vectorExtension its memory
// searches use the database's vector extension where it has one. The log
// says which path they take, and why (memory.vector_extension).
func openPostgres(ctx context.Context, dsn string, vectorExtension bool, log *slog.Logger) (store.Store, error) {
	log.Info("opening PostgreSQL store")
	var opts []pgstore.Option
	if !vectorExtension {
		opts = append(opts, pgstore.WithoutVectorExtension())
	}
	st, err := pgstore.Open(ctx, dsn, opts...)
	if err != nil {
		return nil, err
	}
	inSQL, why := st.VectorSearch()
	if !vectorExtension {
		why = "memory.vector_extension is off"
	}
	ranked := "in agentd"
	if inSQL {
		ranked = "by PostgreSQL's vector extension"
	}
	log.Info("memory vector searches ranked "+ranked, "why", why)
	return st, nil
}

// flushWindow is the runtime's event write window for st.
func flushWindow(st store.Store) time.Duration {
	if _, ok := st.(*pgstore.Store); ok {
		return pgFlushWindow
	}
	return memFlushWindow
}

// listenForWakeups relays other replicas' event notifications to the
// runtime until ctx ends; stop waits for it. A memstore needs none.
func listenForWakeups(ctx context.Context, st store.Store, rt *runtime.Runtime, log *slog.Logger) (stop func()) {
	pg, ok := st.(*pgstore.Store)
	if !ok {
		return func() {}
	}
	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		if err := pg.Listen(ctx, func(runID string, _ int64) { rt.Wake(runID) }); err != nil {
			log.Warn("event notifications stopped; replicas fall back to polling", "err", err)
		}
	}()
	return func() {
		cancel()
		wg.Wait()
	}
}
