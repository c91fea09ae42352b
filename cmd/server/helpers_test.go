package main

// Helpers of the server command tests: run() in-process on loopback with
// goroutine-leak checks, HTTP round trips, and an SSE reader that checks the
// framing of every event.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"
	"sigs.k8s.io/yaml"

	"agentd/internal/config"
	"agentd/internal/pgtest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(pgMain{m}) }

// pgMain runs the tests under pgtest, which provides and tears down the
// PostgreSQL databases of the replica tests.
type pgMain struct{ m *testing.M }

func (p pgMain) Run() int { return pgtest.Run(p.m) }

const testTimeout = 20 * time.Second

// noEnv keeps the tests off the developer's environment (no DATABASE_URL,
// no OpenAI keys).
func noEnv(string) string { return "" }

// syncBuffer collects the server's log lines from many goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// server is one run() of the command.
type server struct {
	base   string
	stop   context.CancelFunc
	done   chan error
	logs   *syncBuffer
	client *http.Client
}

// start runs the command with args on 127.0.0.1:0 and waits until it
// listens. Cleanup stops it and waits for run to return.
func start(t testing.TB, args ...string) *server {
	t.Helper()
	return startEnv(t, noEnv, args...)
}

// startEnv is start with an environment: run reads getenv instead of none.
func startEnv(t testing.TB, getenv func(string) string, args ...string) *server {
	t.Helper()
	ctx, stop := context.WithCancel(context.Background())
	s := &server{stop: stop, done: make(chan error, 1), logs: &syncBuffer{}}
	ready := make(chan string, 1)
	args = append([]string{"--addr", "127.0.0.1:0", "--log-level", "warn"}, args...)
	go func() { s.done <- run(ctx, args, getenv, s.logs, ready) }()
	select {
	case addr := <-ready:
		s.base = "http://" + addr
	case err := <-s.done:
		stop()
		t.Fatalf("run returned before listening: %v\n%s", err, s.logs)
	case <-time.After(testTimeout):
		stop()
		t.Fatal("server did not listen")
	}
	tr := &http.Transport{}
	s.client = &http.Client{Transport: tr}
	t.Cleanup(func() {
		s.stop()
		if err := s.wait(); err != nil {
			t.Errorf("run: %v", err)
		}
		tr.CloseIdleConnections()
	})
	return s
}

// wait waits for run to return (once; later calls return nil).
func (s *server) wait() error {
	select {
	case err, ok := <-s.done:
		if ok {
			close(s.done)
		}
		return err
	case <-time.After(testTimeout):
		return errors.New("run did not return")
	}
}

func (s *server) post(t *testing.T, path, body string) *http.Response {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	t.Cleanup(cancel)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.base+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	// What `curl -d` sends: the README's examples must work as written.
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	res, err := s.client.Do(req)
	if err != nil {
		t.Fatalf("POST %s: %v", path, err)
	}
	return res
}

func (s *server) get(t *testing.T, path string, header ...string) *http.Response {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	t.Cleanup(cancel)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.base+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	res, err := s.client.Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
	return res
}

// runJSON is the part of a run the tests look at.
type runJSON struct {
	ID        string `json:"id"`
	ContextID string `json:"context_id"`
	AgentID   string `json:"agent_id"`
	Status    string `json:"status"`
	Messages  []struct {
		Role  string `json:"role"`
		Parts []struct {
			Type       string          `json:"type"`
			Text       string          `json:"text"`
			ToolCall   json.RawMessage `json:"tool_call"`
			ToolResult json.RawMessage `json:"tool_result"`
		} `json:"parts"`
	} `json:"messages"`
	Error json.RawMessage `json:"error"`
}

func readJSON[T any](t *testing.T, res *http.Response, status int) T {
	t.Helper()
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	if res.StatusCode != status {
		t.Fatalf("%s %s: status %d, want %d: %s", res.Request.Method, res.Request.URL.Path, res.StatusCode, status, b)
	}
	var v T
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("decode %s: %v", b, err)
	}
	return v
}

// event is one SSE event.
type event struct {
	seq  int64
	typ  string
	data map[string]any
}

// readEvent reads the next event, skipping comments; io.EOF means the
// stream closed between events.
func readEvent(br *bufio.Reader) (event, error) {
	var ev event
	var id, data string
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			if errors.Is(err, io.EOF) && line == "" && id == "" && ev.typ == "" && data == "" {
				return ev, io.EOF
			}
			return ev, fmt.Errorf("stream broke inside an event: %w", err)
		}
		line = strings.TrimSuffix(line, "\n")
		switch {
		case line == "" && id == "" && ev.typ == "" && data == "":
		case line == "":
			seq, err := strconv.ParseInt(id, 10, 64)
			if err != nil {
				return ev, fmt.Errorf("id %q is not a seq", id)
			}
			ev.seq = seq
			if err := json.Unmarshal([]byte(data), &ev.data); err != nil {
				return ev, fmt.Errorf("event %d: data %q: %v", seq, data, err)
			}
			if ev.data["seq"] != float64(seq) || ev.data["type"] != ev.typ || ev.data["run_id"] == nil {
				return ev, fmt.Errorf("event id %d/%s, data %s", seq, ev.typ, data)
			}
			return ev, nil
		case strings.HasPrefix(line, ":"):
		case strings.HasPrefix(line, "id: "):
			id = strings.TrimPrefix(line, "id: ")
		case strings.HasPrefix(line, "event: "):
			ev.typ = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			data = strings.TrimPrefix(line, "data: ")
		default:
			return ev, fmt.Errorf("unexpected line %q", line)
		}
	}
}

// readUntilEnd reads until the stream closes, checking that it closes right
// after run.end.
func readUntilEnd(t *testing.T, br *bufio.Reader) []event {
	t.Helper()
	var out []event
	for {
		ev, err := readEvent(br)
		if errors.Is(err, io.EOF) {
			if len(out) == 0 || out[len(out)-1].typ != "run.end" {
				t.Fatalf("stream closed after %d events without run.end", len(out))
			}
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		if len(out) > 0 && out[len(out)-1].typ == "run.end" {
			t.Fatalf("event %d after run.end", ev.seq)
		}
		out = append(out, ev)
	}
}

func deltas(evs []event) []string {
	var b strings.Builder
	for _, ev := range evs {
		if ev.typ == "delta" {
			s, _ := ev.data["text"].(string)
			b.WriteString(s)
		}
	}
	return strings.Fields(b.String())
}

func toks(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = "tok" + strconv.Itoa(i+1)
	}
	return out
}

func checkSeqs(t *testing.T, evs []event) {
	t.Helper()
	for i, ev := range evs {
		if ev.seq != int64(i+1) {
			t.Fatalf("event %d has seq %d, want %d", i, ev.seq, i+1)
		}
	}
	if len(evs) == 0 || evs[0].typ != "run.start" || evs[len(evs)-1].typ != "run.end" {
		t.Fatalf("want run.start first and run.end last")
	}
}

// demoConfigWith writes the demo configuration (with the files it refers
// to) changed by edit, and returns its path.
func demoConfigWith(t *testing.T, edit func(cfg map[string]any)) string {
	t.Helper()
	path, err := config.WriteDemo(t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var cfg map[string]any
	if err := yaml.Unmarshal(raw, &cfg); err != nil {
		t.Fatal(err)
	}
	edit(cfg)
	out, err := yaml.Marshal(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, out, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}
