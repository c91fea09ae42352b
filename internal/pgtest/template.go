package pgtest

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"agentd/internal/store/pgstore"
)

// templateLockID serialises template creation across test binaries that
// share a server (go test runs packages in parallel).
const templateLockID int64 = 0x61676e7474 // "agntt"

// templateName names the template database after the migrations it holds,
// so a changed migration gets a new template and an unchanged one is
// reused by every test binary.
func templateName(migrations fs.FS) (string, error) {
	entries, err := fs.ReadDir(migrations, ".")
	if err != nil {
		return "", fmt.Errorf("read migrations: %w", err)
	}
	h := sha256.New()
	for _, e := range entries { // ReadDir sorts by name
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".sql") {
			continue
		}
		b, err := fs.ReadFile(migrations, e.Name())
		if err != nil {
			return "", fmt.Errorf("read migration %s: %w", e.Name(), err)
		}
		fmt.Fprintf(h, "%s\x00%d\x00", e.Name(), len(b))
		h.Write(b)
	}
	return "agentd_tmpl_" + hex.EncodeToString(h.Sum(nil))[:16], nil
}

// ensureTemplate creates the migrated template database tmpl on the server
// of admin (a DSN of its maintenance database) unless it exists. Under an
// advisory lock, it builds the database under a scratch name and renames it
// when complete, so a crashed builder never leaves a half-migrated
// template behind. Connections to the template are then disallowed: a
// database cannot be cloned while anyone is connected to it.
func ensureTemplate(ctx context.Context, admin, tmpl string) error {
	conn, err := pgx.Connect(ctx, admin)
	if err != nil {
		return fmt.Errorf("connect to the test server: %w", err)
	}
	defer conn.Close(context.WithoutCancel(ctx))
	if _, err := conn.Exec(ctx, `SELECT pg_advisory_lock($1)`, templateLockID); err != nil {
		return fmt.Errorf("lock template creation: %w", err)
	}
	// Closing the connection (deferred above) releases the session lock.

	var exists bool
	if err := conn.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = $1)`, tmpl).Scan(&exists); err != nil {
		return fmt.Errorf("look for template %s: %w", tmpl, err)
	}
	if exists {
		return nil
	}
	scratch := tmpl + "_build"
	ident := pgx.Identifier{scratch}.Sanitize()
	if _, err := conn.Exec(ctx, `DROP DATABASE IF EXISTS `+ident+` WITH (FORCE)`); err != nil {
		return fmt.Errorf("drop the leftover %s: %w", scratch, err)
	}
	if _, err := conn.Exec(ctx, `CREATE DATABASE `+ident); err != nil {
		return fmt.Errorf("create %s: %w", scratch, err)
	}
	scratchDSN, err := withDatabase(admin, scratch)
	if err != nil {
		return err
	}
	if err := pgstore.Migrate(ctx, scratchDSN); err != nil {
		return fmt.Errorf("migrate template %s: %w", scratch, err)
	}
	// The migration's connections are closed, but their backends may
	// still be exiting: ALTER waits for them.
	rename := `ALTER DATABASE ` + ident + ` RENAME TO ` + pgx.Identifier{tmpl}.Sanitize()
	if err := execWhileBusy(ctx, conn, rename); err != nil {
		return fmt.Errorf("rename %s to %s: %w", scratch, tmpl, err)
	}
	if _, err := conn.Exec(ctx, `ALTER DATABASE `+pgx.Identifier{tmpl}.Sanitize()+` ALLOW_CONNECTIONS false`); err != nil {
		return fmt.Errorf("seal template %s: %w", tmpl, err)
	}
	return nil
}

// execWhileBusy runs sql, retrying while the database it names is still in
// use (SQLSTATE 55006) for up to ten seconds.
func execWhileBusy(ctx context.Context, conn *pgx.Conn, sql string) error {
	deadline := time.Now().Add(10 * time.Second)
	for {
		_, err := conn.Exec(ctx, sql)
		var pe *pgconn.PgError
		if err == nil || !errors.As(err, &pe) || pe.Code != "55006" || time.Now().After(deadline) {
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// createDatabase clones tmpl into a new database name.
func createDatabase(ctx context.Context, admin, name, tmpl string) error {
	conn, err := pgx.Connect(ctx, admin)
	if err != nil {
		return fmt.Errorf("connect to the test server: %w", err)
	}
	defer conn.Close(context.WithoutCancel(ctx))
	sql := `CREATE DATABASE ` + pgx.Identifier{name}.Sanitize() + ` TEMPLATE ` + pgx.Identifier{tmpl}.Sanitize()
	if err := execWhileBusy(ctx, conn, sql); err != nil {
		return fmt.Errorf("create %s from %s: %w", name, tmpl, err)
	}
	return nil
}

// dropDatabase drops name, disconnecting whatever still uses it.
func dropDatabase(ctx context.Context, admin, name string) error {
	conn, err := pgx.Connect(ctx, admin)
	if err != nil {
		return fmt.Errorf("connect to the test server: %w", err)
	}
	defer conn.Close(context.WithoutCancel(ctx))
	if _, err := conn.Exec(ctx, `DROP DATABASE IF EXISTS `+pgx.Identifier{name}.Sanitize()+` WITH (FORCE)`); err != nil {
		return fmt.Errorf("drop %s: %w", name, err)
	}
	return nil
}

// resetDatabase empties every data table of the database dsn names, after
// disconnecting whatever still uses it, which returns it to the state of
// the template it was cloned from (goose's version table is kept).
func resetDatabase(ctx context.Context, dsn string) error {
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		return fmt.Errorf("connect to reset: %w", err)
	}
	defer conn.Close(context.WithoutCancel(ctx))
	// A store a test forgot to close must not write into the next test.
	if _, err := conn.Exec(ctx, `SELECT pg_terminate_backend(pid) FROM pg_stat_activity
		WHERE datname = current_database() AND pid <> pg_backend_pid()`); err != nil {
		return fmt.Errorf("disconnect the previous test: %w", err)
	}
	rows, err := conn.Query(ctx, `SELECT tablename FROM pg_tables WHERE schemaname = 'public' AND tablename <> $1 ORDER BY 1`,
		pgstore.MigrationTable)
	if err != nil {
		return fmt.Errorf("list tables: %w", err)
	}
	tables, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return fmt.Errorf("list tables: %w", err)
	}
	// DELETE, not TRUNCATE: a test's few rows go in a millisecond, while
	// TRUNCATE creates and syncs new files for every table.
	b := &pgx.Batch{}
	for _, t := range tables {
		b.Queue(`DELETE FROM ` + pgx.Identifier{t}.Sanitize())
	}
	tx, err := conn.Begin(ctx)
	if err != nil {
		return fmt.Errorf("reset: %w", err)
	}
	if err := tx.SendBatch(ctx, b).Close(); err != nil {
		_ = tx.Rollback(ctx)
		return fmt.Errorf("empty tables: %w", err)
	}
	return tx.Commit(ctx)
}

// withDatabase returns dsn with its database replaced by name. It handles
// both URL DSNs and keyword/value DSNs (where a later dbname wins).
func withDatabase(dsn, name string) (string, error) {
	if strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://") {
		u, err := url.Parse(dsn)
		if err != nil {
			return "", fmt.Errorf("TEST_DATABASE_URL is not a valid URL: %w", err)
		}
		u.Path = "/" + name
		u.RawPath = ""
		return u.String(), nil
	}
	return strings.TrimSpace(dsn) + " dbname=" + name, nil
}
