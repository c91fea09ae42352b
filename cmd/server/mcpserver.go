package main

import (
	"log/slog"

	"github.com/go-chi/chi/v5"

	"agentd/internal/config"
	"agentd/internal/mcpserver"
	"agentd/internal/runtime"
)

// mountMCP serves every agent as an MCP tool on router: /mcp lists them
// all, /mcp/agents/{id} one. The routes sit behind the same edge
// (authentication, limits, telemetry) as every other. stop ends the
// legacy sessions clients left open.
func mountMCP(router chi.Router, rt *runtime.Runtime, cfg *config.Config, log *slog.Logger) (stop func()) {
	s := mcpserver.New(rt, mcpserver.Options{
		MaxBodyBytes: cfg.Server.MaxBodyBytes,
		Proxied:      cfg.Server.PublicURL != "",
		Logger:       log,
	})
	s.Mount(router)
	return s.Close
}
