package pgstore

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"agentd/internal/errdefs"
)

// ErrCommitUnknown reports an Apply whose COMMIT was sent but whose answer
// never arrived: the change may or may not be durable. Apply never retries
// it (a replay could duplicate messages); the error is classified
// NotAvailable. See the package documentation for how a caller resolves it.
var ErrCommitUnknown = errors.New("commit outcome unknown")

// retryPolicy bounds the retries of transient failures.
type retryPolicy struct {
	attempts int
	backoff  time.Duration
}

// The default policy tries four times over about 140 ms: long enough to
// ride out a failover of the connection, short enough for a request.
const (
	defaultAttempts = 4
	defaultBackoff  = 20 * time.Millisecond
	maxBackoff      = time.Second
)

// retry runs op until it succeeds, fails for a reason other than a transient
// one, or has been tried policy.attempts times. Only operations that are
// safe to repeat go through it; Apply decides for itself (see apply.go).
func (s *Store) retry(ctx context.Context, op func(context.Context) error) error {
	p := s.cfg.retry
	delay := p.backoff
	for attempt := 1; ; attempt++ {
		err := op(ctx)
		if err == nil || attempt >= p.attempts || !transient(err) {
			return err
		}
		// Full jitter keeps replicas that lost the same server from
		// reconnecting in lockstep.
		wait := time.Duration(rand.Int64N(int64(delay) + 1))
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return err
		case <-t.C:
		}
		delay = min(2*delay, maxBackoff)
	}
}

// transient reports whether err is a failure that a later attempt may not
// meet: a lost or refused connection, a server shutting down or starting,
// a serialization failure or a deadlock.
func transient(err error) bool {
	if err == nil || errors.Is(err, ErrCommitUnknown) ||
		errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return false
	}
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		switch pe.Code {
		case "40001", "40P01", // serialization_failure, deadlock_detected
			"57P01", "57P02", "57P03", // admin_shutdown, crash_shutdown, cannot_connect_now
			"53300": // too_many_connections
			return true
		}
		return len(pe.Code) == 5 && pe.Code[:2] == "08" // connection_exception class
	}
	if pgconn.SafeToRetry(err) {
		return true
	}
	var ce *pgconn.ConnectError
	var ne net.Error
	return errors.As(err, &ce) || errors.As(err, &ne) ||
		errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, net.ErrClosed)
}

// classify wraps err with what failed and gives it an errdefs class: errors
// already classified keep theirs, connection trouble is NotAvailable, bad
// data the server rejected is Validation, a unique violation Conflict, and
// anything else Internal.
func (s *Store) classify(what string, err error) error {
	if err == nil {
		return nil
	}
	wrapped := fmt.Errorf("pgstore: %s: %w", what, err)
	var c errdefs.Classifier
	if errors.As(err, &c) || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return wrapped
	}
	if transient(err) {
		return errdefs.NotAvailable(wrapped)
	}
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		switch {
		case pe.Code == "23505":
			return errdefs.Conflict(wrapped)
		case len(pe.Code) == 5 && pe.Code[:2] == "22": // data_exception
			return errdefs.Validation(wrapped)
		}
	}
	return errdefs.Internal(wrapped)
}

// errNoRows reports pgx's "no rows" answer.
func errNoRows(err error) bool { return errors.Is(err, pgx.ErrNoRows) }
