package main

import (
	"context"
	"log/slog"

	"agentd/internal/store"
	"agentd/internal/store/pgstore"
)

func openPostgres(ctx context.Context, dsn string, log *slog.Logger) (store.Store, error) {
	log.Info("opening PostgreSQL store")
	return pgstore.Open(ctx, dsn)
}
