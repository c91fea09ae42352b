package pgstore

import (
	"context"
	"math/rand/v2"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"agentd/internal/errdefs"
)

// Listen wakes fn whenever another transaction appends events: it holds a
// dedicated connection (outside the pool) LISTENing on the events channel
// and calls fn(runID, lastSeq) for each notification, one per run per
// Apply. A notification is a wake-up only; the log is the data.
//
// After every (re)subscription, the first one included, fn is called once
// with runID "" and lastSeq 0: notifications sent while no connection
// listened are lost, so a caller re-reads the logs it follows then. The
// first such call also tells a caller that the subscription is live.
//
// A lost connection is re-established with jittered exponential backoff
// (up to five seconds) for as long as ctx lasts. Listen returns nil when
// ctx ends; fn runs on Listen's goroutine and must not block for long.
func (s *Store) Listen(ctx context.Context, fn func(runID string, lastSeq int64)) error {
	if fn == nil {
		return errdefs.Validationf("pgstore: listen: nil callback")
	}
	const maxListenBackoff = 5 * time.Second
	delay := max(s.cfg.retry.backoff, 10*time.Millisecond)
	for {
		subscribed, _ := s.listenOnce(ctx, fn)
		if ctx.Err() != nil {
			return nil
		}
		if subscribed {
			delay = max(s.cfg.retry.backoff, 10*time.Millisecond)
		}
		t := time.NewTimer(time.Duration(rand.Int64N(int64(delay))) + delay/2)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil
		case <-t.C:
		}
		delay = min(2*delay, maxListenBackoff)
	}
}

// listenOnce subscribes on a fresh connection and delivers notifications
// until the connection fails or ctx ends. subscribed reports whether the
// LISTEN took effect.
func (s *Store) listenOnce(ctx context.Context, fn func(string, int64)) (subscribed bool, err error) {
	conn, err := pgx.ConnectConfig(ctx, s.pool.Config().ConnConfig)
	if err != nil {
		return false, err
	}
	defer func() {
		closeCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Second)
		defer cancel()
		_ = conn.Close(closeCtx) // the session ends either way
	}()
	if _, err := conn.Exec(ctx, "LISTEN "+notifyChannel); err != nil {
		return false, err
	}
	fn("", 0)
	for {
		n, err := conn.WaitForNotification(ctx)
		if err != nil {
			return true, err
		}
		if runID, seq, ok := parseNotification(n.Payload); ok {
			fn(runID, seq)
		}
	}
}

// parseNotification splits "<run id>:<last seq>"; the run id may itself
// contain colons, the seq never does.
func parseNotification(payload string) (runID string, lastSeq int64, ok bool) {
	i := strings.LastIndexByte(payload, ':')
	if i <= 0 {
		return "", 0, false
	}
	seq, err := strconv.ParseInt(payload[i+1:], 10, 64)
	if err != nil {
		return "", 0, false
	}
	return payload[:i], seq, true
}
