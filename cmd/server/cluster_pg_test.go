package main

// A throwaway PostgreSQL cluster that one test owns and may restart: the
// process-level tests need a server they can take down, which pgtest's
// shared server (TEST_DATABASE_URL) must never be. It follows pgtest's
// recipe — initdb and pg_ctl from PATH or /usr/lib/postgresql/*/bin, run as
// the postgres account when the tests run as root, 127.0.0.1 on a free
// port, no fsync — and skips only as pgtest does: loudly, and never under
// REQUIRE_DB=1.

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"
)

// ownCluster is a PostgreSQL cluster in a temporary directory.
type ownCluster struct {
	binDir string
	dir    string
	data   string
	port   int
	asUser string // PostgreSQL refuses to run as root
	opts   string
}

// startOwnCluster initialises and starts a cluster for t; t's cleanup stops
// it and removes its directory. extra is appended to the server options
// (-c name=value …).
func startOwnCluster(t testing.TB, extra ...string) *ownCluster {
	t.Helper()
	binDir, why := clusterBinDir()
	if binDir == "" {
		if os.Getenv("REQUIRE_DB") == "1" {
			t.Fatalf("REQUIRE_DB=1 but no PostgreSQL cluster can be started: %s", why)
		}
		t.Skipf("SKIPPING: %s. Install PostgreSQL (REQUIRE_DB=1 makes this a failure)", why)
	}
	c := &ownCluster{binDir: binDir}
	if os.Geteuid() == 0 {
		c.asUser = "postgres"
	}
	dir, err := os.MkdirTemp("", "agentd-replicas-")
	if err != nil {
		t.Fatal(err)
	}
	c.dir, c.data = dir, filepath.Join(dir, "data")
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if _, err := os.Stat(filepath.Join(c.data, "postmaster.pid")); err == nil {
			if err := c.pgctl(ctx, "-m", "immediate", "-w", "stop"); err != nil {
				t.Errorf("stop the cluster: %v", err)
			}
		}
		if err := os.RemoveAll(c.dir); err != nil {
			t.Errorf("remove the cluster: %v", err)
		}
	})
	if c.asUser != "" {
		if err := chownDir(dir, c.asUser); err != nil {
			t.Fatal(err)
		}
	}
	if c.port, err = freePort(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := c.run(ctx, "initdb", "-D", c.data, "-U", "postgres", "-A", "trust", "-E", "UTF8", "--no-sync"); err != nil {
		t.Fatal(err)
	}
	c.opts = fmt.Sprintf("-p %d -k %s -c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=200",
		c.port, c.dir)
	for _, e := range extra {
		c.opts += " " + e
	}
	if err := c.start(ctx); err != nil {
		t.Fatal(err)
	}
	return c
}

// dsn is the cluster's postgres database; the server migrates it at start.
func (c *ownCluster) dsn() string {
	return fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable", c.port)
}

// stop shuts the server down the way an operator does (fast: sessions are
// terminated, no waiting for clients); start starts it again.
func (c *ownCluster) stop(ctx context.Context) error { return c.pgctl(ctx, "-m", "fast", "stop") }

func (c *ownCluster) start(ctx context.Context) error {
	return c.pgctl(ctx, "-l", filepath.Join(c.dir, "log"), "-o", c.opts, "start")
}

func (c *ownCluster) pgctl(ctx context.Context, args ...string) error {
	return c.run(ctx, "pg_ctl", append([]string{"-D", c.data, "-w", "-t", "60"}, args...)...)
}

func (c *ownCluster) run(ctx context.Context, name string, args ...string) error {
	bin := filepath.Join(c.binDir, name)
	cmd := exec.CommandContext(ctx, bin, args...)
	if c.asUser != "" {
		cmd = exec.CommandContext(ctx, "runuser", append([]string{"-u", c.asUser, "--", bin}, args...)...)
	}
	cmd.Dir = c.dir
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		log, _ := os.ReadFile(filepath.Join(c.dir, "log"))
		return fmt.Errorf("%s: %w\n%s\nserver log:\n%s", cmd, err, out.Bytes(), log)
	}
	return nil
}

// clusterBinDir finds a directory holding initdb and pg_ctl, or says why
// there is none.
func clusterBinDir() (dir, why string) {
	has := func(d string) bool {
		_, err1 := exec.LookPath(filepath.Join(d, "initdb"))
		_, err2 := exec.LookPath(filepath.Join(d, "pg_ctl"))
		return err1 == nil && err2 == nil
	}
	if p, err := exec.LookPath("initdb"); err == nil && has(filepath.Dir(p)) {
		return filepath.Dir(p), ""
	}
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	slices.Sort(dirs)
	for _, d := range slices.Backward(dirs) {
		if has(d) {
			return d, ""
		}
	}
	return "", "no PostgreSQL binaries (initdb and pg_ctl) on PATH or in /usr/lib/postgresql/*/bin"
}

func chownDir(dir, name string) error {
	u, err := user.Lookup(name)
	if err != nil {
		return fmt.Errorf("running as root, the cluster needs the %q account: %w", name, err)
	}
	uid, err1 := strconv.Atoi(u.Uid)
	gid, err2 := strconv.Atoi(u.Gid)
	if err1 != nil || err2 != nil {
		return fmt.Errorf("account %q has uid %q, gid %q", name, u.Uid, u.Gid)
	}
	return os.Chown(dir, uid, gid)
}

// freePort asks the kernel for a free port on 127.0.0.1; another process
// may take it before it is bound, which then fails loudly.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("find a free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}
