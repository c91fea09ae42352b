// Package logctx carries the server's logger in a request's context, for
// the code that logs a request's failure but holds no logger of its own
// (the REST and A2A error writers). Logging through it with the request's
// context (WarnContext, …) lets the trace-aware handler add the
// request's trace_id and span_id.
//
// The server attaches the logger only while tracing is on (Middleware),
// so requests cost nothing more otherwise; From falls back to
// slog.Default.
//
// Imports: none.
package logctx

import (
	"context"
	"log/slog"
	"net/http"
)

type key struct{}

// With returns ctx carrying log.
func With(ctx context.Context, log *slog.Logger) context.Context {
	return context.WithValue(ctx, key{}, log)
}

// From returns the logger ctx carries, or slog.Default.
func From(ctx context.Context) *slog.Logger {
	if l, ok := ctx.Value(key{}).(*slog.Logger); ok {
		return l
	}
	return slog.Default()
}

// Middleware attaches log to every request's context.
func Middleware(log *slog.Logger, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		next.ServeHTTP(w, r.WithContext(With(r.Context(), log)))
	})
}
