package errdefs

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"testing"
)

func TestClassesSeeThroughWrapping(t *testing.T) {
	cases := []struct {
		err    error
		is     func(error) bool
		class  Class
		status int
	}{
		{Validationf("bad %s", "x"), IsValidation, ClassValidation, http.StatusBadRequest},
		{NotFoundf("no %s", "x"), IsNotFound, ClassNotFound, http.StatusNotFound},
		{Conflictf("busy"), IsConflict, ClassConflict, http.StatusConflict},
		{NotAvailablef("nope"), IsNotAvailable, ClassNotAvailable, http.StatusServiceUnavailable},
		{Unauthorizedf("who"), IsUnauthorized, ClassUnauthorized, http.StatusUnauthorized},
		{Forbiddenf("no"), IsForbidden, ClassForbidden, http.StatusForbidden},
		{Interruptedf("stop"), IsInterrupted, ClassInterrupted, http.StatusConflict},
		{Abortedf("gone"), IsAborted, ClassAborted, 499},
		{BudgetExceededf("spent"), IsBudgetExceeded, ClassBudgetExceeded, http.StatusPaymentRequired},
		{RateLimitf("slow down"), IsRateLimit, ClassRateLimit, http.StatusTooManyRequests},
		{Timeoutf("late"), IsTimeout, ClassTimeout, http.StatusGatewayTimeout},
		{ModelOutputf("not JSON"), IsModelOutput, ClassModelOutput, http.StatusBadGateway},
		{Internalf("bug"), IsInternal, ClassInternal, http.StatusInternalServerError},
	}
	for _, c := range cases {
		t.Run(string(c.class), func(t *testing.T) {
			wrapped := fmt.Errorf("outer: %w", fmt.Errorf("middle: %w", c.err))
			if !c.is(wrapped) {
				t.Fatalf("predicate does not see %v through two wraps", c.err)
			}
			if got := ClassOf(wrapped); got != c.class {
				t.Fatalf("ClassOf = %s, want %s", got, c.class)
			}
			if got := HTTPStatus(wrapped); got != c.status {
				t.Fatalf("HTTPStatus = %d, want %d", got, c.status)
			}
			if wrapped.Error() != "outer: middle: "+c.err.Error() {
				t.Fatalf("message changed: %q", wrapped.Error())
			}
		})
	}
}

func TestOutermostClassWins(t *testing.T) {
	err := Conflict(fmt.Errorf("ctx: %w", NotFoundf("inner")))
	if !IsConflict(err) || IsNotFound(err) {
		t.Fatalf("ClassOf(%v) = %s, want the outer conflict only", err, ClassOf(err))
	}
}

func TestUnclassifiedAndContextErrors(t *testing.T) {
	if ClassOf(nil) != "" || HTTPStatus(nil) != http.StatusOK {
		t.Fatal("nil must have no class")
	}
	if ClassOf(errors.New("plain")) != ClassInternal {
		t.Fatal("an unclassified error is internal")
	}
	if !IsAborted(fmt.Errorf("x: %w", context.Canceled)) || !IsTimeout(context.DeadlineExceeded) {
		t.Fatal("context errors map to aborted and timeout")
	}
	if New(ClassValidation, nil) != nil {
		t.Fatal("classifying nil must stay nil")
	}
	var c Classifier
	if !errors.As(Validationf("x"), &c) || c.ErrorClass() != ClassValidation {
		t.Fatal("classified errors implement Classifier")
	}
}

func TestWithFieldKeepsTheClass(t *testing.T) {
	err := WithField("context_id", Conflictf("task t1 belongs to context c1, not c2"))
	if !IsConflict(err) || FieldOf(err) != "context_id" || err.Error() != "context_id: task t1 belongs to context c1, not c2" {
		t.Fatalf("got class %s, field %q, %q", ClassOf(err), FieldOf(err), err)
	}
	if FieldOf(fmt.Errorf("sending: %w", err)) != "context_id" {
		t.Fatal("FieldOf does not see through wrapping")
	}
	if WithField("x", nil) != nil || FieldOf(errors.New("plain")) != "" {
		t.Fatal("nil or plain errors gained a field")
	}
}

func TestClientTextNamesNothingInternal(t *testing.T) {
	cause := errors.New("pgstore: failed to connect to user=postgres database=postgres: 127.0.0.1:5432")
	for _, c := range []struct {
		err  error
		want string
	}{
		{nil, ""},
		{NotAvailable(cause), UnavailableDetail},
		{Internal(cause), InternalDetail},
		{cause, InternalDetail},
		{fmt.Errorf("read events: %w", NotAvailable(cause)), UnavailableDetail},
		{Public(NotAvailable(errors.New("this replica is shutting down"))), "this replica is shutting down"},
		{Validationf("context_id: %q is not a UUID", "x"), `context_id: "x" is not a UUID`},
	} {
		if got := ClientText(c.err); got != c.want {
			t.Errorf("ClientText(%v) = %q, want %q", c.err, got, c.want)
		}
	}
}
