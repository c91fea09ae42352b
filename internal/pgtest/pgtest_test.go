package pgtest

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/jackc/pgx/v5"
)

func TestMain(m *testing.M) { Main(m) }

func TestChooseSource(t *testing.T) {
	env := func(vars map[string]string) func(string) string {
		return func(k string) string { return vars[k] }
	}
	// files fakes the file system: lookPath finds exactly these paths, or
	// a bare name in /usr/bin when listed there.
	files := func(paths ...string) func(string) (string, error) {
		return func(name string) (string, error) {
			for _, p := range paths {
				if p == name || p == filepath.Join("/usr/bin", name) {
					return p, nil
				}
			}
			return "", errors.New("not found")
		}
	}
	glob := func(dirs ...string) func(string) ([]string, error) {
		return func(string) ([]string, error) { return dirs, nil }
	}
	tests := []struct {
		name     string
		getenv   func(string) string
		lookPath func(string) (string, error)
		glob     func(string) ([]string, error)
		want     source
	}{
		{"the URL wins", env(map[string]string{"TEST_DATABASE_URL": "postgres://x"}), files("/usr/bin/initdb", "/usr/bin/pg_ctl"), glob(),
			source{kind: fromURL, url: "postgres://x"}},
		{"binaries on PATH", env(nil), files("/usr/bin/initdb", "/usr/bin/pg_ctl"), glob(),
			source{kind: fromCluster, binDir: "/usr/bin"}},
		{"initdb without pg_ctl on PATH falls back to the versioned dirs", env(nil),
			files("/usr/bin/initdb", "/usr/lib/postgresql/15/bin/initdb", "/usr/lib/postgresql/15/bin/pg_ctl"),
			glob("/usr/lib/postgresql/15/bin"), source{kind: fromCluster, binDir: "/usr/lib/postgresql/15/bin"}},
		{"the newest versioned dir", env(nil),
			files("/usr/lib/postgresql/14/bin/initdb", "/usr/lib/postgresql/14/bin/pg_ctl", "/usr/lib/postgresql/16/bin/initdb", "/usr/lib/postgresql/16/bin/pg_ctl"),
			glob("/usr/lib/postgresql/14/bin", "/usr/lib/postgresql/16/bin"), source{kind: fromCluster, binDir: "/usr/lib/postgresql/16/bin"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := chooseSource(tt.getenv, tt.lookPath, tt.glob); got != tt.want {
				t.Fatalf("chooseSource: got %+v, want %+v", got, tt.want)
			}
		})
	}
	t.Run("nothing says why", func(t *testing.T) {
		got := chooseSource(env(nil), files(), glob())
		if got.kind != fromNothing || !strings.Contains(got.why, "TEST_DATABASE_URL") || !strings.Contains(got.why, "initdb") {
			t.Fatalf("chooseSource with nothing: got %+v, want fromNothing naming TEST_DATABASE_URL and initdb", got)
		}
	})
}

func TestRequired(t *testing.T) {
	for v, want := range map[string]bool{"1": true, "": false, "0": false, "true": false} {
		if got := required(func(string) string { return v }); got != want {
			t.Errorf("required with REQUIRE_DB=%q: got %v, want %v", v, got, want)
		}
	}
}

func TestTemplateNameFollowsTheMigrations(t *testing.T) {
	fsys := fstest.MapFS{
		"00001_a.sql": {Data: []byte("CREATE TABLE a ();")},
		"embed.go":    {Data: []byte("package migrations")},
	}
	first, err := templateName(fsys)
	if err != nil {
		t.Fatal(err)
	}
	if again, _ := templateName(fsys); again != first {
		t.Fatalf("templateName is not stable: %q then %q", first, again)
	}
	fsys["embed.go"] = &fstest.MapFile{Data: []byte("package migrations // edited")}
	if same, _ := templateName(fsys); same != first {
		t.Fatalf("a non-SQL file changed the template name: %q then %q", first, same)
	}
	fsys["00002_b.sql"] = &fstest.MapFile{Data: []byte("CREATE TABLE b ();")}
	if changed, _ := templateName(fsys); changed == first {
		t.Fatalf("a new migration kept the template name %q", first)
	}
	if !strings.HasPrefix(first, "agentd_tmpl_") || len(first) > 63 {
		t.Fatalf("template name %q: want agentd_tmpl_<hash> within PostgreSQL's 63 bytes", first)
	}
}

