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
// Run webhooks follow the push section's SSRF rule, timeout and retries.
// stop ends the webhook deliveries in flight.
func mountAgentProto(router chi.Router, rt *runtime.Runtime, cfg *config.Config, log *slog.Logger) (stop func()) {
	srv := agentproto.New(rt, agentproto.Options{
		MaxBodyBytes: cfg.Server.MaxBodyBytes,
		Heartbeat:    cfg.Server.Heartbeat.Or(15 * time.Second),
		Webhook: agentproto.WebhookOptions{
			AllowPrivate: cfg.Push.AllowPrivate,
			Timeout:      time.Duration(cfg.Push.Timeout),
			RetryFor:     time.Duration(cfg.Push.RetryFor),
		},
		Logger: log,
	})
	srv.Mount(router)
	return srv.Close
}
