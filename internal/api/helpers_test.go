package api_test

// Helpers of the end-to-end API tests: a real HTTP server on loopback over a
// runtime on memstore with the demo agents, JSON and problem round trips,
// and an SSE reader.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"agentd/internal/api"
	"agentd/internal/config"
	"agentd/internal/run"
	"agentd/internal/runtime"
	"agentd/internal/store/memstore"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// testTimeout bounds every wait of these tests.
const testTimeout = 20 * time.Second

// env is one API server on loopback.
type env struct {
	t   *testing.T
	rt  *runtime.Runtime
	srv *httptest.Server
	c   *http.Client
}

// newEnv serves the demo agents. Cleanup ends open requests first (their
// context), then closes the server and drains the runtime, so that no
// goroutine outlives the test.
func newEnv(t *testing.T, opts api.Options, setup ...func(*httptest.Server)) *env {
	t.Helper()
	cfg, err := config.Load("") // the embedded demo, with its files
	if err != nil {
		t.Fatal(err)
	}
	agents, err := cfg.Build(config.BuildOptions{Getenv: func(string) string { return "" }})
	if err != nil {
		t.Fatal(err)
	}
	rt, err := runtime.New(runtime.Options{
		Store: memstore.New(), Agents: agents,
		CancelGrace: 300 * time.Millisecond, FlushWindow: 5 * time.Millisecond,
	})
	if err != nil {
		t.Fatal(err)
	}
	base, cancelBase := context.WithCancel(context.Background())
	srv := httptest.NewUnstartedServer(api.New(rt, opts).Handler())
	srv.Config.BaseContext = func(net.Listener) context.Context { return base }
	for _, f := range setup {
		f(srv)
	}
	srv.Start()
	t.Cleanup(func() {
		cancelBase()
		srv.Close()
		ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
		defer cancel()
		if err := rt.Shutdown(ctx); err != nil {
			t.Errorf("runtime shutdown: %v", err)
		}
	})
	return &env{t: t, rt: rt, srv: srv, c: srv.Client()}
}

// smallSendBuffers makes the server's sockets buffer little, so that a
// client that stops reading soon blocks the server's writes to it.
func smallSendBuffers(srv *httptest.Server) {
	srv.Listener = sendBufferListener{srv.Listener}
}

type sendBufferListener struct{ net.Listener }

func (l sendBufferListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if tc, ok := c.(*net.TCPConn); ok {
		_ = tc.SetWriteBuffer(16 << 10)
	}
	return c, err
}

// ctxT is a context that ends with the test or after testTimeout.
func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	t.Cleanup(cancel)
	return ctx
}

// response is a fully read HTTP answer.
type response struct {
	status int
	header http.Header
	body   []byte
}

func (r response) String() string { return fmt.Sprintf("%d %s", r.status, r.body) }

// do sends a request and reads the whole answer.
func (e *env) do(method, path string, body any, header ...string) response {
	e.t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	case []byte:
		rd = bytes.NewReader(b)
	default:
		j, err := json.Marshal(b)
		if err != nil {
			e.t.Fatal(err)
		}
		rd = bytes.NewReader(j)
	}
	req, err := http.NewRequestWithContext(ctxT(e.t), method, e.srv.URL+path, rd)
	if err != nil {
		e.t.Fatal(err)
	}
	if rd != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	res, err := e.c.Do(req)
	if err != nil {
		e.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		e.t.Fatalf("%s %s: read body: %v", method, path, err)
	}
	return response{status: res.StatusCode, header: res.Header, body: b}
}

// decode unmarshals a JSON answer of the wanted status into v.
func decode[T any](t *testing.T, r response, status int) T {
	t.Helper()
	var v T
	if r.status != status {
		t.Fatalf("status %d, want %d: %s", r.status, status, r.body)
	}
	if err := json.Unmarshal(r.body, &v); err != nil {
		t.Fatalf("decode %s: %v", r.body, err)
	}
	return v
}

// send posts text to an agent (blocking unless query says otherwise) and
// returns the run.
func (e *env) send(agentID, query string, body any) api.RunView {
	e.t.Helper()
	r := e.do(http.MethodPost, "/v1/agents/"+agentID+"/messages"+query, body)
	want := http.StatusOK
	if strings.Contains(query, "wait=false") {
		want = http.StatusAccepted
	}
	v := decode[api.RunView](e.t, r, want)
	if loc := r.header.Get("Location"); loc != "/v1/runs/"+v.ID {
		e.t.Errorf("Location = %q, want /v1/runs/%s", loc, v.ID)
	}
	return v
}

func (e *env) run(id string) api.RunView {
	e.t.Helper()
	return decode[api.RunView](e.t, e.do(http.MethodGet, "/v1/runs/"+id, nil), http.StatusOK)
}

// waitStatus polls the run until it reaches status, or fails at the
// deadline.
func (e *env) waitStatus(id, status string) api.RunView {
	e.t.Helper()
	deadline := time.Now().Add(testTimeout)
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for {
		v := e.run(id)
		if string(v.Status) == status {
			return v
		}
		if time.Now().After(deadline) {
			e.t.Fatalf("run %s is %s after %v, want %s", id, v.Status, testTimeout, status)
		}
		<-tick.C
	}
}

// total is the number of runs the server knows.
func (e *env) total() int {
	e.t.Helper()
	return decode[api.RunList](e.t, e.do(http.MethodGet, "/v1/runs?limit=100", nil), http.StatusOK).Total
}

// sseEvent is one SSE event as it came over the wire.
type sseEvent struct {
	id    string
	typ   string
	data  map[string]any
	raw   string
	seq   int64
	dseq  int64 // data.seq
	dtype string
}

