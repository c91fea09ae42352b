package telemetry

import (
	"context"
	"errors"
	"time"

	"agentd/internal/engine"
	"agentd/internal/errdefs"
	"agentd/internal/run"
	"agentd/internal/store"
)

// instrumentedStore is a store.Store that reports to the metrics: the
// errors of the operations a run depends on, the event-log flushes (an
// Apply of events alone) and the lease renewals. Every other method is the
// wrapped store's, unchanged.
type instrumentedStore struct {
	store.Store
	m *Metrics
}

// Volatile declares what the wrapped store declares (store.Volatile).
func (s *instrumentedStore) Volatile() bool { return store.IsVolatile(s.Store) }

func (s *instrumentedStore) Apply(ctx context.Context, c store.Change) error {
	flush := len(c.Events) > 0 && c.CreateTask == nil && c.UpdateTask == nil && len(c.Messages) == 0
	start := time.Now()
	err := s.Store.Apply(ctx, c)
	if flush && err == nil {
		s.m.flushEvents.Observe(float64(len(c.Events)))
		s.m.flushTime.Observe(time.Since(start).Seconds())
	}
	return s.note("apply", err)
}

func (s *instrumentedStore) GetTask(ctx context.Context, id string) (run.Task, error) {
	t, err := s.Store.GetTask(ctx, id)
	return t, s.note("get_task", err)
}

func (s *instrumentedStore) ListMessages(ctx context.Context, q run.MessageQuery) (run.MessagePage, error) {
	p, err := s.Store.ListMessages(ctx, q)
	return p, s.note("list_messages", err)
}

func (s *instrumentedStore) ReadEvents(ctx context.Context, runID string, after int64, limit int) (run.EventPage, error) {
	p, err := s.Store.ReadEvents(ctx, runID, after, limit)
	return p, s.note("read_events", err)
}

func (s *instrumentedStore) SaveCheckpoint(ctx context.Context, cp engine.Checkpoint) error {
	return s.note("save_checkpoint", s.Store.SaveCheckpoint(ctx, cp))
}

func (s *instrumentedStore) LoadCheckpoint(ctx context.Context, runID string) (*engine.Checkpoint, error) {
	cp, err := s.Store.LoadCheckpoint(ctx, runID)
	return cp, s.note("load_checkpoint", err)
}

func (s *instrumentedStore) AcquireLease(ctx context.Context, runID, owner string, ttl time.Duration) (store.Lease, error) {
	l, err := s.Store.AcquireLease(ctx, runID, owner, ttl)
	return l, s.note("acquire_lease", err)
}

// RenewLeases counts a renewal round: ok, lost (some leases were not
// renewed: another replica has them, or the run ended) or error.
func (s *instrumentedStore) RenewLeases(ctx context.Context, ls []store.Lease, ttl time.Duration) ([]store.RenewedLease, error) {
	renewed, err := s.Store.RenewLeases(ctx, ls, ttl)
	outcome := "ok"
	switch {
	case err != nil:
		outcome = "error"
	case len(renewed) < len(ls):
		outcome = "lost"
	}
	s.m.leaseRenews.WithLabelValues(outcome).Inc()
	return renewed, s.note("renew_leases", err)
}

func (s *instrumentedStore) ExpiredLeases(ctx context.Context, now time.Time, limit int) ([]store.Lease, error) {
	ls, err := s.Store.ExpiredLeases(ctx, now, limit)
	return ls, s.note("expired_leases", err)
}

// note counts err when it is a failure of the store rather than an answer
// (not found, conflict, a refused input) or the caller giving up.
func (s *instrumentedStore) note(op string, err error) error {
	if err == nil {
		return nil
	}
	switch errdefs.ClassOf(err) {
	case errdefs.ClassNotFound, errdefs.ClassConflict, errdefs.ClassValidation:
		return err
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	s.m.storeErrors.WithLabelValues(op).Inc()
	return err
}
