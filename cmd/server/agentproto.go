package main

import (
	"log/slog"
	"time"

	"github.com/go-chi/chi/v5"

	"agentd/internal/agentproto"
	"agentd/internal/config"
	"agentd/internal/push"
	"agentd/internal/runtime"
)

// mountAgentProto serves the Agent Protocol (the LangGraph API that
// @langchain/langgraph-sdk speaks) under agentproto.Prefix on router,
// behind the same authentication, limits and telemetry as the other faces.
// Its run webhooks are delivered by the A2A push machinery (mountA2A,
// given the returned face's WebhookBody), under the push section's SSRF
// rule, timeout and retries. Its store routes serve mem, the long-term
// memory.
func mountAgentProto(router chi.Router, rt *runtime.Runtime, st push.Store, mem agentproto.Memory, cfg *config.Config, log *slog.Logger) *agentproto.Server {
	srv := agentproto.New(rt, agentproto.Options{
		MaxBodyBytes: cfg.Server.MaxBodyBytes,
		Heartbeat:    cfg.Server.Heartbeat.Or(15 * time.Second),
		Webhooks:     st,
		Memory:       mem,
		Logger:       log,
	})
	srv.Mount(router)
	return srv
}
