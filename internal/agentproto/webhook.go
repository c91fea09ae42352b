package agentproto

import (
	"context"
	"encoding/json"
	"net/url"

	"github.com/google/uuid"

	"agentd/internal/errdefs"
	runv "agentd/internal/run"
	"agentd/internal/runtime"
)

// A run's webhook is delivered by the push machinery (internal/push, with
// the A2A face's run feed, internal/a2a push_run.go), durably: the face
// stores it as a push config of the run's
// task marked "run", whose delivery any replica claims, with the push
// section's SSRF guard, timeout and retries; it gets one POST, the body
// WebhookBody builds, once the run stopped (ended, or waits for input).
// A replica that dies before the POST was taken leaves it to the next
// claim round on another replica (after the claim's TTL); one that dies
// after the POST but before saving it makes the receiver get it twice (at
// least once). The one gap: a replica that dies between storing the run
// and storing its webhook (two writes, the second right after the first)
// loses that webhook.

// checkWebhook refuses a webhook that is not an absolute http(s) URL.
func checkWebhook(raw string) error {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return badInput("webhook", "%q: want an absolute http or https URL", raw)
	}
	return nil
}

// webhookPrefix begins the id of a run webhook's push config.
const webhookPrefix = "lg-webhook-"

// registerWebhook stores hook as a run push config of the submission's
// task, its cursor at the submission's start: the events of an earlier
// attempt (a resumed run's first stop) are not this run's.
func (s *Server) registerWebhook(ctx context.Context, sub runtime.Submission, hook string) error {
	cfg, err := json.Marshal(map[string]any{"url": hook, "run": true})
	if err != nil {
		return err
	}
	if s.opts.Webhooks == nil {
		return errdefs.NotAvailablef("webhooks are not available on this server")
	}
	return s.opts.Webhooks.PutPushConfig(ctx, runv.PushConfig{
		TaskID: sub.Task.ID, ID: webhookPrefix + uuid.NewString(), Config: cfg, Delivered: sub.StartSeq,
	})
}

// WebhookBody is the body of a run's webhook: the run, with its final
// values, or its error (a2a.Options.RunWebhookBody).
func (s *Server) WebhookBody(ctx context.Context, t runv.Task) ([]byte, error) {
	body := map[string]any{}
	b, err := json.Marshal(runOf(t))
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal(b, &body); err != nil {
		return nil, err
	}
	out := s.outcomeOf(ctx, t)
	if e, ok := out["__error__"]; ok {
		body["error"] = e
	} else {
		body["values"] = out
	}
	return json.Marshal(body)
}
