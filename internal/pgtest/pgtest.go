package pgtest

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"agentd/migrations"
)

// setupTimeout bounds starting a cluster and building the template.
const setupTimeout = 2 * time.Minute

// harness is the test binary's database server and template. It is the
// package's only state, and deliberately package-level: it lives exactly as
// long as the test binary, which Main brackets.
type harness struct {
	mu       sync.Mutex
	inMain   bool
	prepared bool
	admin    string // DSN of the server's maintenance database
	template string
	cluster  *Cluster // nil unless this binary started one
	idle     []string // emptied test databases ready for reuse
	skip     string   // why tests skip, when no server can be had
	err      error    // a setup failure, reported to every test
	warned   sync.Once
}

var shared harness

// Main runs the tests of m and exits; call it from TestMain. It stops the
// throwaway cluster, if the tests started one, after the last test.
func Main(m *testing.M) { os.Exit(Run(m)) }

// Run is Main without the exit, for a TestMain that checks more after the
// tests (goroutine leaks): it returns the exit code.
func Run(m *testing.M) int {
	shared.mu.Lock()
	shared.inMain = true
	shared.mu.Unlock()
	code := m.Run()
	if err := shared.shutdown(); err != nil {
		fmt.Fprintln(os.Stderr, "pgtest:", err)
		if code == 0 {
			code = 1
		}
	}
	return code
}

// DSN returns the DSN of a database for t alone, holding the migrated
// schema and no data: a clone of a migrated template database, or the
// database of a finished test of this binary, emptied. When t ends, the
// database is emptied for the next test (every connection to it is closed
// first); Main drops them all when the tests are over.
//
// The server is TEST_DATABASE_URL's when set; else a throwaway cluster
// started from the local PostgreSQL binaries (the test binary must use
// Main); else t is skipped, loudly and with the reason — unless
// REQUIRE_DB=1, which turns the skip into a failure.
func DSN(t testing.TB) string {
	t.Helper()
	admin := shared.server(t)
	ctx, cancel := context.WithTimeout(context.Background(), setupTimeout)
	defer cancel()
	name, err := shared.take(ctx)
	if err != nil {
		t.Fatalf("pgtest: %v", err)
	}
	dsn, err := withDatabase(admin, name)
	if err != nil {
		t.Fatalf("pgtest: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := shared.give(ctx, name, dsn); err != nil {
			t.Errorf("pgtest: %v", err)
		}
	})
	return dsn
}

// EmptyDSN returns the DSN of a new database for t without agentd's schema
// (a copy of template1), for tests of migration itself; it is dropped when
// t ends. Its server is DSN's, with the same skip rules.
func EmptyDSN(t testing.TB) string {
	t.Helper()
	admin := shared.server(t)
	ctx, cancel := context.WithTimeout(context.Background(), setupTimeout)
	defer cancel()
	name := newDatabaseName()
	if err := createDatabase(ctx, admin, name, "template1"); err != nil {
		t.Fatalf("pgtest: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := dropDatabase(ctx, admin, name); err != nil {
			t.Errorf("pgtest: %v", err)
		}
	})
	dsn, err := withDatabase(admin, name)
	if err != nil {
		t.Fatalf("pgtest: %v", err)
	}
	return dsn
}

// server returns the admin DSN of the test server, or ends t: skipped when
// there is no server (failed under REQUIRE_DB=1), failed when setting it up
// went wrong.
func (h *harness) server(t testing.TB) string {
	t.Helper()
	admin, skip, err := h.prepare()
	switch {
	case skip != "" && required(os.Getenv):
		t.Fatalf("pgtest: REQUIRE_DB=1 but no database is available: %s", skip)
	case skip != "":
		h.warned.Do(func() {
			fmt.Fprintf(os.Stderr, "pgtest: SKIPPING PostgreSQL tests: %s. Set TEST_DATABASE_URL (REQUIRE_DB=1 makes this a failure).\n", skip)
		})
		t.Skipf("pgtest: SKIPPING: %s. Set TEST_DATABASE_URL (REQUIRE_DB=1 makes this a failure)", skip)
	case err != nil:
		t.Fatalf("pgtest: %v", err)
	}
	return admin
}

func newDatabaseName() string { return "agentd_test_" + strings.ToLower(rand.Text()) }

// take returns an idle emptied database, or clones the template into a new
// one. Cloning costs about half a second on a server that syncs to disk
// (the clone is WAL-logged), emptying a used database a millisecond: that
// is why databases are recycled within a test binary.
func (h *harness) take(ctx context.Context) (string, error) {
	h.mu.Lock()
	if n := len(h.idle); n > 0 {
		name := h.idle[n-1]
		h.idle = h.idle[:n-1]
		h.mu.Unlock()
		return name, nil
	}
	admin, tmpl := h.admin, h.template
	h.mu.Unlock()
	name := newDatabaseName()
	return name, createDatabase(ctx, admin, name, tmpl)
}

// give takes a test's database back: emptied for the next test, or dropped
// if it cannot be emptied.
func (h *harness) give(ctx context.Context, name, dsn string) error {
	if err := resetDatabase(ctx, dsn); err != nil {
		return errors.Join(err, dropDatabase(ctx, h.admin, name))
	}
	h.mu.Lock()
	h.idle = append(h.idle, name)
	h.mu.Unlock()
	return nil
}

// prepare finds the server and builds the template, once per binary; a
// failure is remembered and reported to every later caller.
func (h *harness) prepare() (admin, skip string, err error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if !h.prepared {
		h.prepared = true
		h.err = h.setup()
	}
	return h.admin, h.skip, h.err
}

func (h *harness) setup() error {
	ctx, cancel := context.WithTimeout(context.Background(), setupTimeout)
	defer cancel()
	src := systemSource()
	switch src.kind {
	case fromNothing:
		h.skip = src.why
		return nil
	case fromURL:
		h.admin = src.url
	case fromCluster:
		if !h.inMain {
			return errors.New("a throwaway cluster is needed (TEST_DATABASE_URL is not set) but TestMain does not call pgtest.Main, which stops it")
		}
		c, err := StartCluster(ctx, src.binDir)
		if err != nil {
			h.skip = fmt.Sprintf("TEST_DATABASE_URL is not set and a throwaway cluster from %s did not start: %v", src.binDir, err)
			return nil
		}
		h.cluster, h.admin = c, c.DSN()
	}
	tmpl, err := templateName(migrations.FS)
	if err != nil {
		return err
	}
	if err := ensureTemplate(ctx, h.admin, tmpl); err != nil {
		return err
	}
	h.template = tmpl
	return nil
}

// shutdown drops the idle databases and stops the cluster this binary
// started, if any.
func (h *harness) shutdown() error {
	h.mu.Lock()
	defer h.mu.Unlock()
	var errs []error
	if len(h.idle) > 0 {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		for _, name := range h.idle {
			errs = append(errs, dropDatabase(ctx, h.admin, name))
		}
		h.idle = nil
	}
	if h.cluster != nil {
		if err := h.cluster.Close(); err != nil {
			errs = append(errs, fmt.Errorf("stop the throwaway cluster: %w", err))
		}
		h.cluster = nil
	}
	return errors.Join(errs...)
}
