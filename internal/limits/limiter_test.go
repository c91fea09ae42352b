package limits

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"agentd/internal/run"
)

// activeRuns is a run lister over a fixed set of active runs per tenant.
type activeRuns map[string]int

func (a activeRuns) ListTasks(ctx context.Context, q run.TaskQuery) (run.TaskPage, error) {
	n := min(a[run.TenantFrom(ctx)], q.Limit)
	return run.TaskPage{Tasks: make([]run.Task, n)}, nil
}

// edge serves the limiter in front of a handler that holds streams open
// until release is closed; the tenant comes from the X-Tenant header, as
// the auth middleware would set it.
type edge struct {
	*httptest.Server
	release chan struct{}
	entered chan struct{}
}

func newEdge(t *testing.T, o Options) *edge {
	t.Helper()
	l, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	e := &edge{release: make(chan struct{}), entered: make(chan struct{}, 100)}
	h := l.Middleware(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		if strings.HasSuffix(r.URL.Path, "/events") {
			w.WriteHeader(200)
			w.(http.Flusher).Flush()
			e.entered <- struct{}{}
			<-e.release
		}
	}))
	e.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.ServeHTTP(w, r.WithContext(run.WithTenant(r.Context(), r.Header.Get("X-Tenant"))))
	}))
	t.Cleanup(func() {
		select {
		case <-e.release:
		default:
			close(e.release)
		}
		e.Close()
	})
	return e
}

type result struct {
	status     int
	retryAfter string
	body       string
}

func (e *edge) do(t *testing.T, tenant, method, path, body string) result {
	t.Helper()
	req, _ := http.NewRequest(method, e.URL+path, strings.NewReader(body))
	req.Header.Set("X-Tenant", tenant)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if strings.HasSuffix(path, "/events") && res.StatusCode == 200 {
		return result{status: 200} // held open by the handler
	}
	b, _ := io.ReadAll(res.Body)
	return result{res.StatusCode, res.Header.Get("Retry-After"), string(b)}
}

func TestRateLimitPerTenant(t *testing.T) {
	now := time.Now()
	var mu sync.Mutex
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	e := newEdge(t, Options{RequestsPerSecond: 2, Burst: 3, Now: clock})
	for i := 0; i < 3; i++ {
		if r := e.do(t, "acme", "GET", "/v1/runs", ""); r.status != 200 {
			t.Fatalf("request %d within the burst: %d %s", i+1, r.status, r.body)
		}
	}
	r := e.do(t, "acme", "GET", "/v1/runs", "")
	if r.status != 429 || r.retryAfter != "1" || !strings.Contains(r.body, "tenant acme is over its rate of 2 requests a second") {
		t.Fatalf("request past the burst: %d Retry-After %q %s, want 429, Retry-After 1, naming the tenant", r.status, r.retryAfter, r.body)
	}
	if r := e.do(t, "globex", "GET", "/v1/runs", ""); r.status != 200 {
		t.Fatalf("another tenant: %d, want 200 (buckets are per tenant)", r.status)
	}
	if r := e.do(t, "acme", "GET", "/healthz", ""); r.status != 200 {
		t.Fatalf("/healthz: %d, want 200 (probes are not limited)", r.status)
	}
	mu.Lock()
	now = now.Add(500 * time.Millisecond) // one token back
	mu.Unlock()
	if r := e.do(t, "acme", "GET", "/v1/runs", ""); r.status != 200 {
		t.Fatalf("after the refill: %d %s", r.status, r.body)
	}
}

