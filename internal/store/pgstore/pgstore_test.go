package pgstore_test

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"

	"go.uber.org/goleak"

	"agentd/internal/errdefs"
	"agentd/internal/pgtest"
	"agentd/internal/store"
	"agentd/internal/store/pgstore"
	"agentd/internal/store/storetest"
	"agentd/migrations"
)

// TestMain stops the throwaway cluster (if one was started) and then
// checks for leaked goroutines: every pool and listener must be closed.
func TestMain(m *testing.M) {
	code := pgtest.Run(m)
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintln(os.Stderr, "goleak:", err)
			code = 1
		}
	}
	os.Exit(code)
}

// open returns a store on a fresh database, closed when t ends.
func open(t testing.TB, opts ...pgstore.Option) *pgstore.Store {
	t.Helper()
	return openDSN(t, pgtest.DSN(t), opts...)
}

func openDSN(t testing.TB, dsn string, opts ...pgstore.Option) *pgstore.Store {
	t.Helper()
	s, err := pgstore.Open(context.Background(), dsn, opts...)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func TestContract(t *testing.T) {
	storetest.RunSuite(t, func(t *testing.T) store.Store { return open(t) })
}

func TestOpenErrorsNameTheCause(t *testing.T) {
	pgtest.DSN(t) // skips, loudly, without a server
	tests := []struct {
		name      string
		dsn       string
		class     errdefs.Class
		mentions  string
		mustNotBe string
	}{
		{"bad DSN", "postgres://u:s3cret@host:notaport/db", errdefs.ClassValidation, "invalid database DSN", "s3cret"},
		{"unreachable server", "postgres://postgres@127.0.0.1:1/agentd?sslmode=disable&connect_timeout=5", errdefs.ClassNotAvailable, "127.0.0.1:1", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := pgstore.Open(t.Context(), tt.dsn)
			if err == nil {
				s.Close()
				t.Fatalf("Open(%q): got a store, want an error", tt.dsn)
			}
			if got := errdefs.ClassOf(err); got != tt.class {
				t.Errorf("Open(%q): class %s, want %s (error %q)", tt.dsn, got, tt.class, err)
			}
			if !strings.Contains(err.Error(), tt.mentions) {
				t.Errorf("Open(%q): error %q does not mention %q", tt.dsn, err, tt.mentions)
			}
			if tt.mustNotBe != "" && strings.Contains(err.Error(), tt.mustNotBe) {
				t.Errorf("Open(%q): error %q reveals %q", tt.dsn, err, tt.mustNotBe)
			}
		})
	}
}

// Replicas starting together on an empty database: the advisory lock
// lets one migrate while the others wait, and all of them open.
// latestMigration is the version of the newest file in migrations/
// (NNNNN_what.sql).
var latestMigration = func() int64 {
	entries, _ := fs.Glob(migrations.FS, "*.sql")
	var latest int64
	for _, name := range entries {
		v, err := strconv.ParseInt(strings.SplitN(name, "_", 2)[0], 10, 64)
		if err == nil && v > latest {
			latest = v
		}
	}
	return latest
}()

func TestOpenRacingMigrations(t *testing.T) {
	dsn := pgtest.EmptyDSN(t)
	const replicas = 3
	stores := make([]*pgstore.Store, replicas)
	errs := make([]error, replicas)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range replicas {
		wg.Go(func() {
			<-start
			stores[i], errs[i] = pgstore.Open(t.Context(), dsn)
		})
	}
	close(start)
	wg.Wait()
	for i, s := range stores {
		if s != nil {
			defer s.Close()
		}
		if errs[i] != nil {
			t.Fatalf("Open #%d of %d racing replicas: %v", i, replicas, errs[i])
		}
	}
	v, err := stores[0].SchemaVersion(t.Context())
	if err != nil || v != latestMigration {
		t.Fatalf("SchemaVersion after racing migrations: got %d, %v; want %d, nil", v, err, latestMigration)
	}
	// Every replica works on the one schema.
	for i, s := range stores {
		runID := fmt.Sprintf("run-%d", i)
		if err := s.Apply(t.Context(), store.Change{Events: events(runID, 1, 1)}); err != nil {
			t.Fatalf("replica %d: Apply: %v", i, err)
		}
	}
}

func TestPingAfterCloseFails(t *testing.T) {
	s := open(t)
	if err := s.Ping(t.Context()); err != nil {
		t.Fatalf("Ping: %v", err)
	}
	s.Close()
	err := s.Ping(t.Context())
	if !errdefs.IsNotAvailable(err) {
		t.Fatalf("Ping after Close: got %v, want a NotAvailable error", err)
	}
	if errors.Is(err, pgstore.ErrCommitUnknown) {
		t.Fatalf("Ping after Close: %v claims an unknown commit", err)
	}
}
