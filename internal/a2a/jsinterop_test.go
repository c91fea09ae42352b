package a2a_test

import (
	"testing"
	"time"

	"agentd/internal/nodetest"
)

// TestInteropJS runs the official @a2a-js/sdk client (interop/js) against
// a real server: card discovery, send, stream, resubscribe, push
// notifications, cancel, errors, over JSON-RPC and HTTP+JSON. It skips only when node or the installed
// packages are missing and REQUIRE_INTEROP is unset (CI sets it, and
// .ci/run installs the packages with npm ci).
func TestInteropJS(t *testing.T) {
	node, dir := nodetest.Find(t, "@a2a-js/sdk")
	e, _ := newPushEnv(t) // the script's webhooks listen on loopback
	nodetest.Run(t, node, dir, e.base, "interop.mjs", 60*time.Second, nil)
}
