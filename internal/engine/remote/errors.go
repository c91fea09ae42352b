package remote

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"strings"

	"github.com/a2aproject/a2a-go/v2/a2a"

	"agentd/internal/errdefs"
)

// classifyTransport classifies a failure to talk to the peer: the run's
// own context first (a cancel is not the peer's fault), then classes our
// own checks set (netguard's Forbidden, the size cap's Validation), then
// timeouts, and anything else as the peer being unreachable.
func classifyTransport(ctx context.Context, what string, err error) error {
	if ctx.Err() != nil {
		return fmt.Errorf("%s: %w", what, ctx.Err())
	}
	if c := errdefs.ClassOf(err); c != errdefs.ClassInternal {
		return fmt.Errorf("%s: %w", what, err)
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() || errors.Is(err, context.DeadlineExceeded) {
		return errdefs.Timeoutf("%s: %v", what, err)
	}
	switch code := httpStatusOf(err); {
	case code == http.StatusUnauthorized || code == http.StatusForbidden:
		return errdefs.Unauthorizedf("%s: the peer refused our credentials (HTTP %d); set the agent's auth", what, code)
	case code >= 400 && code < 500:
		return errdefs.Validationf("%s: the peer refused the request (HTTP %d)", what, code)
	case code >= 500:
		return errdefs.NotAvailablef("%s: the peer is failing (HTTP %d)", what, code)
	}
	return errdefs.NotAvailablef("%s: peer unreachable: %v", what, err)
}

// httpStatusOf is the HTTP status a2a-go's JSON-RPC client reports in its
// error text ("unexpected HTTP status: 401 Unauthorized", v2.4.0 pinned:
// it has no typed error for it), or 0.
func httpStatusOf(err error) int {
	_, rest, ok := strings.Cut(err.Error(), "unexpected HTTP status: ")
	if !ok || len(rest) < 3 {
		return 0
	}
	code, err := strconv.Atoi(rest[:3])
	if err != nil {
		return 0
	}
	return code
}

// classifyCall classifies an error from an a2a-go client call: errors
// the peer answered with say it rejected the request (Validation, with
// its message), authentication failures are Unauthorized, the rest is a
// transport failure.
func classifyCall(ctx context.Context, what string, err error) error {
	if ctx.Err() != nil {
		return fmt.Errorf("%s: %w", what, ctx.Err())
	}
	switch {
	case errors.Is(err, a2a.ErrUnauthenticated), errors.Is(err, a2a.ErrUnauthorized):
		return errdefs.Unauthorizedf("%s: the peer refused our credentials: %v", what, err)
	case errors.Is(err, a2a.ErrInvalidParams), errors.Is(err, a2a.ErrInvalidRequest),
		errors.Is(err, a2a.ErrUnsupportedOperation), errors.Is(err, a2a.ErrUnsupportedContentType),
		errors.Is(err, a2a.ErrTaskNotFound), errors.Is(err, a2a.ErrTaskNotCancelable),
		errors.Is(err, a2a.ErrMethodNotFound), errors.Is(err, a2a.ErrVersionNotSupported),
		errors.Is(err, a2a.ErrExtensionSupportRequired), errors.Is(err, a2a.ErrParseError):
		return errdefs.Validationf("%s: the peer rejected the request: %v", what, err)
	case errors.Is(err, a2a.ErrInternalError), errors.Is(err, a2a.ErrServerError), errors.Is(err, a2a.ErrInvalidAgentResponse):
		return errdefs.NotAvailablef("%s: the peer failed: %v", what, err)
	}
	return classifyTransport(ctx, what, err)
}
