package config

import (
	"fmt"

	"agentd/internal/limits"
)

// Limits bounds what callers may ask of the server. Per-tenant limits are
// off (0) unless set; the server-wide ones have defaults.
type Limits struct {
	// RequestsPerSecond is each tenant's sustained request rate (token
	// bucket); Burst the requests it may make at once (default: the rate,
	// at least 1). 0 means unlimited.
	RequestsPerSecond float64 `json:"requests_per_second,omitempty"`
	Burst             int     `json:"burst,omitempty"`
	// ConcurrentRuns bounds each tenant's active (submitted or working)
	// runs; a send beyond it is refused with 429.
	ConcurrentRuns int `json:"concurrent_runs,omitempty"`
	// StreamsPerTenant bounds each tenant's open event streams (REST SSE
	// and A2A streaming); MaxStreams the server's (default 10000).
	StreamsPerTenant int `json:"streams_per_tenant,omitempty"`
	MaxStreams       int `json:"max_streams,omitempty"`
	// MaxJSONDepth bounds the nesting of request JSON (default 64, at most
	// 64); MaxParts the parts of one message (default 100).
	MaxJSONDepth int `json:"max_json_depth,omitempty"`
	MaxParts     int `json:"max_parts,omitempty"`
}

func (l Limits) validate() error {
	switch {
	case l.RequestsPerSecond < 0:
		return fmt.Errorf("limits.requests_per_second: must not be negative, got %v", l.RequestsPerSecond)
	case l.Burst < 0:
		return fmt.Errorf("limits.burst: must not be negative, got %d", l.Burst)
	case l.ConcurrentRuns < 0:
		return fmt.Errorf("limits.concurrent_runs: must not be negative, got %d", l.ConcurrentRuns)
	case l.StreamsPerTenant < 0:
		return fmt.Errorf("limits.streams_per_tenant: must not be negative, got %d", l.StreamsPerTenant)
	case l.MaxStreams < 0:
		return fmt.Errorf("limits.max_streams: must not be negative, got %d", l.MaxStreams)
	case l.MaxJSONDepth < 0 || l.MaxJSONDepth > limits.MaxJSONDepth:
		return fmt.Errorf("limits.max_json_depth: must be between 1 and %d, got %d", limits.MaxJSONDepth, l.MaxJSONDepth)
	case l.MaxParts < 0:
		return fmt.Errorf("limits.max_parts: must not be negative, got %d", l.MaxParts)
	}
	return nil
}

// Options are the limits as the limits package takes them; the server
// adds its body limit and its run counter.
func (l Limits) Options() limits.Options {
	return limits.Options{
		RequestsPerSecond: l.RequestsPerSecond, Burst: l.Burst,
		ConcurrentRuns: l.ConcurrentRuns, StreamsPerTenant: l.StreamsPerTenant, MaxStreams: l.MaxStreams,
		MaxJSONDepth: l.MaxJSONDepth, MaxParts: l.MaxParts,
	}
}
