package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
)

// dbCounters are the database's cumulative write counters.
type dbCounters struct {
	events, frames        int64 // rows of event_frames and the events in them
	frameInserts, inserts int64 // pg_stat_statements calls (−1: not available)
	commits               int64 // transactions committed (pg_stat_database)
	statementsAvailable   bool
}

// counters reads the counters of the database conn is connected to.
func counters(ctx context.Context, conn *pgx.Conn, statements bool) (dbCounters, error) {
	var c dbCounters
	err := conn.QueryRow(ctx, `SELECT coalesce(sum(seq_to - seq_from + 1), 0)::bigint, count(*) FROM event_frames`).Scan(&c.events, &c.frames)
	if err != nil || !statements {
		return c, err
	}
	c.statementsAvailable = true
	// Commits are counted by the database, not as COMMIT statements: a
	// store write is one implicit transaction (no COMMIT is sent).
	err = conn.QueryRow(ctx, `
SELECT coalesce(sum(calls) FILTER (WHERE query ILIKE '%INSERT INTO event_frames%'), 0)::bigint,
       coalesce(sum(calls) FILTER (WHERE query ~* '\minsert\s+into\M'), 0)::bigint,
       (SELECT xact_commit FROM pg_stat_database WHERE datname = current_database())
FROM pg_stat_statements
WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database())`).Scan(&c.frameInserts, &c.inserts, &c.commits)
	return c, err
}

// hasStatements enables pg_stat_statements in the database if the server
// preloads it.
func hasStatements(ctx context.Context, conn *pgx.Conn) bool {
	if _, err := conn.Exec(ctx, `CREATE EXTENSION IF NOT EXISTS pg_stat_statements`); err != nil {
		return false
	}
	var n int64
	return conn.QueryRow(ctx, `SELECT count(*) FROM pg_stat_statements`).Scan(&n) == nil
}

// persistResult is one run of the persistence scenario.
type persistResult struct {
	runs, eventsPerSec, framesPerSec, frameInsertsPerSec, insertsPerSec, commitsPerSec float64
	statements                                                                         bool
}

// persist drives c closed-loop blocking "stream 200" runs against one
// server for d after a warm-up, and measures what reached the database.
func persist(ctx context.Context, base string, conn *pgx.Conn, statements bool, c int, d time.Duration) (persistResult, error) {
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: c * 2}}
	defer client.CloseIdleConnections()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		wg       sync.WaitGroup
		done     atomic.Int64
		firstErr error
		errOnce  sync.Once
	)
	for range c {
		wg.Go(func() {
			for ctx.Err() == nil {
				if _, err := submit(ctx, client, base, "stream 200", true); err != nil {
					if ctx.Err() == nil {
						errOnce.Do(func() { firstErr = err; cancel() })
					}
					return
				}
				done.Add(1)
			}
		})
	}
	defer wg.Wait()
	warm := time.NewTimer(time.Second)
	select {
	case <-ctx.Done():
	case <-warm.C:
	}
	before, err := counters(ctx, conn, statements)
	if err != nil {
		return persistResult{}, err
	}
	runs0, t0 := done.Load(), time.Now()
	measure := time.NewTimer(d)
	select {
	case <-ctx.Done():
	case <-measure.C:
	}
	after, err := counters(ctx, conn, statements)
	if err != nil {
		return persistResult{}, err
	}
	secs := time.Since(t0).Seconds()
	runs := done.Load() - runs0
	cancel()
	wg.Wait()
	if firstErr != nil {
		return persistResult{}, firstErr
	}
	rate := func(a, b int64) float64 { return float64(b-a) / secs }
	return persistResult{
		runs:               rate(0, runs),
		eventsPerSec:       rate(before.events, after.events),
		framesPerSec:       rate(before.frames, after.frames),
		frameInsertsPerSec: rate(before.frameInserts, after.frameInserts),
		insertsPerSec:      rate(before.inserts, after.inserts),
		commitsPerSec:      rate(before.commits, after.commits),
		statements:         statements,
	}, nil
}

// replayResult is one replay of a long run over HTTP.
type replayResult struct {
	firstByte, firstEvent, end time.Duration
	events                     int
}

// replay reads a run's whole log from base and times it.
func replay(ctx context.Context, c *http.Client, base, runID string) (replayResult, error) {
	s, err := subscribe(ctx, c, base, runID, 0)
	if err != nil {
		return replayResult{}, err
	}
	defer s.close()
	r := replayResult{firstByte: s.firstByte.Sub(s.opened)}
	for {
		ev, err := s.next()
		if errors.Is(err, io.EOF) {
			r.end = time.Since(s.opened)
			return r, nil
		}
		if err != nil {
			return r, err
		}
		r.events++
		if r.events == 1 {
			r.firstEvent = ev.arrived.Sub(s.opened)
		}
		if int64(r.events) != ev.seq {
			return r, fmt.Errorf("event #%d has id %d", r.events, ev.seq)
		}
	}
}

// delays follows a paced run started on from as a client of to, and
// returns each delta's delay from its server stamp to its arrival.
func delays(ctx context.Context, c *http.Client, from, to, text string) ([]time.Duration, error) {
	id, err := submit(ctx, c, from, text, false)
	if err != nil {
		return nil, err
	}
	s, err := subscribe(ctx, c, to, id, 0)
	if err != nil {
		return nil, err
	}
	defer s.close()
	var out []time.Duration
	for {
		ev, err := s.next()
		if err != nil {
			return nil, err
		}
		// Deltas logged before the subscription was open were replayed,
		// not delivered live.
		if at := ev.stamp(); ev.typ == "delta" && at.After(s.firstByte) {
			out = append(out, ev.arrived.Sub(at))
		}
		if ended(ev) {
			return out, nil
		}
	}
}

// recovery runs a paced run on victim, follows it from watcher, kills
// victim after strike deltas, and returns the time from the kill to the
// run.start of the attempt that resumed it.
func recovery(ctx context.Context, c *http.Client, victim *replica, watcher string, strike int) (time.Duration, error) {
	id, err := submit(ctx, c, victim.base, "stream 200 every 20ms", false)
	if err != nil {
		return 0, err
	}
	s, err := subscribe(ctx, c, watcher, id, 0)
	if err != nil {
		return 0, err
	}
	defer s.close()
	var killedAt time.Time
	n := 0
	for {
		ev, err := s.next()
		if err != nil {
			return 0, err
		}
		if ev.typ == "delta" {
			n++
		}
		if n == strike && killedAt.IsZero() {
			victim.kill()
			killedAt = time.Now()
		}
		if ev.typ == "run.start" && ev.attempt() == 2 {
			return ev.stamp().Sub(killedAt), nil
		}
		if ended(ev) {
			return 0, fmt.Errorf("run %s ended without a second attempt", id)
		}
	}
}

// percentile returns the p-th percentile (0–100) of sorted ds.
func percentile(ds []time.Duration, p float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	i := int(float64(len(ds)-1) * p / 100)
	return ds[i]
}

// summary is "median [min–max]" of xs.
func summary[T int64 | float64 | time.Duration](xs []T, format func(T) string) string {
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s) == 0 {
		return "—"
	}
	return fmt.Sprintf("%s [%s–%s]", format(s[len(s)/2]), format(s[0]), format(s[len(s)-1]))
}