func TestConcurrentRuns(t *testing.T) {
	e := newEdge(t, Options{ConcurrentRuns: 2, Runs: activeRuns{"acme": 2, "globex": 1}})
	sends := []struct{ method, path, body string }{
		{"POST", "/v1/agents/echo/messages", `{"text":"hi"}`},
		{"POST", "/v1/runs/r1/input", `{"text":"yes"}`},
		{"POST", "/agents/echo/rest/message:send", `{"message":{}}`},
		{"POST", "/agents/echo/jsonrpc", `{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{}}`},
		{"POST", "/agents/echo/jsonrpc", `{"jsonrpc":"2.0","id":1,"method":"message/stream","params":{}}`},
	}
	for _, s := range sends {
		r := e.do(t, "acme", s.method, s.path, s.body)
		if r.status != 429 || r.retryAfter == "" || !strings.Contains(r.body, "has 2 active runs") {
			t.Errorf("acme %s %s at its limit: %d %q %s, want 429 with Retry-After", s.method, s.path, r.status, r.retryAfter, r.body)
		}
		if r := e.do(t, "globex", s.method, s.path, s.body); r.status != 200 {
			t.Errorf("globex %s %s under its limit: %d %s", s.method, s.path, r.status, r.body)
		}
	}
	for _, read := range []struct{ method, path, body string }{
		{"GET", "/v1/runs/r1", ""},
		{"POST", "/agents/echo/jsonrpc", `{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":"x"}}`},
	} {
		if r := e.do(t, "acme", read.method, read.path, read.body); r.status != 200 {
			t.Errorf("acme %s %s (starts no run): %d %s", read.method, read.path, r.status, r.body)
		}
	}
}

func TestStreamLimits(t *testing.T) {
	e := newEdge(t, Options{StreamsPerTenant: 1, MaxStreams: 2})
	if r := e.do(t, "acme", "GET", "/v1/runs/r1/events", ""); r.status != 200 {
		t.Fatalf("acme's first stream: %d", r.status)
	}
	<-e.entered
	r := e.do(t, "acme", "GET", "/v1/runs/r2/events", "")
	if r.status != 429 || !strings.Contains(r.body, "tenant acme has 1 event streams open") {
		t.Fatalf("acme's second stream: %d %s, want 429", r.status, r.body)
	}
	if r := e.do(t, "globex", "GET", "/v1/runs/r3/events", ""); r.status != 200 {
		t.Fatalf("globex's stream: %d", r.status)
	}
	<-e.entered
	r = e.do(t, "initech", "GET", "/v1/runs/r4/events", "")
	if r.status != 503 || r.retryAfter == "" || !strings.Contains(r.body, "this server has 2 event streams open") {
		t.Fatalf("a third stream on the server: %d %q %s, want 503 with Retry-After", r.status, r.retryAfter, r.body)
	}
	r = e.do(t, "initech", "POST", "/agents/echo/jsonrpc", `{"jsonrpc":"2.0","id":7,"method":"SubscribeToTask","params":{"id":"x"}}`)
	if r.status != 503 || !strings.Contains(r.body, `"code":-32000`) {
		t.Fatalf("an A2A JSON-RPC subscription past the limit: %d %s, want 503 with a JSON-RPC error", r.status, r.body)
	}
	close(e.release) // the streams end: their slots are free again
	for i := 0; ; i++ {
		r := e.do(t, "initech", "POST", "/agents/echo/rest/tasks/x:subscribe", "")
		if r.status == 200 {
			break
		}
		if i > 200 {
			t.Fatalf("slots never freed: %d %s", r.status, r.body)
		}
		time.Sleep(10 * time.Millisecond) // the handlers return after their clients read
	}
}

func TestBodyShape(t *testing.T) {
	e := newEdge(t, Options{MaxBodyBytes: 2000, MaxJSONDepth: 8, MaxParts: 3})
	parts := func(n int) string {
		p := make([]string, n)
		for i := range p {
			p[i] = `{"text":"p"}`
		}
		return `{"message":{"role":"user","parts":[` + strings.Join(p, ",") + `]}}`
	}
	cases := []struct {
		path, body string
		status     int
		want       string
	}{
		{"/v1/agents/echo/messages", parts(3), 200, ""},
		{"/v1/agents/echo/messages", parts(4), 400, "a message has 4 parts; at most 3"},
		{"/agents/echo/jsonrpc", `{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":` + parts(5) + `}`, 400, `"code":-32600`},
		{"/agents/echo/rest/message:send", strings.Repeat("[", 9) + strings.Repeat("]", 9), 400, "INVALID_ARGUMENT"},
		{"/v1/agents/echo/messages", `{"a":` + strings.Repeat("[", 8) + strings.Repeat("]", 8) + `}`, 400, "nests more than 8 levels"},
		{"/v1/agents/echo/messages", `{"text":"` + strings.Repeat("x", 2001) + `"}`, 413, "exceeds the limit of 2000 bytes"},
	}
	for _, c := range cases {
		r := e.do(t, "acme", "POST", c.path, c.body)
		if r.status != c.status || !strings.Contains(r.body, c.want) {
			t.Errorf("POST %s (%d bytes): %d %s, want %d with %q", c.path, len(c.body), r.status, r.body, c.status, c.want)
		}
	}
}

