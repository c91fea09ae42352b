package main

import (
	"log/slog"
	"time"

	"github.com/go-chi/chi/v5"

	"agentd/internal/agui"
	"agentd/internal/config"
	"agentd/internal/runtime"
)

// mountUI serves the UI protocols on router: AG-UI 1.0 under
// /ag-ui/agents/{id} and the AI SDK UI message stream under
// /ai-sdk/agents/{id}/chat. The router is the one protect wraps, so auth,
// tenants, limits and telemetry apply as to REST and A2A.
func mountUI(router chi.Router, rt *runtime.Runtime, cfg *config.Config, log *slog.Logger) {
	agui.New(rt, agui.Options{
		MaxBodyBytes: cfg.Server.MaxBodyBytes,
		Heartbeat:    cfg.Server.Heartbeat.Or(15 * time.Second),
		Logger:       log,
	}).Mount(router)
}
