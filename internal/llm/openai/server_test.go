package openai_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"agentd/internal/llm/openai"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// reply is one scripted answer of the fake server.
type reply struct {
	status int
	header map[string]string
	file   string // body from testdata
	body   string
	stall  bool // after the body, hang until the client goes away
	silent bool // never answer; hang until the client goes away
	hangUp bool // close the connection without answering
}

// fakeServer replays recorded answers in order (the last one repeats) and
// records what it was sent.
type fakeServer struct {
	*httptest.Server
	t       *testing.T
	replies []reply

	mu       sync.Mutex
	requests [][]byte
	headers  []http.Header
}

func newServer(t *testing.T, replies ...reply) *fakeServer {
	t.Helper()
	s := &fakeServer{t: t, replies: replies}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.Close)
	return s
}

func (s *fakeServer) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	s.mu.Lock()
	n := len(s.requests)
	s.requests = append(s.requests, body)
	s.headers = append(s.headers, r.Header.Clone())
	s.mu.Unlock()
	if r.URL.Path != "/v1/chat/completions" || r.Method != http.MethodPost {
		http.Error(w, `{"error":{"message":"no such route"}}`, http.StatusNotFound)
		return
	}
	rp := s.replies[min(n, len(s.replies)-1)]
	if rp.silent {
		<-r.Context().Done()
		return
	}
	if rp.hangUp {
		conn, _, err := http.NewResponseController(w).Hijack()
		if err == nil {
			conn.Close()
		}
		return
	}
	content := []byte(rp.body)
	if rp.file != "" {
		var err error
		if content, err = os.ReadFile(filepath.Join("testdata", rp.file)); err != nil {
			s.t.Errorf("testdata: %v", err)
		}
	}
	ct := "text/event-stream"
	if filepath.Ext(rp.file) == ".json" {
		ct = "application/json"
	}
	w.Header().Set("Content-Type", ct)
	for k, v := range rp.header {
		w.Header().Set(k, v)
	}
	status := rp.status
	if status == 0 {
		status = http.StatusOK
	}
	w.WriteHeader(status)
	w.Write(content)
	if rp.stall {
		http.NewResponseController(w).Flush()
		<-r.Context().Done()
	}
}

func (s *fakeServer) requestCount() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.requests)
}

// client returns a client of s with fast retries; adjust tweaks the config.
func (s *fakeServer) client(t *testing.T, adjust func(*openai.Config)) *openai.Client {
	t.Helper()
	cfg := openai.Config{
		BaseURL:        s.URL + "/v1/",
		APIKey:         "sk-test-secret",
		Model:          "gpt-4o-mini",
		HTTPClient:     s.Client(),
		RetryBaseDelay: time.Millisecond,
		RetryMaxDelay:  2 * time.Second,
		IdleTimeout:    10 * time.Second,
	}
	if adjust != nil {
		adjust(&cfg)
	}
	c, err := openai.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c
}
