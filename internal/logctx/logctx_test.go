package logctx

import (
	"bytes"
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestFrom(t *testing.T) {
	if From(context.Background()) != slog.Default() {
		t.Fatal("a context without a logger gives slog.Default")
	}
	var buf bytes.Buffer
	log := slog.New(slog.NewTextHandler(&buf, nil))
	h := Middleware(log, http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
		From(r.Context()).WarnContext(r.Context(), "request failed")
	}))
	h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", "/", nil))
	if !strings.Contains(buf.String(), "request failed") {
		t.Fatalf("the middleware's logger did not log: %q", buf.String())
	}
}
