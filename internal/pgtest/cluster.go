package pgtest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"testing"
	"time"
)

// Cluster is a throwaway PostgreSQL cluster in a temporary directory,
// listening on 127.0.0.1 at a free port, tuned for tests (no fsync). The
// harness runs one when TEST_DATABASE_URL is not set; a test that must take
// its server down (a restart) starts its own with NewCluster.
type Cluster struct {
	binDir string
	dir    string // owns data/, the socket and the log
	port   int
	opts   string // server options, kept for restarts
	// asUser, when set, is the account the binaries run as: PostgreSQL
	// refuses to run as root.
	asUser string
}

// NewCluster starts a cluster that t owns; t's cleanup stops it and removes
// its directory. extra is appended to the server options (-c name=value).
// Without PostgreSQL binaries t is skipped loudly — or fails under
// REQUIRE_DB=1.
func NewCluster(t testing.TB, extra ...string) *Cluster {
	t.Helper()
	src := chooseSource(func(string) string { return "" }, exec.LookPath, filepath.Glob)
	if src.kind != fromCluster {
		if os.Getenv("REQUIRE_DB") == "1" {
			t.Fatalf("pgtest: REQUIRE_DB=1 but no PostgreSQL cluster can be started: %s", src.why)
		}
		t.Skipf("pgtest: SKIPPING: %s (REQUIRE_DB=1 makes this a failure)", src.why)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c, err := StartCluster(ctx, src.binDir, extra...)
	if err != nil {
		t.Fatalf("pgtest: %v", err)
	}
	t.Cleanup(func() {
		if err := c.Close(); err != nil {
			t.Errorf("pgtest: %v", err)
		}
	})
	return c
}

// StartCluster initialises and starts a cluster from the binaries in
// binDir; extra is appended to the server options. The caller closes it.
func StartCluster(ctx context.Context, binDir string, extra ...string) (c *Cluster, err error) {
	c = &Cluster{binDir: binDir}
	if os.Geteuid() == 0 {
		c.asUser = "postgres"
	}
	if c.dir, err = os.MkdirTemp("", "agentd-pgtest-"); err != nil {
		return nil, fmt.Errorf("temp dir for the cluster: %w", err)
	}
	defer func() {
		if err != nil {
			_ = os.RemoveAll(c.dir)
		}
	}()
	if c.asUser != "" {
		if err := chownTo(c.dir, c.asUser); err != nil {
			return nil, err
		}
	}
	if c.port, err = FreePort(); err != nil {
		return nil, err
	}
	data := filepath.Join(c.dir, "data")
	if err := c.run(ctx, "initdb", "-D", data, "-U", "postgres", "-A", "trust", "-E", "UTF8", "--no-sync"); err != nil {
		return nil, err
	}
	c.opts = fmt.Sprintf("-p %d -k %s -c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=200",
		c.port, c.dir)
	for _, e := range extra {
		c.opts += " " + e
	}
	if err := c.Start(ctx); err != nil {
		return nil, err
	}
	return c, nil
}

// DSN is the cluster's maintenance database.
func (c *Cluster) DSN() string {
	return fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable", c.port)
}

// Start starts the (stopped) server.
func (c *Cluster) Start(ctx context.Context) error {
	return c.pgctl(ctx, "-l", filepath.Join(c.dir, "log"), "-o", c.opts, "start")
}

// Stop shuts the server down the way an operator does (fast: sessions are
// terminated) and keeps its data, so that Start brings it back.
func (c *Cluster) Stop(ctx context.Context) error { return c.pgctl(ctx, "-m", "fast", "stop") }

// Close shuts the server down at once, if it runs, and deletes the
// cluster's directory.
func (c *Cluster) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var err error
	if _, serr := os.Stat(filepath.Join(c.dir, "data", "postmaster.pid")); serr == nil {
		err = c.pgctl(ctx, "-m", "immediate", "stop")
	}
	return errors.Join(err, os.RemoveAll(c.dir))
}

func (c *Cluster) pgctl(ctx context.Context, args ...string) error {
	err := c.run(ctx, "pg_ctl", append([]string{"-D", filepath.Join(c.dir, "data"), "-w", "-t", "60"}, args...)...)
	if err != nil {
		return fmt.Errorf("%w\nserver log:\n%s", err, c.log())
	}
	return nil
}

// run runs one of the cluster binaries, as c.asUser when set.
func (c *Cluster) run(ctx context.Context, name string, args ...string) error {
	bin := filepath.Join(c.binDir, name)
	cmd := exec.CommandContext(ctx, bin, args...)
	if c.asUser != "" {
		cmd = exec.CommandContext(ctx, "runuser", append([]string{"-u", c.asUser, "--", bin}, args...)...)
	}
	cmd.Dir = c.dir
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("%s: %w\n%s", cmd, err, out.Bytes())
	}
	return nil
}

func (c *Cluster) log() []byte {
	b, _ := os.ReadFile(filepath.Join(c.dir, "log"))
	return b
}

// chownTo gives dir to the named account.
func chownTo(dir, name string) error {
	u, err := user.Lookup(name)
	if err != nil {
		return fmt.Errorf("running as root, the cluster needs the %q account: %w", name, err)
	}
	uid, err1 := strconv.Atoi(u.Uid)
	gid, err2 := strconv.Atoi(u.Gid)
	if err := errors.Join(err1, err2); err != nil {
		return fmt.Errorf("account %q: %w", name, err)
	}
	if err := os.Chown(dir, uid, gid); err != nil {
		return fmt.Errorf("give %s to %q: %w", dir, name, err)
	}
	return nil
}

// FreePort asks the kernel for a free TCP port on 127.0.0.1 (for a cluster
// or a server process a test starts). Another process may take it before
// it is bound; the bind then fails loudly.
func FreePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("find a free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}
