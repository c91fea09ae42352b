package main

import (
	"log/slog"
	"time"

	"github.com/go-chi/chi/v5"

	"agentd/internal/agentproto"
	"agentd/internal/config"
	"agentd/internal/runtime"
)

// mountAgentProto serves the Agent Protocol (the LangGraph API that
// @langchain/langgraph-sdk speaks) under agentproto.Prefix on router,
// behind the same authentication, limits and telemetry as the other faces.
func mountAgentProto(router chi.Router, rt *runtime.Runtime, cfg *config.Config, log *slog.Logger) {
	agentproto.New(rt, agentproto.Options{
		MaxBodyBytes: cfg.Server.MaxBodyBytes,
		Heartbeat:    cfg.Server.Heartbeat.Or(15 * time.Second),
		Logger:       log,
	}).Mount(router)
}
