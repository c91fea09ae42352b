package remote

import (
	"errors"
	"testing"
	"time"

	"agentd/internal/errdefs"
)

func TestBreaker(t *testing.T) {
	now := time.Unix(0, 0)
	b := &breaker{failures: 2, cooldown: time.Minute, now: func() time.Time { return now }}
	down := errdefs.NotAvailable(errors.New("connection refused"))
	steps := []struct {
		name    string
		outcome error // recorded after an allowed call
		allowed bool
		advance time.Duration
	}{
		{"first call", down, true, 0},
		{"second call", down, true, 0},
		{"open", nil, false, 30 * time.Second},
		{"still open", nil, false, 31 * time.Second},
		{"half-open trial fails", down, true, 0},
		{"reopened", nil, false, time.Minute + time.Second},
		{"a trial without an outcome", nil, true, 0},
		{"no second trial in the same cooldown", nil, false, time.Minute + time.Second},
		{"trial succeeds", nil, true, 0},
		{"closed", errdefs.Validationf("rejected"), true, 0},
		{"a rejection keeps it closed", nil, true, 0},
	}
	for _, s := range steps {
		err := b.allow("p")
		if (err == nil) != s.allowed {
			t.Fatalf("%s: allow = %v, want allowed %v", s.name, err, s.allowed)
		}
		if err != nil && !errdefs.IsNotAvailable(err) {
			t.Fatalf("%s: %v is not NotAvailable", s.name, err)
		}
		if err == nil && (s.outcome != nil || s.name != "a trial without an outcome") {
			b.record(s.outcome)
		}
		now = now.Add(s.advance)
	}
}
