package remote

import (
	"context"
	"errors"
	"strings"
	"testing"

	"agentd/internal/errdefs"
)

// An HTTP status the peer answered with is said as such, not as the peer
// being unreachable: credentials refused, a request refused, a failing
// peer; a connection that fails is unreachable.
func TestClassifyTransportNamesHTTPStatuses(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct {
		err   string
		class errdefs.Class
		says  string
	}{
		{"unexpected HTTP status: 401 Unauthorized", errdefs.ClassUnauthorized, "refused our credentials (HTTP 401)"},
		{"unexpected HTTP status: 403 Forbidden", errdefs.ClassUnauthorized, "refused our credentials (HTTP 403)"},
		{"unexpected HTTP status: 404 Not Found", errdefs.ClassValidation, "refused the request (HTTP 404)"},
		{"unexpected HTTP status: 502 Bad Gateway", errdefs.ClassNotAvailable, "failing (HTTP 502)"},
		{"dial tcp 127.0.0.1:1: connect: connection refused", errdefs.ClassNotAvailable, "peer unreachable"},
	} {
		got := classifyTransport(ctx, "peer p", errors.New(c.err))
		if errdefs.ClassOf(got) != c.class || !strings.Contains(got.Error(), c.says) {
			t.Errorf("%q: %v (class %s), want class %s saying %q", c.err, got, errdefs.ClassOf(got), c.class, c.says)
		}
	}
}
