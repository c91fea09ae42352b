package errdefs

import (
	"context"
	"errors"
	"fmt"
	"net/http"
)

// Class names one kind of failure. The zero value means "unclassified".
type Class string

// The error classes every layer of agentd agrees on.
const (
	ClassValidation     Class = "validation"
	ClassNotFound       Class = "not_found"
	ClassConflict       Class = "conflict"
	ClassNotAvailable   Class = "not_available"
	ClassUnauthorized   Class = "unauthorized"
	ClassForbidden      Class = "forbidden"
	ClassInterrupted    Class = "interrupted"
	ClassAborted        Class = "aborted"
	ClassBudgetExceeded Class = "budget_exceeded"
	ClassRateLimit      Class = "rate_limit"
	ClassTimeout        Class = "timeout"
	// ClassModelOutput is a model's answer the agent could not use (one
	// that never matched its response schema): the run's input was fine
	// and nothing in agentd broke.
	ClassModelOutput Class = "model_output"
	ClassInternal    Class = "internal"
)

// Classifier is the marker interface of a classified error. Any error type,
// in any package, joins a class by implementing it; the Is… predicates find it
// anywhere in a wrap chain (errors.As semantics), so the outermost classified
// error decides.
type Classifier interface {
	error
	ErrorClass() Class
}

// classified attaches a Class to an error without changing its message.
type classified struct {
	class Class
	err   error
}

func (e *classified) Error() string     { return e.err.Error() }
func (e *classified) Unwrap() error     { return e.err }
func (e *classified) ErrorClass() Class { return e.class }

// New wraps err in class c. A nil err stays nil so call sites can wrap
// unconditionally.
func New(c Class, err error) error {
	if err == nil {
		return nil
	}
	return &classified{class: c, err: err}
}

// Newf formats a message and classifies it; %w in format wraps as usual.
func Newf(c Class, format string, args ...any) error {
	return &classified{class: c, err: fmt.Errorf(format, args...)}
}

// ClassOf returns the class of the outermost classified error in err's chain,
// ClassInternal for an unclassified non-nil error, and "" for nil.
// context.Canceled and context.DeadlineExceeded are classified as Aborted and
// Timeout when nothing in front of them says otherwise.
func ClassOf(err error) Class {
	if err == nil {
		return ""
	}
	var c Classifier
	if errors.As(err, &c) {
		return c.ErrorClass()
	}
	if errors.Is(err, context.Canceled) {
		return ClassAborted
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return ClassTimeout
	}
	return ClassInternal
}

// Is reports whether err belongs to class c.
func Is(err error, c Class) bool { return err != nil && ClassOf(err) == c }

// HTTPStatus maps an error's class to the HTTP status code agentd answers
// with. It is the only place that mapping is written down.
func HTTPStatus(err error) int {
	switch ClassOf(err) {
	case "":
		return http.StatusOK
	case ClassValidation:
		return http.StatusBadRequest
	case ClassNotFound:
		return http.StatusNotFound
	case ClassConflict, ClassInterrupted:
		return http.StatusConflict
	case ClassNotAvailable:
		// Absent capability or unreachable dependency: both "not now, not
		// here" — 503 tells clients and load balancers they may retry.
		return http.StatusServiceUnavailable
	case ClassUnauthorized:
		return http.StatusUnauthorized
	case ClassForbidden:
		return http.StatusForbidden
	case ClassAborted:
		return 499 // client closed request (nginx convention)
	case ClassBudgetExceeded:
		return http.StatusPaymentRequired
	case ClassRateLimit:
		return http.StatusTooManyRequests
	case ClassTimeout:
		return http.StatusGatewayTimeout
	case ClassModelOutput, ClassContentFilter:
		return http.StatusBadGateway // the upstream model's answer was unusable
	default:
		return http.StatusInternalServerError
	}
}

// FieldError says which member of a request an error is about (a path such
// as "context_id" or "message.parts[0].text"). It keeps the class of the
// error it wraps.
type FieldError struct {
	Field string
	Err   error
}

// Error names the field, then the reason.
func (e *FieldError) Error() string { return e.Field + ": " + e.Err.Error() }

// Unwrap returns the reason.
func (e *FieldError) Unwrap() error { return e.Err }

// WithField says err is about the request member field. A nil err stays nil.
func WithField(field string, err error) error {
	if err == nil {
		return nil
	}
	return &FieldError{Field: field, Err: err}
}

// FieldOf returns the field the outermost FieldError in err's chain names,
// or "".
func FieldOf(err error) string {
	var fe *FieldError
	if errors.As(err, &fe) {
		return fe.Field
	}
	return ""
}

// UnavailableDetail is all a client is told of a NotAvailable error that is
// not Public: the cause (a database's address, user or driver message) is
// for the server's log, never for the network.
const UnavailableDetail = "the service cannot reach its store right now; retry shortly"

// RetryAfterSeconds is the Retry-After a client gets with a NotAvailable
// answer.
const RetryAfterSeconds = "2"

// Public marks err's message as fit for clients whatever its class (a
// replica that is shutting down says so).
func Public(err error) error { return &publicError{err} }

// IsPublic reports whether err's message may reach clients as is: any
// class but NotAvailable and Internal, or an error marked Public.
func IsPublic(err error) bool {
	var p *publicError
	if errors.As(err, &p) {
		return true
	}
	c := ClassOf(err)
	return c != ClassNotAvailable && c != ClassInternal
}

// InternalDetail is all a client is told of an Internal error that is not
// Public.
const InternalDetail = "internal error; see the server log"

// ClientText is what a client may read of err, on every face and inside
// every stream: its message when IsPublic, else a text that names nothing
// internal (no store, user, database, host or port). It is the one place
// that decides; a caller that hides a cause logs it first.
func ClientText(err error) string {
	switch {
	case err == nil:
		return ""
	case IsPublic(err):
		return err.Error()
	case ClassOf(err) == ClassNotAvailable:
		return UnavailableDetail
	default:
		return InternalDetail
	}
}

type publicError struct{ error }

func (e *publicError) Unwrap() error { return e.error }
