package openai_test

import (
	"context"
	"errors"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"agentd/internal/errdefs"
	"agentd/internal/llm"
	"agentd/internal/llm/openai"
)

func TestErrorStatuses(t *testing.T) {
	tests := []struct {
		name  string
		reply reply
		class errdefs.Class
		want  []string
	}{
		{"401", reply{status: 401, file: "error_401.json"}, errdefs.ClassUnauthorized,
			[]string{"401 Unauthorized", "Incorrect API key provided"}},
		{"404 model", reply{status: 404, file: "error_404_ollama.json"}, errdefs.ClassNotFound,
			[]string{`model "gpt-4o-mini" not found, or the URL is wrong`, "/v1/chat/completions", `model "llama9" not found`}},
		{"400", reply{status: 400, file: "error_400.json"}, errdefs.ClassValidation,
			[]string{"400 Bad Request", "must be a response to a preceeding message"}},
		{"400 vLLM shape", reply{status: 400, file: "error_400_vllm.json"}, errdefs.ClassValidation,
			[]string{"maximum context length is 8192 tokens"}},
		{"403 plain text", reply{status: 403, body: "forbidden by proxy"}, errdefs.ClassForbidden,
			[]string{"forbidden by proxy"}},
		{"429 out of quota", reply{status: 429, file: "error_429_quota.json"}, errdefs.ClassBudgetExceeded,
			[]string{"exceeded your current quota"}},
		{"429 wait too long", reply{status: 429, file: "error_429.json", header: map[string]string{"Retry-After": "120"}},
			errdefs.ClassRateLimit, []string{"Rate limit reached", "retry after 2m0s"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			srv := newServer(t, tc.reply)
			_, err := srv.client(t, nil).Stream(context.Background(), userTurn("hi"))
			if errdefs.ClassOf(err) != tc.class {
				t.Fatalf("err = %v (class %s), want class %s", err, errdefs.ClassOf(err), tc.class)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("err = %q, want it to contain %q", err, w)
				}
			}
			if strings.Contains(err.Error(), "sk-test-secret") {
				t.Errorf("error leaks the API key: %v", err)
			}
			if n := srv.requestCount(); n != 1 {
				t.Errorf("server saw %d requests, want 1 (no retry)", n)
			}
		})
	}
}

// retries records OnRetry calls.
type retries struct {
	mu    sync.Mutex
	waits []time.Duration
	errs  []error
}

func (r *retries) hook(c *openai.Config) {
	c.OnRetry = func(_ int, wait time.Duration, err error) {
		r.mu.Lock()
		defer r.mu.Unlock()
		r.waits = append(r.waits, wait)
		r.errs = append(r.errs, err)
	}
}

func TestRetriesBeforeTheStream(t *testing.T) {
	tests := []struct {
		name    string
		replies []reply
		classes []errdefs.Class // of the retried errors
	}{
		{"5xx then success", []reply{{status: 503, body: "overloaded"}, {status: 502}, {file: "vllm_usage_every_chunk.sse"}},
			[]errdefs.Class{errdefs.ClassNotAvailable, errdefs.ClassNotAvailable}},
		{"connection dropped then success", []reply{{hangUp: true}, {file: "vllm_usage_every_chunk.sse"}},
			[]errdefs.Class{errdefs.ClassNotAvailable}},
		{"429 then success", []reply{{status: 429, file: "error_429.json"}, {file: "vllm_usage_every_chunk.sse"}},
			[]errdefs.Class{errdefs.ClassRateLimit}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			srv := newServer(t, tc.replies...)
			var r retries
			s, err := srv.client(t, r.hook).Stream(context.Background(), userTurn("hi"))
			if err != nil {
				t.Fatal(err)
			}
			msg, _, _, err := llm.Collect(s)
			if err != nil || msg.Text() != "The capital of France is Paris." {
				t.Fatalf("Collect = %q, %v", msg.Text(), err)
			}
			if len(r.errs) != len(tc.classes) {
				t.Fatalf("retried %d times (%v), want %d", len(r.errs), r.errs, len(tc.classes))
			}
			for i, c := range tc.classes {
				if errdefs.ClassOf(r.errs[i]) != c {
					t.Errorf("retry %d after %v, want class %s", i+1, r.errs[i], c)
				}
				if r.waits[i] <= 0 || r.waits[i] > 2*time.Second {
					t.Errorf("retry %d waited %s, want a backoff within (0, RetryMaxDelay]", i+1, r.waits[i])
				}
			}
		})
	}
}

func TestRetryAfterIsHonoured(t *testing.T) {
	srv := newServer(t,
		reply{status: 429, file: "error_429.json", header: map[string]string{"Retry-After": "1"}},
		reply{file: "vllm_usage_every_chunk.sse"})
	var r retries
	s, err := srv.client(t, r.hook).Stream(context.Background(), userTurn("hi"))
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	if len(r.waits) != 1 || r.waits[0] != time.Second {
		t.Errorf("waits = %v, want [1s] from Retry-After", r.waits)
	}
}

