package a2a

import (
	"context"
	"errors"
	"fmt"

	"github.com/a2aproject/a2a-go/v2/a2a"

	"agentd/internal/errdefs"
	"agentd/internal/logctx"
	"agentd/internal/runtime"
)

// toA2AError maps an agentd error to the A2A error the transports encode
// (JSON-RPC code, HTTP status). It is the only place that mapping is
// written down; the message of the original error is kept, so the client
// learns what failed and with which input.
func toA2AError(ctx context.Context, err error) error {
	if err == nil {
		return nil
	}
	var ae *a2a.Error
	if errors.As(err, &ae) {
		return err
	}
	for _, sentinel := range []error{
		a2a.ErrParseError, a2a.ErrInvalidRequest, a2a.ErrMethodNotFound, a2a.ErrInvalidParams,
		a2a.ErrTaskNotFound, a2a.ErrTaskNotCancelable, a2a.ErrPushNotificationNotSupported,
		a2a.ErrUnsupportedOperation, a2a.ErrExtendedCardNotConfigured, a2a.ErrVersionNotSupported,
	} {
		if errors.Is(err, sentinel) {
			return err
		}
	}
	var code error
	switch {
	case errors.Is(err, runtime.ErrTaskTerminal):
		code = a2a.ErrUnsupportedOperation
	case errors.Is(err, runtime.ErrNotCancelable):
		code = a2a.ErrTaskNotCancelable
	case errors.Is(err, runtime.ErrUnsupportedContent):
		code = a2a.ErrUnsupportedContentType
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		// The transports answer these with their own codes (499/504).
		return err
	default:
		switch errdefs.ClassOf(err) {
		case errdefs.ClassNotFound:
			code = a2a.ErrTaskNotFound
		case errdefs.ClassValidation:
			code = a2a.ErrInvalidParams
		case errdefs.ClassConflict:
			// A busy context or a task that does not wait for input: the
			// operation is not possible in the task's current state.
			code = a2a.ErrUnsupportedOperation
		case errdefs.ClassNotAvailable:
			// A draining replica or a store outage: the request is fine
			// and worth retrying (elsewhere, or later). JSON-RPC -32000;
			// HTTP+JSON 503 (deferredWriter rewrites the transport's 500).
			code = a2a.ErrServerError
		case errdefs.ClassUnauthorized:
			code = a2a.ErrUnauthenticated
		case errdefs.ClassForbidden:
			code = a2a.ErrUnauthorized
		default:
			code = a2a.ErrInternalError
		}
	}
	if !errdefs.IsPublic(err) {
		// The cause may name hosts, users or drivers: it goes to the
		// log, the client gets what it can act on.
		logctx.From(ctx).WarnContext(ctx, "a2a request failed", "class", errdefs.ClassOf(err), "err", err)
	}
	return a2a.NewError(code, errdefs.ClientText(err))
}

// errTaskNotFound is the answer for a task that does not exist or belongs
// to another agent (agents never see each other's tasks).
func errTaskNotFound(id a2a.TaskID) error {
	return a2a.NewError(a2a.ErrTaskNotFound, "task "+string(id)+" not found")
}

// invalidParams reports a request field with a wrong value or shape.
func invalidParams(format string, args ...any) error {
	return a2a.NewError(a2a.ErrInvalidParams, fmt.Sprintf(format, args...))
}
