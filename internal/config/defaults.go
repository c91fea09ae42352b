package config

import "time"

// DefaultLoopTimeout bounds one attempt of a loop agent's run when the
// agent sets no timeout: a model that never stops calling tools, or a tool
// that hangs past its own limits, ends the run with class timeout rather
// than hold a worker for ever. Set timeout to change it.
const DefaultLoopTimeout = 10 * time.Minute

// attemptTimeout is agent a's timeout, with the loop engine's default.
func attemptTimeout(a Agent) time.Duration {
	if a.Timeout == 0 && a.Engine == "loop" {
		return DefaultLoopTimeout
	}
	return time.Duration(a.Timeout)
}
