package pgstore

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"agentd/internal/errdefs"
	"agentd/internal/store"
)

// Store is the PostgreSQL implementation of store.Store. It is safe for
// concurrent use; every method is scoped by run.TenantFrom(ctx).
type Store struct {
	pool   *pgxpool.Pool
	cfg    config
	notify *notifier
	group  *committer
	vector vectorSupport // where vector searches are ranked (memoryextension.go)
}

var _ store.Store = (*Store)(nil)

// Option configures Open.
type Option func(*config)

type config struct {
	maxConns int32
	tracer   pgx.QueryTracer
	now      func() time.Time
	retry    retryPolicy
	// noVectorExtension ranks vector searches in the server
	// (WithoutVectorExtension).
	noVectorExtension bool
}

// DefaultMaxConns is the connection pool's default size. pgxpool's own (the
// larger of 4 and the number of CPUs) is too small for agentd: a send holds
// a connection for each of its commits, which mostly wait for the WAL
// flush, so on a small machine four connections capped blocking sends at
// ~700/s with the database and the server half idle; more connections let
// PostgreSQL flush many commits at once (its own group commit).
const DefaultMaxConns = 24

// WithMaxConns bounds the connection pool (default DefaultMaxConns, unless
// the DSN sets pool_max_conns).
func WithMaxConns(n int32) Option {
	return func(c *config) { c.maxConns = n }
}

// WithTracer traces every statement the store sends (pgx's tracing hook;
// a tracer that also implements pgx.BatchTracer sees each statement of a
// batch).
func WithTracer(t pgx.QueryTracer) Option {
	return func(c *config) { c.tracer = t }
}

// WithClock replaces time.Now for the times the store stamps itself (lease
// expiries, push-config creation). Replicas must share a clock closely
// enough: leases compare the stamps of different replicas.
func WithClock(now func() time.Time) Option {
	return func(c *config) { c.now = now }
}

// WithRetry sets how often an operation is tried when it fails transiently
// (attempts >= 1) and the first backoff, which doubles up to one second.
func WithRetry(attempts int, backoff time.Duration) Option {
	return func(c *config) { c.retry = retryPolicy{attempts: attempts, backoff: backoff} }
}

// Open connects to the database named by dsn, applies the pending
// migrations (under an advisory lock, so replicas starting together do not
// race), makes vector searches use the vector extension where the database
// has it (memoryextension.go) and returns the store. Errors name what
// failed: the DSN, the server (host:port) or the migration version; the
// extension never fails Open (VectorSearch tells why it is not used).
func Open(ctx context.Context, dsn string, opts ...Option) (*Store, error) {
	cfg := config{now: time.Now, retry: retryPolicy{attempts: defaultAttempts, backoff: defaultBackoff}}
	for _, o := range opts {
		o(&cfg)
	}
	pool, err := newPool(ctx, dsn, cfg)
	if err != nil {
		return nil, err
	}
	if err := migrate(ctx, pool); err != nil {
		pool.Close()
		return nil, err
	}
	s := &Store{pool: pool, cfg: cfg, notify: newNotifier(pool), vector: setUpVector(ctx, pool, cfg)}
	s.group = &committer{s: s}
	return s, nil
}

// Migrate applies the pending migrations to the database named by dsn and
// returns; Open does the same. It exists for tools and test harnesses that
// prepare a database without using it.
func Migrate(ctx context.Context, dsn string) error {
	pool, err := newPool(ctx, dsn, config{maxConns: 2})
	if err != nil {
		return err
	}
	defer pool.Close()
	return migrate(ctx, pool)
}

// newPool parses dsn and checks the server answers, so that a bad address
// fails Open rather than the first query.
func newPool(ctx context.Context, dsn string, cfg config) (*pgxpool.Pool, error) {
	pc, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		// pgx redacts the password in its parse errors.
		return nil, errdefs.Validationf("pgstore: invalid database DSN: %w", err)
	}
	switch {
	case cfg.maxConns > 0:
		pc.MaxConns = cfg.maxConns
	case !strings.Contains(dsn, "pool_max_conns"):
		pc.MaxConns = DefaultMaxConns
	}
	if cfg.tracer != nil {
		pc.ConnConfig.Tracer = cfg.tracer
	}
	pool, err := pgxpool.NewWithConfig(ctx, pc)
	if err != nil {
		return nil, errdefs.Validationf("pgstore: invalid pool config: %w", err)
	}
	if err := pool.Ping(ctx); err != nil {
		pool.Close()
		return nil, errdefs.NotAvailablef("pgstore: cannot reach PostgreSQL at %s:%d (database %q): %w",
			pc.ConnConfig.Host, pc.ConnConfig.Port, pc.ConnConfig.Database, err)
	}
	return pool, nil
}

// Ping reports whether the database answers (for /readyz).
func (s *Store) Ping(ctx context.Context) error {
	if err := s.pool.Ping(ctx); err != nil {
		return errdefs.NotAvailablef("pgstore: ping: %w", err)
	}
	return nil
}

// Close closes the pool, waiting for acquired connections to be released.
func (s *Store) Close() error {
	s.notify.wait()
	s.pool.Close()
	return nil
}

// now is the store's clock, truncated to PostgreSQL's microsecond
// resolution so that a value handed back equals the one stored.
func (s *Store) now() time.Time {
	return store.StoredTime(s.cfg.now())
}

// String names the store for logs without revealing credentials.
func (s *Store) String() string {
	c := s.pool.Config().ConnConfig
	return fmt.Sprintf("pgstore(%s:%d/%s)", c.Host, c.Port, c.Database)
}
