package config

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