func TestWithDatabase(t *testing.T) {
	tests := []struct{ dsn, want string }{
		{"postgres://u:p@h:5432/postgres?sslmode=disable", "postgres://u:p@h:5432/x?sslmode=disable"},
		{"postgresql://h/", "postgresql://h/x"},
		{"host=h user=u dbname=postgres", "host=h user=u dbname=postgres dbname=x"},
	}
	for _, tt := range tests {
		got, err := withDatabase(tt.dsn, "x")
		if err != nil || got != tt.want {
			t.Errorf("withDatabase(%q, x): got %q, %v; want %q", tt.dsn, got, err, tt.want)
		}
	}
}

// Each DSN is a database of its own with the schema and no rows, also
// when the harness hands out a database a finished test used.
func TestDSNIsolatesTests(t *testing.T) {
	count := func(t *testing.T, dsn string) int {
		t.Helper()
		conn, err := pgx.Connect(t.Context(), dsn)
		if err != nil {
			t.Fatalf("connect: %v", err)
		}
		defer conn.Close(context.Background())
		var n int
		if err := conn.QueryRow(t.Context(), `SELECT count(*) FROM leases`).Scan(&n); err != nil {
			t.Fatalf("count leases (is the schema there?): %v", err)
		}
		return n
	}
	insert := func(t *testing.T, dsn string) {
		t.Helper()
		conn, err := pgx.Connect(t.Context(), dsn)
		if err != nil {
			t.Fatalf("connect: %v", err)
		}
		defer conn.Close(context.Background())
		if _, err := conn.Exec(t.Context(), `INSERT INTO leases (run_id, tenant, owner, generation, expires_at) VALUES ('r', 'default', 'o', 1, now())`); err != nil {
			t.Fatalf("insert: %v", err)
		}
	}
	for i := range 3 { // later rounds reuse the emptied databases
		t.Run("round", func(t *testing.T) {
			a, b := DSN(t), DSN(t)
			if a == b {
				t.Fatalf("round %d: two DSN calls returned the same database %q", i, a)
			}
			if n := count(t, a); n != 0 {
				t.Fatalf("round %d: a fresh database holds %d leases, want 0", i, n)
			}
			insert(t, a)
			if n := count(t, b); n != 0 {
				t.Fatalf("round %d: a row written in one database is visible in another", i)
			}
		})
	}
}

func TestEmptyDSNHasNoSchema(t *testing.T) {
	conn, err := pgx.Connect(t.Context(), EmptyDSN(t))
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	defer conn.Close(context.Background())
	var n int
	if err := conn.QueryRow(t.Context(), `SELECT count(*) FROM pg_tables WHERE schemaname = 'public'`).Scan(&n); err != nil || n != 0 {
		t.Fatalf("EmptyDSN: %d tables, %v; want none", n, err)
	}
}

// The throwaway cluster starts and stops from the local binaries. It is
// slow (initdb), so it runs only where it would be used: without
// TEST_DATABASE_URL, or when asked with PGTEST_CLUSTER=1.
func TestThrowawayCluster(t *testing.T) {
	if os.Getenv("TEST_DATABASE_URL") != "" && os.Getenv("PGTEST_CLUSTER") != "1" {
		t.Skip("TEST_DATABASE_URL is set; PGTEST_CLUSTER=1 tests the throwaway cluster anyway")
	}
	c := NewCluster(t)
	ping := func() error {
		conn, err := pgx.Connect(t.Context(), c.DSN())
		if err == nil {
			err = conn.Ping(t.Context())
			conn.Close(context.Background())
		}
		return err
	}
	if err := ping(); err != nil {
		t.Fatalf("the started cluster does not answer: %v", err)
	}
	if err := c.Stop(t.Context()); err != nil {
		t.Fatal(err)
	}
	if ping() == nil {
		t.Fatal("the stopped cluster still answers")
	}
	if err := c.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	if err := ping(); err != nil {
		t.Fatalf("the restarted cluster does not answer: %v", err)
	}
}
