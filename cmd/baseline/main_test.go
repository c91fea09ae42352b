package main

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func startBaseline(t *testing.T) string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	ready := make(chan string, 1)
	done := make(chan error, 1)
	go func() { done <- run(ctx, []string{"-addr", "127.0.0.1:0"}, io.Discard, ready) }()
	var addr string
	select {
	case addr = <-ready:
	case err := <-done:
		t.Fatalf("baseline did not start: %v", err)
	case <-time.After(10 * time.Second):
		t.Fatal("baseline did not start within 10s")
	}
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("baseline stopped with %v", err)
		}
	})
	return "http://" + addr
}

func TestEndpoints(t *testing.T) {
	base := startBaseline(t)
	client := &http.Client{Timeout: 10 * time.Second}
	defer client.CloseIdleConnections()

	resp, err := client.Post(base+"/send", "application/json", strings.NewReader(`{"text":"hello world"}`))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	var run struct{ Status string }
	if resp.StatusCode != http.StatusOK || json.Unmarshal(body, &run) != nil || run.Status != "completed" {
		t.Fatalf("/send answered %s %s, want 200 and a completed run", resp.Status, body)
	}

	resp, err = client.Get(base + "/stream?n=3&every=1ms")
	if err != nil {
		t.Fatal(err)
	}
	body, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	if got := strings.Count(string(body), "event: delta\n"); got != 3 || !strings.Contains(string(body), "event: run.end\n") {
		t.Fatalf("/stream?n=3 wrote %d deltas:\n%s", got, body)
	}

	resp, err = client.Get(base + "/stream?n=-1")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest {
		t.Fatalf("/stream?n=-1 answered %s, want 400", resp.Status)
	}

	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, base+"/idle", nil)
	resp, err = client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	first := make([]byte, len(": stream open\n\n"))
	if _, err := io.ReadFull(resp.Body, first); err != nil || string(first) != ": stream open\n\n" {
		t.Fatalf("/idle began with %q (%v)", first, err)
	}
	cancel()
	resp.Body.Close()
}

func TestLoopbackOnly(t *testing.T) {
	for _, addr := range []string{"0.0.0.0:1", "10.0.0.1:1", "example.com:1", "nonsense"} {
		if loopbackOnly(addr) == nil {
			t.Errorf("-addr %s accepted, want refused", addr)
		}
	}
	if err := loopbackOnly("127.0.0.1:0"); err != nil {
		t.Errorf("-addr 127.0.0.1:0 refused: %v", err)
	}
}
