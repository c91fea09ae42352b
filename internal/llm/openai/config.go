package openai

import (
	"fmt"
	"log/slog"
	"net/http"
	"time"
)

// Config configures a Client. The zero value of every field but BaseURL
// has a usable default.
type Config struct {
	// BaseURL is the API root, e.g. "https://api.openai.com/v1" or
	// "http://127.0.0.1:11434/v1"; "/chat/completions" is appended.
	BaseURL string
	// APIKey is sent as a bearer token; empty sends none (local servers).
	// The caller reads it from the environment; it is never logged.
	APIKey string
	// Model is used when a request names none.
	Model string
	// Headers are added to every request (e.g. OpenAI-Organization).
	Headers map[string]string
	// IdleTimeout ends an attempt that receives no bytes for this long,
	// while waiting for the response as well as mid-stream. Default 2m:
	// local servers may process a long prompt before the first byte.
	IdleTimeout time.Duration
	// MaxRetries bounds retries of one request. 0 means 3; negative
	// disables retries.
	MaxRetries int
	// RetryBaseDelay is the first backoff (doubled per retry, with jitter).
	// Default 500ms.
	RetryBaseDelay time.Duration
	// RetryMaxDelay caps a backoff. A Retry-After longer than this gives up
	// at once rather than waiting. Default 30s.
	RetryMaxDelay time.Duration
	// HTTPClient sends the requests. Its Timeout must be zero (streams are
	// long; IdleTimeout guards them). Default: a client on
	// http.DefaultTransport.
	HTTPClient *http.Client
	// OnRetry, if set, is told about each retry before its wait (for logs
	// and metrics). attempt counts from 1.
	OnRetry func(attempt int, wait time.Duration, err error)
}

const (
	defaultIdleTimeout    = 2 * time.Minute
	defaultMaxRetries     = 3
	defaultRetryBaseDelay = 500 * time.Millisecond
	defaultRetryMaxDelay  = 30 * time.Second
)

func (c Config) withDefaults() Config {
	if c.IdleTimeout <= 0 {
		c.IdleTimeout = defaultIdleTimeout
	}
	switch {
	case c.MaxRetries == 0:
		c.MaxRetries = defaultMaxRetries
	case c.MaxRetries < 0:
		c.MaxRetries = 0
	}
	if c.RetryBaseDelay <= 0 {
		c.RetryBaseDelay = defaultRetryBaseDelay
	}
	if c.RetryMaxDelay <= 0 {
		c.RetryMaxDelay = defaultRetryMaxDelay
	}
	if c.HTTPClient == nil {
		c.HTTPClient = &http.Client{}
	}
	return c
}

// String describes the configuration without the API key.
func (c Config) String() string {
	return fmt.Sprintf("openai{base_url=%s model=%s api_key=%s idle_timeout=%s max_retries=%d}",
		c.BaseURL, c.Model, redact(c.APIKey), c.IdleTimeout, c.MaxRetries)
}

// LogValue keeps the API key out of structured logs.
func (c Config) LogValue() slog.Value {
	return slog.GroupValue(
		slog.String("base_url", c.BaseURL),
		slog.String("model", c.Model),
		slog.String("api_key", redact(c.APIKey)),
		slog.Duration("idle_timeout", c.IdleTimeout),
		slog.Int("max_retries", c.MaxRetries),
	)
}

func redact(key string) string {
	if key == "" {
		return "(none)"
	}
	return "(set)"
}

// GoString keeps the API key out of %#v.
func (c Config) GoString() string { return c.String() }
