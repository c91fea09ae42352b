package pgstore

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/pressly/goose/v3"
	"github.com/pressly/goose/v3/lock"

	"agentd/internal/errdefs"
	"agentd/migrations"
)

// migrationLockID is the advisory lock held while migrating. It differs from
// goose's default so another goose-managed schema in the same database does
// not serialise with agentd's.
const migrationLockID int64 = 0x61676e7464 // "agntd"

// MigrationTable is the table in which goose records the applied
// migration versions; every other table of the schema holds data.
const MigrationTable = "agentd_schema_migrations"

// migrate applies the pending migrations under a session-level advisory
// lock: of replicas starting together one migrates, the others wait for the
// lock (polling every second for up to five minutes) and find nothing left.
func migrate(ctx context.Context, pool *pgxpool.Pool) (err error) {
	locker, err := lock.NewPostgresSessionLocker(lock.WithLockID(migrationLockID), lock.WithLockTimeout(1, 300))
	if err != nil {
		return errdefs.Internalf("pgstore: migration locker: %w", err)
	}
	db := stdlib.OpenDBFromPool(pool)
	p, err := goose.NewProvider(goose.DialectPostgres, db, migrations.FS,
		goose.WithSessionLocker(locker),
		goose.WithTableName(MigrationTable),
		goose.WithDisableGlobalRegistry(true),
	)
	if err != nil {
		db.Close()
		return errdefs.Internalf("pgstore: load migrations: %w", err)
	}
	defer func() { err = errors.Join(err, p.Close()) }()
	if _, err := p.Up(ctx); err != nil {
		var pe *goose.PartialError
		if errors.As(err, &pe) && pe.Failed != nil && pe.Failed.Source != nil {
			return errdefs.Internalf("pgstore: migration %d (%s) failed: %w",
				pe.Failed.Source.Version, pe.Failed.Source.Path, pe.Err)
		}
		return errdefs.Internalf("pgstore: migrate: %w", err)
	}
	return nil
}

// SchemaVersion returns the highest migration version applied to the store's
// database.
func (s *Store) SchemaVersion(ctx context.Context) (int64, error) {
	var v int64
	err := s.pool.QueryRow(ctx,
		fmt.Sprintf(`SELECT coalesce(max(version_id), 0) FROM %s WHERE is_applied`, MigrationTable)).Scan(&v)
	if err != nil {
		return 0, s.classify("schema version", err)
	}
	return v, nil
}
