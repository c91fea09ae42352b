package push

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
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
		d := &Deliverer{opts: Options{Timeout: time.Second}}
		d.client = newWebhookClient(d.opts)
		err := d.post(context.Background(), Target{URL: u}, []byte(`{}`))
		if errdefs.ClassOf(err) != errdefs.ClassForbidden || retryableDelivery(err) {
			t.Errorf("post to %s without allow_private: got %v (class %s, retryable %v), want a Forbidden refusal, not retried",
				u, err, errdefs.ClassOf(err), retryableDelivery(err))
		}
	}
	if hits != 0 {
		t.Fatalf("the webhook was reached %d times", hits)
	}
	d := &Deliverer{opts: Options{Timeout: time.Second, AllowPrivate: true}}
	d.client = newWebhookClient(d.opts)
	if err := d.post(context.Background(), Target{URL: srv.URL}, []byte(`{}`)); err != nil || hits != 1 {
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

// down is a webhook that answers 503 to everything, counting requests.
func down(t *testing.T) (url string, hits *atomic.Int64) {
	hits = new(atomic.Int64)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		hits.Add(1)
		w.WriteHeader(http.StatusServiceUnavailable)
	}))
	t.Cleanup(srv.Close)
	return srv.URL, hits
}

// fakeClock is a retryClock whose sleeps pass at once, advancing its time
// and recording each pause, and whose chance is rand.
func fakeClock(pauses *[]time.Duration, rand func(time.Duration) time.Duration) retryClock {
	now := time.Unix(1e9, 0)
	return retryClock{
		Now: func() time.Time { return now },
		Sleep: func(_ context.Context, d time.Duration) error {
			*pauses = append(*pauses, d)
			now = now.Add(d)
			return nil
		},
		Rand: rand,
	}
}

// TestSendBacksOffWithJitterWithinRetryFor: against a webhook that
// answers 503 forever, send retries with pauses from 100 ms doubling to
// 10 s, each spread by the jitter (here at its two extremes, taken in
// turn), stops before a pause would pass retry_for, and gives the update
// up with the last failure.
func TestSendBacksOffWithJitterWithinRetryFor(t *testing.T) {
	url, hits := down(t)
	var pauses []time.Duration
	turn := 0
	extremes := func(n time.Duration) time.Duration {
		turn++
		if turn%2 == 0 {
			return n - 1
		}
		return 0
	}
	d := &Deliverer{opts: Options{Timeout: time.Second, RetryFor: time.Minute, AllowPrivate: true}, clock: fakeClock(&pauses, extremes)}
	d.client = newWebhookClient(d.opts)
	attempts, err := d.send(context.Background(), Target{URL: url}, []byte(`{}`), false)
	var st webhookStatus
	if !errors.As(err, &st) || st != 503 {
		t.Fatalf("send to a webhook down: %v, want its 503", err)
	}
	if attempts != len(pauses)+1 || int64(attempts) != hits.Load() {
		t.Errorf("%d attempts, %d pauses, %d requests: want one more attempt than pauses, each a request", attempts, len(pauses), hits.Load())
	}
	var total time.Duration
	wait := backoffMin
	for i, p := range pauses {
		want := wait / 2 // jitter at its low end
		if i%2 == 1 {
			want = wait/2 + wait - 1 // at its high end
		}
		if p != want {
			t.Errorf("pause %d: %v, want %v (backoff %v, jitter ±50%%)", i+1, p, want, wait)
		}
		total += p
		wait = min(2*wait, backoffMax)
	}
	next := wait / 2 // the pause send drew last and did not take
	if len(pauses)%2 == 1 {
		next = wait/2 + wait - 1
	}
	if total > time.Minute || total+next <= time.Minute {
		t.Errorf("paused %v in all (%d pauses): want up to retry_for (1m), stopping only when the next pause would pass it", total, len(pauses))
	}
	if len(pauses) < 10 || pauses[len(pauses)-1] < backoffMax/2 {
		t.Errorf("pauses %v: want the backoff to grow to its cap", pauses)
	}
}

// TestSendOnceMakesOneAttempt: with the circuit open, an update gets one
// attempt and no pause.
func TestSendOnceMakesOneAttempt(t *testing.T) {
	url, hits := down(t)
	var pauses []time.Duration
	d := &Deliverer{opts: Options{Timeout: time.Second, RetryFor: time.Minute, AllowPrivate: true}, clock: fakeClock(&pauses, nil)}
	d.client = newWebhookClient(d.opts)
	attempts, err := d.send(context.Background(), Target{URL: url}, []byte(`{}`), true)
	if attempts != 1 || hits.Load() != 1 || len(pauses) != 0 || err == nil {
		t.Errorf("send once: %d attempts, %d requests, pauses %v, err %v; want one failed attempt, no pause", attempts, hits.Load(), pauses, err)
	}
}

// TestJitterSpreadsPauses: the real jitter keeps a pause within ±50 % of
// the backoff and spreads it over that range.
func TestJitterSpreadsPauses(t *testing.T) {
	const d = time.Second
	lo, hi := d, time.Duration(0)
	for range 2000 {
		p := retryClock{}.jitter(d)
		if p < d/2 || p >= d*3/2 {
			t.Fatalf("jitter(%v) = %v, want within [%v, %v)", d, p, d/2, d*3/2)
		}
		lo, hi = min(lo, p), max(hi, p)
	}
	if lo > d*6/10 || hi < d*14/10 {
		t.Errorf("2000 pauses of a 1s backoff spread over [%v, %v] only", lo, hi)
	}
}
