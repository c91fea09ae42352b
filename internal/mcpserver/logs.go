package mcpserver

import (
	"context"
	"log/slog"
)

// quiet is the logger the SDK gets: its warnings and errors, without the
// line per session it writes at info (every sessionless request is one).
func quiet(log *slog.Logger) *slog.Logger {
	return slog.New(minLevel{Handler: log.Handler(), min: slog.LevelWarn})
}

type minLevel struct {
	slog.Handler
	min slog.Level
}

func (h minLevel) Enabled(ctx context.Context, l slog.Level) bool {
	return l >= h.min && h.Handler.Enabled(ctx, l)
}

func (h minLevel) WithAttrs(as []slog.Attr) slog.Handler {
	return minLevel{Handler: h.Handler.WithAttrs(as), min: h.min}
}

func (h minLevel) WithGroup(name string) slog.Handler {
	return minLevel{Handler: h.Handler.WithGroup(name), min: h.min}
}
