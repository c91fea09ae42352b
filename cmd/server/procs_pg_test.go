package main

// Helpers of the process-level tests: the server binary built once per test
// binary, replicas started as real processes on one PostgreSQL database,
// and the database they share.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"agentd/internal/config"
	"agentd/internal/pgtest"
)

// serverBinary builds ./cmd/server once per test binary, as
// $TMPDIR/agentd-replica-tests/server-<pid>. cmd/server's TestMain cannot
// remove it (it does not know about it), so each build first removes the
// binaries of test processes that are gone: one binary is left behind at
// most, never one per run.
var serverBinary = sync.OnceValues(func() (string, error) {
	dir := filepath.Join(os.TempDir(), "agentd-replica-tests")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", err
	}
	removeStaleBinaries(dir)
	bin := filepath.Join(dir, "server-"+strconv.Itoa(os.Getpid()))
	cmd := exec.Command("go", "build", "-o", bin, ".")
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build ./cmd/server: %w\n%s", err, out)
	}
	return bin, nil
})

// removeStaleBinaries removes the server-<pid> files in dir whose process
// no longer exists.
func removeStaleBinaries(dir string) {
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		pid, err := strconv.Atoi(strings.TrimPrefix(e.Name(), "server-"))
		if err != nil || pid <= 0 {
			continue
		}
		if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
			_ = os.Remove(filepath.Join(dir, e.Name()))
		}
	}
}

// skipShort skips the process-level tests under -short: each runs for
// several seconds.
func skipShort(t *testing.T) {
	t.Helper()
	if testing.Short() {
		t.Skip("process-level replica test (several seconds); skipped in -short mode")
	}
}

// sharedDSN is a fresh migrated database for replicas to share: pgtest's
// when TEST_DATABASE_URL names a server; otherwise a throwaway cluster of
// the test's own, because pgtest's cluster needs pgtest.Main in TestMain,
// which cmd/server's TestMain does not call.
func sharedDSN(t *testing.T) string {
	t.Helper()
	if os.Getenv("TEST_DATABASE_URL") != "" {
		return pgtest.DSN(t)
	}
	return pgtest.NewCluster(t).DSN()
}

// writeConfig writes the demo configuration, with server settings merged
// in, and the files it refers to beside it, and returns its path.
func writeConfig(t *testing.T, server map[string]any) string {
	t.Helper()
	path, err := config.WriteDemo(t.TempDir(), server)
	if err != nil {
		t.Fatalf("write the demo configuration: %v", err)
	}
	return path
}

// replica is one server process.
type replica struct {
	name string
	base string
	cmd  *exec.Cmd
	logs *syncBuffer
	done chan struct{} // closed when the process has exited and been reaped
	err  error         // Wait's result, set before done closes
}

// startReplica starts the server binary on a free loopback port with
// DATABASE_URL=dsn and the configuration at cfgPath, and waits until
// /readyz answers 200. Cleanup kills it if it still runs and reaps it.
func startReplica(t *testing.T, name, dsn, cfgPath string, args ...string) *replica {
	t.Helper()
	return startReplicaEnv(t, name, dsn, cfgPath, nil, args...)
}

// startReplicaEnv is startReplica with env (KEY=value) added to the
// process's environment.
func startReplicaEnv(t *testing.T, name, dsn, cfgPath string, env []string, args ...string) *replica {
	t.Helper()
	bin, err := serverBinary()
	if err != nil {
		t.Fatal(err)
	}
	port, err := pgtest.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	addr := "127.0.0.1:" + strconv.Itoa(port)
	r := &replica{name: name, base: "http://" + addr, logs: &syncBuffer{}, done: make(chan struct{})}
	args = append([]string{"--addr", addr, "--config", cfgPath, "--log-level", "info"}, args...)
	r.cmd = exec.Command(bin, args...)
	r.cmd.Env = append(append(os.Environ(), "DATABASE_URL="+dsn), env...)
	r.cmd.Stdout, r.cmd.Stderr = r.logs, r.logs
	if err := r.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		r.err = r.cmd.Wait()
		close(r.done)
	}()
	t.Cleanup(func() {
		r.signal(syscall.SIGKILL)
		select {
		case <-r.done:
		case <-time.After(testTimeout):
			t.Errorf("replica %s was not reaped", r.name)
		}
		if t.Failed() {
			t.Logf("replica %s log:\n%s", r.name, r.logs)
		}
	})
	r.waitReady(t)
	return r
}

// signal sends sig unless the process has exited.
func (r *replica) signal(sig syscall.Signal) {
	select {
	case <-r.done:
	default:
		_ = r.cmd.Process.Signal(sig)
	}
}

// waitReady polls /readyz until it answers 200, the process exits, or the
// test timeout passes.
func (r *replica) waitReady(t *testing.T) {
	t.Helper()
	deadline := time.Now().Add(testTimeout)
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		if code, _ := r.ready(time.Second); code == http.StatusOK {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("replica %s not ready after %v:\n%s", r.name, testTimeout, r.logs)
		}
		select {
		case <-r.done:
			t.Fatalf("replica %s exited before it was ready: %v\n%s", r.name, r.err, r.logs)
		case <-tick.C:
		}
	}
}

// ready asks /readyz once; code 0 means no answer within timeout.
func (r *replica) ready(timeout time.Duration) (int, error) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, r.base+"/readyz", nil)
	if err != nil {
		return 0, err
	}
	// A fresh connection each time: a killed or restarting server must
	// not be hidden by a pooled one.
	req.Close = true
	res, err := http.DefaultTransport.RoundTrip(req)
	if err != nil {
		return 0, err
	}
	_, _ = io.Copy(io.Discard, res.Body)
	res.Body.Close()
	return res.StatusCode, nil
}

// waitExit waits for the process to exit and returns Wait's result.
func (r *replica) waitExit(t *testing.T, within time.Duration) error {
	t.Helper()
	select {
	case <-r.done:
		return r.err
	case <-time.After(within):
		t.Fatalf("replica %s did not exit within %v", r.name, within)
		return nil
	}
}

// submit starts an echo run with text on r without waiting for it and
// returns the run id.
func (r *replica) submit(t *testing.T, c *http.Client, text string) string {
	t.Helper()
	return r.submitTo(t, c, "echo", text)
}

// submitTo is submit to the agent agentID.
func (r *replica) submitTo(t *testing.T, c *http.Client, agentID, text string) string {
	t.Helper()
	body, _ := json.Marshal(map[string]string{"text": text})
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, r.base+"/v1/agents/"+agentID+"/messages?wait=false", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	res, err := c.Do(req)
	if err != nil {
		t.Fatalf("submit on %s: %v", r.name, err)
	}
	v := readJSON[runJSON](t, res, http.StatusAccepted)
	return v.ID
}

// runState is the part of GET /v1/runs/{id} these tests check.
type runState struct {
	Status    string `json:"status"`
	Attempt   int    `json:"attempt"`
	ContextID string `json:"context_id"`
}

func (r *replica) run(t *testing.T, c *http.Client, id string) runState {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, r.base+"/v1/runs/"+id, nil)
	if err != nil {
		t.Fatal(err)
	}
	res, err := c.Do(req)
	if err != nil {
		t.Fatalf("GET run on %s: %v", r.name, err)
	}
	return readJSON[runState](t, res, http.StatusOK)
}

// newClient is an HTTP client of its own, whose connections cleanup closes.
func newClient(t *testing.T) *http.Client {
	tr := &http.Transport{}
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr}
}
