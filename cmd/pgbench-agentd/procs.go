package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"

	"agentd/internal/config"
)

// replica is one server process under test.
type replica struct {
	base string
	cmd  *exec.Cmd
	logs bytes.Buffer
	done chan struct{} // closed once the process has been reaped
}

// startReplica starts the server binary on a free loopback port against
// dsn with the configuration at cfg and waits for /readyz.
func startReplica(ctx context.Context, bin, dsn, cfg string) (*replica, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	addr := l.Addr().String()
	l.Close()
	r := &replica{base: "http://" + addr, done: make(chan struct{})}
	r.cmd = exec.Command(bin, "--addr", addr, "--config", cfg, "--log-level", "warn")
	r.cmd.Env = append(os.Environ(), "DATABASE_URL="+dsn)
	r.cmd.Stdout, r.cmd.Stderr = &r.logs, &r.logs
	if err := r.cmd.Start(); err != nil {
		return nil, err
	}
	go func() {
		_ = r.cmd.Wait()
		close(r.done)
	}()
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	deadline := time.Now().Add(30 * time.Second)
	for {
		if ready(r.base) {
			return r, nil
		}
		select {
		case <-r.done:
			return nil, fmt.Errorf("server exited before it was ready:\n%s", r.logs.String())
		case <-ctx.Done():
			r.kill()
			return nil, ctx.Err()
		case <-tick.C:
		}
		if time.Now().After(deadline) {
			r.kill()
			return nil, fmt.Errorf("server not ready after 30s:\n%s", r.logs.String())
		}
	}
}

func ready(base string) bool {
	c := http.Client{Timeout: time.Second}
	res, err := c.Get(base + "/readyz")
	if err != nil {
		return false
	}
	_, _ = io.Copy(io.Discard, res.Body)
	res.Body.Close()
	return res.StatusCode == http.StatusOK
}

// kill SIGKILLs the process and reaps it.
func (r *replica) kill() {
	select {
	case <-r.done:
		return
	default:
	}
	_ = r.cmd.Process.Signal(syscall.SIGKILL)
	<-r.done
}

// writeConfig writes the demo configuration with server settings merged in,
// and the files it refers to, into a directory of its own under dir.
func writeConfig(dir string, server map[string]any) (string, error) {
	sub := filepath.Join(dir, "agentd-"+strconv.Itoa(len(server))+"-"+strconv.FormatInt(time.Now().UnixNano(), 36))
	return config.WriteDemo(sub, server)
}

// database is a fresh database on the benchmark server, dropped by drop.
type database struct {
	admin string
	name  string
	dsn   string
}

// newDatabase creates an empty database on the server of admin (a
// postgres:// URL); the server migrates it at start.
func newDatabase(ctx context.Context, admin string) (*database, error) {
	u, err := url.Parse(admin)
	if err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql") {
		return nil, fmt.Errorf("-dsn %q: want a postgres:// URL", admin)
	}
	name := "agentd_bench_" + strconv.FormatInt(time.Now().UnixNano(), 36)
	conn, err := pgx.Connect(ctx, admin)
	if err != nil {
		return nil, fmt.Errorf("connect to -dsn: %w", err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "CREATE DATABASE "+name); err != nil {
		return nil, err
	}
	u.Path = "/" + name
	return &database{admin: admin, name: name, dsn: u.String()}, nil
}

func (d *database) drop(ctx context.Context) error {
	conn, err := pgx.Connect(ctx, d.admin)
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	_, err = conn.Exec(ctx, "DROP DATABASE IF EXISTS "+d.name+" WITH (FORCE)")
	return err
}