// sseReader parses an SSE stream; comments are collected apart.
type sseReader struct {
	br       *bufio.Reader
	comments []string
}

func newSSE(r io.Reader) *sseReader { return &sseReader{br: bufio.NewReader(r)} }

// next returns the next event, or io.EOF when the stream closed cleanly
// between events.
func (s *sseReader) next() (sseEvent, error) {
	var ev sseEvent
	fields := 0
	for {
		line, err := s.br.ReadString('\n')
		if err != nil {
			if errors.Is(err, io.EOF) && line == "" && fields == 0 {
				return ev, io.EOF
			}
			return ev, fmt.Errorf("stream broke inside an event (%q): %w", line, err)
		}
		line = strings.TrimSuffix(line, "\n")
		switch {
		case line == "":
			if fields == 0 {
				continue
			}
			return ev, ev.parse()
		case strings.HasPrefix(line, ":"):
			s.comments = append(s.comments, strings.TrimSpace(strings.TrimPrefix(line, ":")))
		case strings.HasPrefix(line, "id: "):
			ev.id, fields = strings.TrimPrefix(line, "id: "), fields+1
		case strings.HasPrefix(line, "event: "):
			ev.typ, fields = strings.TrimPrefix(line, "event: "), fields+1
		case strings.HasPrefix(line, "data: "):
			if ev.raw != "" {
				return ev, fmt.Errorf("event %s has more than one data line", ev.id)
			}
			ev.raw, fields = strings.TrimPrefix(line, "data: "), fields+1
		default:
			return ev, fmt.Errorf("unexpected SSE line %q", line)
		}
	}
}

// parse checks the framing: id is the seq, data is JSON naming the same
// seq and type.
func (ev *sseEvent) parse() error {
	if ev.id == "" || ev.typ == "" || ev.raw == "" {
		return fmt.Errorf("event lacks id, event or data: %+v", *ev)
	}
	seq, err := strconv.ParseInt(ev.id, 10, 64)
	if err != nil {
		return fmt.Errorf("id %q is not a seq", ev.id)
	}
	ev.seq = seq
	if err := json.Unmarshal([]byte(ev.raw), &ev.data); err != nil {
		return fmt.Errorf("data of event %d is not a JSON object: %v", seq, err)
	}
	ds, _ := ev.data["seq"].(float64)
	ev.dseq = int64(ds)
	ev.dtype, _ = ev.data["type"].(string)
	if ev.dseq != seq || ev.dtype != ev.typ {
		return fmt.Errorf("event id %d/%s but data says seq %d/%s", seq, ev.typ, ev.dseq, ev.dtype)
	}
	if _, ok := ev.data["run_id"].(string); !ok {
		return fmt.Errorf("event %d data has no run_id", seq)
	}
	return nil
}

// readAll reads events until the stream closes and checks it closed right
// after a run.end — the one that ends the run, or a parking one (e.g.
// input-required) with nothing after it yet.
func (s *sseReader) readAll(t *testing.T) []sseEvent {
	t.Helper()
	var out []sseEvent
	for {
		ev, err := s.next()
		if errors.Is(err, io.EOF) {
			if len(out) == 0 || out[len(out)-1].typ != runtime.EventRunEnd {
				t.Fatalf("stream closed before run.end after %d events", len(out))
			}
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		if n := len(out); n > 0 && out[n-1].typ == runtime.EventRunEnd && terminalEnd(out[n-1]) {
			t.Fatalf("event %d (%s) after the final run.end", ev.seq, ev.typ)
		}
		out = append(out, ev)
	}
}

// openEvents opens GET /v1/runs/{id}/events with the given header pairs.
func (e *env) openEvents(ctx context.Context, path string, header ...string) *http.Response {
	e.t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, e.srv.URL+path, nil)
	if err != nil {
		e.t.Fatal(err)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	res, err := e.c.Do(req)
	if err != nil {
		e.t.Fatalf("GET %s: %v", path, err)
	}
	if res.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(res.Body)
		res.Body.Close()
		e.t.Fatalf("GET %s: %d %s", path, res.StatusCode, b)
	}
	return res
}

// checkDense fails unless evs carry seqs 1..n exactly once, in order, with
// run.start first and run.end last.
func checkDense(t *testing.T, evs []sseEvent) {
	t.Helper()
	for i, ev := range evs {
		if ev.seq != int64(i+1) {
			t.Fatalf("event %d has seq %d, want %d (seqs must be 1..n, once each, in order)", i, ev.seq, i+1)
		}
	}
	if len(evs) == 0 || evs[0].typ != runtime.EventRunStart || evs[len(evs)-1].typ != runtime.EventRunEnd {
		t.Fatalf("want run.start first and run.end last, got %d events", len(evs))
	}
}

// tokens concatenates the text of the delta events.
func tokens(evs []sseEvent) string {
	var b strings.Builder
	for _, ev := range evs {
		if ev.typ == runtime.EventDelta {
			s, _ := ev.data["text"].(string)
			b.WriteString(s)
		}
	}
	return b.String()
}

// wantTokens is "tok1 tok2 … tokN".
func wantTokens(n int) string {
	f := make([]string, n)
	for i := range f {
		f[i] = "tok" + strconv.Itoa(i+1)
	}
	return strings.Join(f, " ")
}

// terminalEnd reports whether a run.end event ends the run.
func terminalEnd(ev sseEvent) bool {
	state, _ := ev.data["state"].(string)
	return run.TaskState(state).Terminal()
}
