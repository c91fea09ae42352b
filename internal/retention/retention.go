package retention

import (
	"context"
	"log/slog"
	"time"

	"agentd/internal/store"
)

// Options configure a Pruner.
type Options struct {
	Store store.Pruner
	// MaxAge is how long a finished run's events are kept.
	MaxAge time.Duration
	// Interval is the time between two rounds.
	Interval time.Duration
	// Batch is the number of runs one store transaction prunes.
	Batch int
	// Report, when set, receives what each batch removed (metrics).
	Report func(store.Pruned)
	Logger *slog.Logger
	// Now is the clock (default time.Now).
	Now func() time.Time
}

// Pruner runs retention rounds. Rounds after the first start where the last
// one stopped, so already-pruned runs are not walked again.
type Pruner struct {
	o       Options
	through time.Time
}

// New returns a Pruner; call Run.
func New(o Options) *Pruner {
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	return &Pruner{o: o}
}

// Run prunes at once and then every interval until ctx ends.
func (p *Pruner) Run(ctx context.Context) {
	t := time.NewTicker(p.o.Interval)
	defer t.Stop()
	for {
		if _, err := p.Round(ctx); err != nil && ctx.Err() == nil {
			p.o.Logger.Warn("retention round failed; retrying at the next interval", "err", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// Round prunes every run that finished more than MaxAge ago, batch after
// batch, and reports the total.
func (p *Pruner) Round(ctx context.Context) (store.Pruned, error) {
	before := p.o.Now().Add(-p.o.MaxAge)
	var total store.Pruned
	for ctx.Err() == nil {
		got, err := p.o.Store.PruneFinished(ctx, store.PruneQuery{Before: before, After: p.through, Limit: p.o.Batch})
		if err != nil {
			return total, err
		}
		if p.o.Report != nil && got.Runs > 0 {
			p.o.Report(got)
		}
		total.Runs += got.Runs
		total.Events += got.Events
		total.Checkpoints += got.Checkpoints
		if got.Runs > 0 {
			// Runs that finished at the same instant may straddle two
			// batches: the next starts at that instant, not after it.
			p.through, total.Through = got.Through, got.Through
		}
		if got.Runs < int64(p.o.Batch) {
			break
		}
	}
	if total.Runs > 0 {
		p.o.Logger.Info("retention pruned finished runs", "runs", total.Runs, "events", total.Events, "checkpoints", total.Checkpoints)
	}
	return total, ctx.Err()
}
