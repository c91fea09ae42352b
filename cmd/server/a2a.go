package main

import (
	"context"
	"log/slog"
	"time"

	"github.com/go-chi/chi/v5"

	"agentd/internal/a2a"
	"agentd/internal/config"
	"agentd/internal/push"
	runs "agentd/internal/run"
	"agentd/internal/runtime"
	"agentd/internal/telemetry"
)

// mountA2A serves every agent over A2A on router: the cards at
// /.well-known/agent-card.json and /agents/{id}/.well-known/agent-card.json,
// and the JSON-RPC and HTTP+JSON bindings under /agents/{id}/. It starts this replica's
// push-notification delivery (internal/push, its configs in st); stop ends it (handing its claims over to
// the other replicas) and waits for it.
//
// runBody builds the body of the Agent Protocol's run webhooks, which the
// same delivery carries (a2a.Options.RunWebhookBody).
func mountA2A(router chi.Router, rt *runtime.Runtime, st push.Store, cfg *config.Config, metrics *telemetry.Metrics, log *slog.Logger,
	runBody func(context.Context, runs.Task) ([]byte, error)) (stop func(), err error) {
	srv, err := a2a.New(rt, a2a.Options{
		PublicURL:    cfg.Server.PublicURL,
		DefaultAgent: cfg.Server.DefaultAgent,
		MaxBodyBytes: cfg.Server.MaxBodyBytes,
		KeepAlive:    cfg.Server.Heartbeat.Or(15 * time.Second),
		Security:     security(cfg),
		Push: a2a.PushOptions{
			AllowPrivate: cfg.Push.AllowPrivate,
			Timeout:      time.Duration(cfg.Push.Timeout),
			RetryFor:     time.Duration(cfg.Push.RetryFor),
			ClaimTTL:     time.Duration(cfg.Push.ClaimTTL),
			Observe:      func(d a2a.Delivery) { countDelivery(metrics, d) },
		},
		PushStore:      st,
		RunWebhookBody: runBody,
		Logger:         log,
	})
	if err != nil {
		return nil, err
	}
	srv.Mount(router)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		srv.DeliverPushes(ctx)
	}()
	return func() { cancel(); <-done }, nil
}

// countDelivery counts a push delivery in the webhook metrics: each
// attempt that failed and was retried, then the update delivered or
// dropped (given up).
func countDelivery(m *telemetry.Metrics, d a2a.Delivery) {
	for range d.Attempts - 1 {
		m.WebhookDelivery("failed")
		m.WebhookRetry()
	}
	if d.Err != nil {
		m.WebhookDelivery("dropped")
		return
	}
	m.WebhookDelivery("delivered")
}
