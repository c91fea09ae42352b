package config

import (
	"bytes"
	"encoding/json"
	"fmt"
	"time"
)

// Push configures the delivery of A2A push notifications (webhooks).
type Push struct {
	// AllowPrivate permits webhooks on loopback, private and link-local
	// addresses (cloud metadata included), which are otherwise refused
	// when a client sets a config and again when delivery connects. For
	// tests and labs; the demo configuration sets it, as it listens on
	// loopback.
	AllowPrivate bool `json:"allow_private,omitempty"`
	// Timeout bounds one delivery attempt, connect to answer (default 10s).
	Timeout Duration `json:"timeout,omitempty"`
	// RetryFor bounds how long one update is retried, with exponential
	// backoff and jitter, before it is given up (default 5m).
	RetryFor Duration `json:"retry_for,omitempty"`
	// ClaimTTL is how long a replica's claim on delivering a config lasts
	// without renewal (default 5s): a killed replica's deliveries resume
	// on another replica after it.
	ClaimTTL Duration `json:"claim_ttl,omitempty"`
}

// minClaimTTL bounds push.claim_ttl from below: a replica renews its
// claims every claim_ttl/3, and a shorter claim would expire under
// ordinary store latency, handing deliveries back and forth.
const minClaimTTL = time.Second

// pushDurations are the section's durations, each with its default.
var pushDurations = []struct {
	key string
	def time.Duration
}{{"timeout", 10 * time.Second}, {"retry_for", 5 * time.Minute}, {"claim_ttl", 5 * time.Second}}

// UnmarshalJSON decodes and checks the section: every duration given
// must be positive (leave it out for its default), claim_ttl at least
// minClaimTTL. Errors name the key's path.
func (p *Push) UnmarshalJSON(b []byte) error {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(b, &raw); err != nil {
		return fmt.Errorf("push: want a mapping, got %s", b)
	}
	for _, f := range pushDurations {
		v, ok := raw[f.key]
		if !ok {
			continue
		}
		var d Duration
		if err := json.Unmarshal(v, &d); err != nil {
			return fmt.Errorf("push.%s: %v", f.key, err)
		}
		if d == 0 {
			return fmt.Errorf("push.%s: must be positive, got %s (leave it out for the default %v)", f.key, v, f.def)
		}
	}
	type plain Push
	var out plain
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&out); err != nil {
		return fmt.Errorf("push: %v", err)
	}
	if out.ClaimTTL != 0 && time.Duration(out.ClaimTTL) < minClaimTTL {
		return fmt.Errorf("push.claim_ttl: %v is too short, want at least %v (a replica renews its claims every claim_ttl/3)", time.Duration(out.ClaimTTL), minClaimTTL)
	}
	*p = Push(out)
	return nil
}
