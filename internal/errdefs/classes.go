package errdefs

// Validation marks err as bad input from the caller.
func Validation(err error) error { return New(ClassValidation, err) }

// Validationf formats and classifies a bad-input error.
func Validationf(format string, args ...any) error { return Newf(ClassValidation, format, args...) }

// IsValidation reports whether err is bad input.
func IsValidation(err error) bool { return Is(err, ClassValidation) }

// NotFound marks err as a missing resource.
func NotFound(err error) error { return New(ClassNotFound, err) }

// NotFoundf formats and classifies a missing-resource error.
func NotFoundf(format string, args ...any) error { return Newf(ClassNotFound, format, args...) }

// IsNotFound reports whether err is a missing resource.
func IsNotFound(err error) bool { return Is(err, ClassNotFound) }

// Conflict marks err as a clash with the current state (version mismatch,
// duplicate, busy context).
func Conflict(err error) error { return New(ClassConflict, err) }

// Conflictf formats and classifies a conflict.
func Conflictf(format string, args ...any) error { return Newf(ClassConflict, format, args...) }

// IsConflict reports whether err is a conflict.
func IsConflict(err error) bool { return Is(err, ClassConflict) }

// NotAvailable marks err as a capability that is absent or unsupported.
func NotAvailable(err error) error { return New(ClassNotAvailable, err) }

// NotAvailablef formats and classifies an absent capability.
func NotAvailablef(format string, args ...any) error { return Newf(ClassNotAvailable, format, args...) }

// IsNotAvailable reports whether err is an absent capability.
func IsNotAvailable(err error) bool { return Is(err, ClassNotAvailable) }

// Unauthorized marks err as missing or invalid credentials.
func Unauthorized(err error) error { return New(ClassUnauthorized, err) }

// Unauthorizedf formats and classifies missing credentials.
func Unauthorizedf(format string, args ...any) error { return Newf(ClassUnauthorized, format, args...) }

// IsUnauthorized reports whether err is missing credentials.
func IsUnauthorized(err error) bool { return Is(err, ClassUnauthorized) }

// Forbidden marks err as an authenticated caller lacking permission.
func Forbidden(err error) error { return New(ClassForbidden, err) }

// Forbiddenf formats and classifies a permission error.
func Forbiddenf(format string, args ...any) error { return Newf(ClassForbidden, format, args...) }

// IsForbidden reports whether err is a permission error.
func IsForbidden(err error) bool { return Is(err, ClassForbidden) }

// Interrupted marks err as a cooperative stop requested by the host.
func Interrupted(err error) error { return New(ClassInterrupted, err) }

// Interruptedf formats and classifies a cooperative stop.
func Interruptedf(format string, args ...any) error { return Newf(ClassInterrupted, format, args...) }

// IsInterrupted reports whether err is a cooperative stop.
func IsInterrupted(err error) bool { return Is(err, ClassInterrupted) }

// Aborted marks err as work abandoned (a cancelled context, a hard cancel).
func Aborted(err error) error { return New(ClassAborted, err) }

// Abortedf formats and classifies abandoned work.
func Abortedf(format string, args ...any) error { return Newf(ClassAborted, format, args...) }

// IsAborted reports whether err is abandoned work.
func IsAborted(err error) bool { return Is(err, ClassAborted) }

// BudgetExceeded marks err as a spent token, cost or iteration budget. It is
// distinct from RateLimit: waiting does not help.
func BudgetExceeded(err error) error { return New(ClassBudgetExceeded, err) }

// BudgetExceededf formats and classifies a spent budget.
func BudgetExceededf(format string, args ...any) error {
	return Newf(ClassBudgetExceeded, format, args...)
}

// IsBudgetExceeded reports whether err is a spent budget.
func IsBudgetExceeded(err error) bool { return Is(err, ClassBudgetExceeded) }

// ModelOutputf formats and classifies a model answer the agent could not
// use.
func ModelOutputf(format string, args ...any) error { return Newf(ClassModelOutput, format, args...) }

// IsModelOutput reports whether err is an unusable model answer.
func IsModelOutput(err error) bool { return Is(err, ClassModelOutput) }

// RateLimit marks err as throttling: retrying later may succeed.
func RateLimit(err error) error { return New(ClassRateLimit, err) }

// RateLimitf formats and classifies throttling.
func RateLimitf(format string, args ...any) error { return Newf(ClassRateLimit, format, args...) }

// IsRateLimit reports whether err is throttling.
func IsRateLimit(err error) bool { return Is(err, ClassRateLimit) }

// Timeout marks err as a deadline that passed.
func Timeout(err error) error { return New(ClassTimeout, err) }

// Timeoutf formats and classifies a passed deadline.
func Timeoutf(format string, args ...any) error { return Newf(ClassTimeout, format, args...) }

// IsTimeout reports whether err is a passed deadline.
func IsTimeout(err error) bool { return Is(err, ClassTimeout) }

// Internal marks err as a bug or an unexpected failure of agentd itself.
func Internal(err error) error { return New(ClassInternal, err) }

// Internalf formats and classifies an internal failure.
func Internalf(format string, args ...any) error { return Newf(ClassInternal, format, args...) }

// IsInternal reports whether err is internal (unclassified errors count).
func IsInternal(err error) bool { return Is(err, ClassInternal) }
