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
	"time"
)

// cluster is a throwaway PostgreSQL cluster in a temporary directory,
// listening on 127.0.0.1 at a free port, tuned for tests (no fsync).
type cluster struct {
	binDir string
	dir    string // owns data/, the socket and the log
	port   int
	// asUser, when set, is the account the binaries run as: PostgreSQL
	// refuses to run as root.
	asUser string
}

// startCluster initialises and starts a cluster from the binaries in
// binDir. The caller stops it.
func startCluster(ctx context.Context, binDir string) (c *cluster, err error) {
	c = &cluster{binDir: binDir}
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
	if c.port, err = freePort(); err != nil {
		return nil, err
	}
	data := filepath.Join(c.dir, "data")
	if err := c.run(ctx, "initdb", "-D", data, "-U", "postgres", "-A", "trust", "-E", "UTF8", "--no-sync"); err != nil {
		return nil, err
	}
	opts := fmt.Sprintf("-p %d -k %s -c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=200",
		c.port, c.dir)
	if err := c.run(ctx, "pg_ctl", "-D", data, "-l", filepath.Join(c.dir, "log"), "-w", "-t", "60", "-o", opts, "start"); err != nil {
		return nil, fmt.Errorf("%w\nserver log:\n%s", err, c.log())
	}
	return c, nil
}

// dsn is the cluster's maintenance database.
func (c *cluster) dsn() string {
	return fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable", c.port)
}

// stop shuts the cluster down at once and deletes its directory.
func (c *cluster) stop() error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	err := c.run(ctx, "pg_ctl", "-D", filepath.Join(c.dir, "data"), "-m", "immediate", "-w", "stop")
	return errors.Join(err, os.RemoveAll(c.dir))
}

// run runs one of the cluster binaries, as c.asUser when set.
func (c *cluster) run(ctx context.Context, name string, args ...string) error {
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

func (c *cluster) log() []byte {
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

// freePort asks the kernel for a free TCP port on 127.0.0.1. Another
// process may take it before the server binds; pg_ctl then fails loudly.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("find a free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}
