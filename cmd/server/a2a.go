package main

import (
	"log/slog"
	"time"

	"github.com/go-chi/chi/v5"

	"agentd/internal/a2a"
	"agentd/internal/config"
	"agentd/internal/runtime"
)

// mountA2A serves every agent over A2A on router: the cards at
// /.well-known/agent-card.json and /agents/{id}/.well-known/agent-card.json,
// and the JSON-RPC and HTTP+JSON bindings under /agents/{id}/.
func mountA2A(router chi.Router, rt *runtime.Runtime, cfg *config.Config, log *slog.Logger) error {
	srv, err := a2a.New(rt, a2a.Options{
		PublicURL:    cfg.Server.PublicURL,
		DefaultAgent: cfg.Server.DefaultAgent,
		MaxBodyBytes: cfg.Server.MaxBodyBytes,
		KeepAlive:    cfg.Server.Heartbeat.Or(15 * time.Second),
		Security:     security(cfg),
		Logger:       log,
	})
	if err != nil {
		return err
	}
	srv.Mount(router)
	return nil
}