func TestRateLimitAfterRetries(t *testing.T) {
	srv := newServer(t, reply{status: 429, file: "error_429.json", header: map[string]string{"Retry-After-Ms": "1"}})
	var r retries
	_, err := srv.client(t, func(c *openai.Config) { c.MaxRetries = 2; r.hook(c) }).Stream(context.Background(), userTurn("hi"))
	if !errdefs.IsRateLimit(err) || !strings.Contains(err.Error(), "after 2 retries") || !strings.Contains(err.Error(), "Rate limit reached") {
		t.Errorf("err = %v, want RateLimit after 2 retries with the server's message", err)
	}
	if srv.requestCount() != 3 || len(r.waits) != 2 || r.waits[0] != time.Millisecond {
		t.Errorf("requests = %d, waits = %v; want 3 requests, waits of 1ms (retry-after-ms)", srv.requestCount(), r.waits)
	}
}

func TestNoRetriesWhenDisabled(t *testing.T) {
	srv := newServer(t, reply{status: 500})
	_, err := srv.client(t, func(c *openai.Config) { c.MaxRetries = -1 }).Stream(context.Background(), userTurn("hi"))
	if !errdefs.IsNotAvailable(err) || srv.requestCount() != 1 {
		t.Errorf("err = %v after %d requests, want NotAvailable after 1", err, srv.requestCount())
	}
}

func TestCancelDuringBackoff(t *testing.T) {
	srv := newServer(t, reply{status: 503})
	ctx, cancel := context.WithCancel(context.Background())
	c := srv.client(t, func(c *openai.Config) {
		c.RetryBaseDelay, c.RetryMaxDelay = time.Minute, time.Minute
		c.OnRetry = func(int, time.Duration, error) { cancel() }
	})
	if _, err := c.Stream(ctx, userTurn("hi")); !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v, want context.Canceled", err)
	}
}

func TestMidStreamErrorIsNotRetried(t *testing.T) {
	srv := newServer(t, reply{file: "midstream_error.sse"})
	s, err := srv.client(t, nil).Stream(context.Background(), userTurn("hi"))
	if err != nil {
		t.Fatal(err)
	}
	msg, _, _, err := llm.Collect(s)
	if !errdefs.IsNotAvailable(err) || !strings.Contains(err.Error(), "The server had an error while processing your request") {
		t.Errorf("err = %v, want NotAvailable with the server's message", err)
	}
	if msg.Text() != "Hello there" {
		t.Errorf("partial text = %q", msg.Text())
	}
	if srv.requestCount() != 1 {
		t.Errorf("server saw %d requests, want 1", srv.requestCount())
	}
}

func TestTruncatedStream(t *testing.T) {
	srv := newServer(t, reply{file: "truncated.sse"})
	s, err := srv.client(t, nil).Stream(context.Background(), userTurn("hi"))
	if err != nil {
		t.Fatal(err)
	}
	_, _, _, err = llm.Collect(s)
	if !errdefs.IsNotAvailable(err) || !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("err = %v, want NotAvailable wrapping io.ErrUnexpectedEOF", err)
	}
}

func TestIdleTimeout(t *testing.T) {
	tiny := func(c *openai.Config) { c.IdleTimeout = 50 * time.Millisecond; c.MaxRetries = -1 }

	t.Run("mid-stream", func(t *testing.T) {
		first := `data: {"choices":[{"index":0,"delta":{"content":"Hel"}}]}` + "\n\n"
		srv := newServer(t, reply{body: first, stall: true})
		s, err := srv.client(t, tiny).Stream(context.Background(), userTurn("hi"))
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		if c, err := s.Next(); err != nil || c.Text != "Hel" {
			t.Fatalf("first chunk = %+v, %v", c, err)
		}
		_, err = s.Next()
		if !errdefs.IsTimeout(err) || !strings.Contains(err.Error(), "no bytes for 50ms") {
			t.Errorf("err = %v, want a Timeout naming the idle timeout", err)
		}
		if _, again := s.Next(); !errors.Is(again, err) {
			t.Errorf("Next after the end = %v, want the same error", again)
		}
	})
	t.Run("before headers", func(t *testing.T) {
		srv := newServer(t, reply{silent: true})
		_, err := srv.client(t, tiny).Stream(context.Background(), userTurn("hi"))
		if !errdefs.IsTimeout(err) || !strings.Contains(err.Error(), "waiting for a response") {
			t.Errorf("err = %v, want a Timeout waiting for the response", err)
		}
	})
}

func TestCancelMidStream(t *testing.T) {
	first := `data: {"choices":[{"index":0,"delta":{"content":"Hel"}}]}` + "\n\n"
	srv := newServer(t, reply{body: first, stall: true})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	s, err := srv.client(t, nil).Stream(ctx, userTurn("hi"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.Next(); err != nil {
		t.Fatal(err)
	}
	cancel()
	if _, err := s.Next(); !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v, want context.Canceled", err)
	}
}

func TestClosedStream(t *testing.T) {
	srv := newServer(t, reply{file: "openai_tool_calls.sse"})
	s, err := srv.client(t, nil).Stream(context.Background(), userTurn("hi"))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Next(); !errors.Is(err, llm.ErrClosed) {
		t.Errorf("Next after Close = %v, want llm.ErrClosed", err)
	}
	if err := s.Close(); err != nil {
		t.Errorf("second Close = %v", err)
	}
}