// TestClassifyAsTheFacesRead: a request is counted as a run or a stream
// however it spells what the faces accept — ?stream= as strconv.ParseBool
// reads it, a JSON-RPC method key in any case or with escapes (as
// encoding/json matches keys) and an escaped method name.
func TestClassifyAsTheFacesRead(t *testing.T) {
	e := newEdge(t, Options{ConcurrentRuns: 1, Runs: activeRuns{"acme": 1}})
	sends := []struct{ path, body string }{
		{"/v1/agents/echo/messages?stream=1", `{"text":"hi"}`},
		{"/v1/agents/echo/messages?stream=TRUE", `{"text":"hi"}`},
		{"/v1/agents/echo/messages?stream=t", `{"text":"hi"}`},
		{"/agents/echo/jsonrpc", `{"jsonrpc":"2.0","id":1,"Method":"SendMessage","params":{}}`},
		{"/agents/echo/jsonrpc", `{"jsonrpc":"2.0","id":1,"METHOD":"message/stream","params":{}}`},
		{"/agents/echo/jsonrpc", `{"jsonrpc":"2.0","id":1,"method":"Send\u004dessage","params":{}}`},
		{"/agents/echo/jsonrpc", `{"jsonrpc":"2.0","id":1,"m\u0065thod":"SendStreamingMessage","params":{}}`},
		{"/agents/echo/jsonrpc", `{"jsonrpc":"2.0","id":1,"method":"message\/send","params":{}}`},
		{"/agents/echo/jsonrpc", `{"method":"GetTask","jsonrpc":"2.0","id":1,"Method":"SendMessage","params":{}}`},
	}
	for _, s := range sends {
		if r := e.do(t, "acme", "POST", s.path, s.body); r.status != 429 {
			t.Errorf("POST %s %s at the run limit: %d %s, want 429", s.path, s.body, r.status, r.body)
		}
	}
	for _, q := range []string{"1", "TRUE", "True", "t"} {
		if k := classifyURL(httptest.NewRequest("POST", "/v1/agents/echo/messages?stream="+q, nil)); !k.stream || !k.run {
			t.Errorf("?stream=%s is classified %+v, want a run and a stream", q, k)
		}
	}
	if k := classifyURL(httptest.NewRequest("POST", "/v1/agents/echo/messages?stream=0", nil)); k.stream {
		t.Errorf("?stream=0 is classified as a stream")
	}
}

// TestPartsAsTheFacesRead: max_parts holds for a "parts" key in any case
// or spelled with escapes, since the faces' decoders accept those.
func TestPartsAsTheFacesRead(t *testing.T) {
	e := newEdge(t, Options{MaxParts: 2})
	three := `[{"text":"a"},{"text":"b"},{"text":"c"}]`
	for _, c := range []struct{ path, body string }{
		{"/v1/agents/echo/messages", `{"message":{"role":"user","Parts":` + three + `}}`},
		{"/v1/agents/echo/messages", `{"message":{"role":"user","p\u0061rts":` + three + `}}`},
		{"/agents/echo/rest/message:send", `{"message":{"PARTS":` + three + `}}`},
		{"/agents/echo/jsonrpc", `{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"p\u0041rts":` + three + `}}}`},
	} {
		if r := e.do(t, "acme", "POST", c.path, c.body); r.status != 400 || !strings.Contains(r.body, "3 parts; at most 2") {
			t.Errorf("POST %s %s: %d %s, want 400 naming 3 parts", c.path, c.body, r.status, r.body)
		}
	}
}
