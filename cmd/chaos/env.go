package main

import (
	"context"
	"fmt"
	"io"
	"log"
	"math/rand/v2"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"time"

	"agentd/internal/config"
	"agentd/internal/faultproxy"
	"agentd/internal/pgtest"
)

// env is the system under test: the cluster, the proxies and the
// replicas.
type env struct {
	o       options
	dir     string
	bin     string
	cfg     string
	db      *pgtest.Cluster
	proxies []*faultproxy.Proxy
	client  *http.Client
	svc     *effectService // the tool-calling runs' service (effects.go)

	mu       sync.Mutex
	replicas []*replica
}

// replica is one server process; cmd is nil while it is down.
type replica struct {
	i    int
	base string
	cmd  *exec.Cmd
	done chan struct{}
	logf *os.File
}

func setUp(ctx context.Context, o options) (*env, error) {
	dir, err := os.MkdirTemp("", "agentd-chaos-")
	if err != nil {
		return nil, err
	}
	e := &env{o: o, dir: dir, bin: o.server, client: &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}}
	if e.bin == "" {
		e.bin = filepath.Join(dir, "server")
		build := exec.CommandContext(ctx, "go", "build", "-o", e.bin, "./cmd/server")
		if out, err := build.CombinedOutput(); err != nil {
			return nil, fmt.Errorf("go build ./cmd/server (run chaos from the repository root): %v\n%s", err, out)
		}
	}
	if e.cfg, err = config.WriteDemo(dir, map[string]any{"lease_ttl": o.lease.String(), "shutdown_timeout": "2s"}); err != nil {
		return nil, err
	}
	if e.svc, err = startEffectService(); err != nil {
		return nil, err
	}
	e.svc.doubleOnce = o.inject == "charge"
	if err := addToolAgent(e.cfg, e.svc.url); err != nil {
		e.svc.close()
		return nil, err
	}
	binDir, err := pgtest.BinDir()
	if err != nil {
		return nil, err
	}
	if e.db, err = pgtest.StartCluster(ctx, binDir); err != nil {
		return nil, err
	}
	u, _ := url.Parse(e.db.DSN())
	for i := range o.replicas {
		p, err := faultproxy.Listen(u.Host)
		if err != nil {
			e.tearDown()
			return nil, err
		}
		e.proxies = append(e.proxies, p)
		e.replicas = append(e.replicas, &replica{i: i})
	}
	for _, r := range e.replicas {
		if err := e.start(ctx, r); err != nil {
			e.tearDown()
			return nil, err
		}
	}
	log.Printf("chaos: %d replicas on %s, logs in %s", o.replicas, e.db.DSN(), dir)
	return e, nil
}

// start starts replica r (again) on a fresh port through its proxy and
// waits until it is ready.
func (e *env) start(ctx context.Context, r *replica) error {
	port, err := pgtest.FreePort()
	if err != nil {
		return err
	}
	addr := "127.0.0.1:" + strconv.Itoa(port)
	dsn := "postgres://postgres@" + e.proxies[r.i].Addr() + "/postgres?sslmode=disable"
	logf, err := os.OpenFile(filepath.Join(e.dir, fmt.Sprintf("replica-%d.log", r.i)), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
	if err != nil {
		return err
	}
	cmd := exec.Command(e.bin, "--addr", addr, "--config", e.cfg, "--log-level", "warn")
	cmd.Env = append(os.Environ(), "DATABASE_URL="+dsn)
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		logf.Close()
		return err
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	e.mu.Lock()
	r.base, r.cmd, r.done, r.logf = "http://"+addr, cmd, done, logf
	e.mu.Unlock()
	deadline := time.Now().Add(time.Minute)
	for time.Now().Before(deadline) {
		if e.ready(ctx, r.base) {
			return nil
		}
		select {
		case <-done:
			return fmt.Errorf("replica %d exited at start (see %s)", r.i, logf.Name())
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
	return fmt.Errorf("replica %d not ready within a minute", r.i)
}

func (e *env) ready(ctx context.Context, base string) bool {
	ctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, base+"/readyz", nil)
	res, err := e.client.Do(req)
	if err != nil {
		return false
	}
	_, _ = io.Copy(io.Discard, res.Body)
	res.Body.Close()
	return res.StatusCode == http.StatusOK
}

// kill SIGKILLs replica r and waits for it to be gone.
func (e *env) kill(r *replica) {
	e.mu.Lock()
	cmd, done, logf := r.cmd, r.done, r.logf
	r.cmd = nil
	e.mu.Unlock()
	if cmd == nil {
		return
	}
	_ = cmd.Process.Signal(syscall.SIGKILL)
	<-done
	logf.Close()
}

// pick returns the base URL of a random replica that is up.
func (e *env) pick(rng *rand.Rand) string {
	e.mu.Lock()
	defer e.mu.Unlock()
	up := make([]string, 0, len(e.replicas))
	for _, r := range e.replicas {
		if r.cmd != nil {
			up = append(up, r.base)
		}
	}
	if len(up) == 0 {
		return ""
	}
	return up[rng.IntN(len(up))]
}

// healAll ends any partition and starts any replica that is down, so
// that the runs can finish before the check.
func (e *env) healAll(ctx context.Context) {
	for _, p := range e.proxies {
		p.Partition(false)
	}
	for _, r := range e.replicas {
		e.mu.Lock()
		down := r.cmd == nil
		e.mu.Unlock()
		if down {
			if err := e.start(ctx, r); err != nil {
				log.Printf("chaos: restart replica %d: %v", r.i, err)
			}
		}
	}
}

func (e *env) tearDown() {
	for _, r := range e.replicas {
		e.kill(r)
	}
	for _, p := range e.proxies {
		p.Close()
	}
	if e.db != nil {
		if err := e.db.Close(); err != nil {
			log.Printf("chaos: %v", err)
		}
	}
	e.client.CloseIdleConnections()
	if e.svc != nil {
		e.svc.close()
	}
}
