package a2a

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"agentd/internal/errdefs"
)

// TestWebhookClientChecksTheDialledAddress: the client refuses a private
// address when it connects — whatever the URL names, an IP or a host name
// that resolves there (DNS rebinding after the config-time check) — and
// the refusal is not retried; with AllowPrivate it connects.
func TestWebhookClientChecksTheDialledAddress(t *testing.T) {
	hits := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		hits++
		w.WriteHeader(http.StatusNoContent)
	}))
	defer srv.Close()
	byName := strings.Replace(srv.URL, "127.0.0.1", "localhost", 1)
	for _, u := range []string{srv.URL, byName} {
		d := &deliverer{opts: PushOptions{Timeout: time.Second}}
		d.client = newWebhookClient(d.opts)
		err := d.post(context.Background(), webhook{URL: u}, []byte(`{}`))
		if errdefs.ClassOf(err) != errdefs.ClassForbidden || retryableDelivery(err) {
			t.Errorf("post to %s without allow_private: got %v (class %s, retryable %v), want a Forbidden refusal, not retried",
				u, err, errdefs.ClassOf(err), retryableDelivery(err))
		}
	}
	if hits != 0 {
		t.Fatalf("the webhook was reached %d times", hits)
	}
	d := &deliverer{opts: PushOptions{Timeout: time.Second, AllowPrivate: true}}
	d.client = newWebhookClient(d.opts)
	if err := d.post(context.Background(), webhook{URL: srv.URL}, []byte(`{}`)); err != nil || hits != 1 {
		t.Fatalf("post with allow_private: %v (hits %d), want delivered", err, hits)
	}
}

// TestDeliveryRetryClassification: what another attempt may cure.
func TestDeliveryRetryClassification(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want bool
	}{
		{webhookStatus(500), true}, {webhookStatus(503), true}, {webhookStatus(429), true}, {webhookStatus(408), true},
		{webhookStatus(400), false}, {webhookStatus(404), false}, {webhookStatus(302), false},
		{errdefs.Forbiddenf("address 10.0.0.1 is private"), false},
		{context.DeadlineExceeded, true}, // the attempt's own timeout
		{context.Canceled, false},
	} {
		if got := retryableDelivery(tc.err); got != tc.want {
			t.Errorf("retryableDelivery(%v) = %v, want %v", tc.err, got, tc.want)
		}
	}
}
