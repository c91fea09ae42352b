// Command pgbench-agentd measures agentd on PostgreSQL with real server
// processes and prints the figures of the "PostgreSQL" section of
// docs/benchmarks.md, each as the median [min–max] of -runs runs:
//
//	persist   events persisted per second at -c concurrent streaming runs
//	          (closed-loop blocking "stream 200") against one server, and
//	          the insert statements, frame rows and commits per second it
//	          costs (pg_stat_statements when the server preloads it)
//	replay    a -replay-events run read back over HTTP from event 0 on a
//	          replica that never held it: time to first byte, to the first
//	          event and to the end of the stream
//	delay     a run on replica A ("stream 200 every 10ms") read live on
//	          replica B: delay from each delta's server stamp to its arrival,
//	          p50 and p99 (and the same read on A, for comparison)
//	recovery  replica A is SIGKILLed mid-run; the time from the kill to the
//	          run.start of the attempt that replica B resumes, at -lease
//
// Every scenario gets a fresh database on the server of -dsn (created, and
// dropped at the end) and fresh server processes of -server. It talks to
// loopback only.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/signal"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "pgbench-agentd:", err)
		os.Exit(1)
	}
}

type options struct {
	server, dsn, scenarios string
	runs, concurrency      int
	replayEvents           int
	duration, lease        time.Duration
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var o options
	fs := flag.NewFlagSet("pgbench-agentd", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&o.server, "server", "bin/server", "the server binary (go build -o bin/server ./cmd/server)")
	fs.StringVar(&o.dsn, "dsn", "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable", "a postgres:// URL of the server's maintenance database")
	fs.StringVar(&o.scenarios, "scenarios", "persist,replay,delay,recovery", "comma-separated scenarios")
	fs.IntVar(&o.runs, "runs", 5, "runs per figure (the median is reported)")
	fs.IntVar(&o.concurrency, "c", 100, "concurrent runs (persist)")
	fs.IntVar(&o.replayEvents, "replay-events", 10000, "deltas of the replayed run (replay)")
	fs.DurationVar(&o.duration, "d", 5*time.Second, "measurement window per run (persist)")
	fs.DurationVar(&o.lease, "lease", 5*time.Second, "server.lease_ttl (recovery)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	tmp, err := os.MkdirTemp("", "pgbench-agentd-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	b := &bench{o: o, tmp: tmp, out: stdout}
	for _, name := range strings.Split(o.scenarios, ",") {
		f, ok := map[string]func(context.Context) error{
			"persist": b.persist, "replay": b.replay, "delay": b.delay, "recovery": b.recovery,
		}[strings.TrimSpace(name)]
		if !ok {
			return fmt.Errorf("-scenarios: unknown scenario %q", name)
		}
		if err := b.withDatabase(ctx, f); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
	}
	return nil
}

// bench runs the scenarios; db is the current scenario's database.
type bench struct {
	o   options
	tmp string
	out io.Writer
	db  *database
}

func (b *bench) withDatabase(ctx context.Context, f func(context.Context) error) error {
	db, err := newDatabase(ctx, b.o.dsn)
	if err != nil {
		return err
	}
	b.db = db
	defer func() {
		dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
		defer cancel()
		if err := db.drop(dctx); err != nil {
			fmt.Fprintln(os.Stderr, "drop", db.name, err)
		}
	}()
	return f(ctx)
}

// start starts a server on the scenario's database with server settings.
func (b *bench) start(ctx context.Context, server map[string]any) (*replica, error) {
	cfg, err := writeConfig(b.tmp, server)
	if err != nil {
		return nil, err
	}
	return startReplica(ctx, b.o.server, b.db.dsn, cfg)
}

func (b *bench) persist(ctx context.Context) error {
	conn, err := pgx.Connect(ctx, b.db.dsn)
	if err != nil {
		return err
	}
	defer conn.Close(context.WithoutCancel(ctx))
	var ev, fr, fi, ins, com, runs []float64
	statements := false
	for range b.o.runs {
		r, err := b.start(ctx, nil)
		if err != nil {
			return err
		}
		if !statements {
			statements = hasStatements(ctx, conn) // after the server migrated
		}
		res, err := persist(ctx, r.base, conn, statements, b.o.concurrency, b.o.duration)
		r.kill()
		if err != nil {
			return fmt.Errorf("%w\nserver log:\n%s", err, r.logs.String())
		}
		ev, fr, fi = append(ev, res.eventsPerSec), append(fr, res.framesPerSec), append(fi, res.frameInsertsPerSec)
		ins, com, runs = append(ins, res.insertsPerSec), append(com, res.commitsPerSec), append(runs, res.runs)
	}
	num := func(x float64) string { return fmt.Sprintf("%.0f", x) }
	fmt.Fprintf(b.out, "persist, %d concurrent \"stream 200\" runs, one server, %d × %v:\n", b.o.concurrency, b.o.runs, b.o.duration)
	fmt.Fprintf(b.out, "  runs completed/s         %s\n", summary(runs, num))
	fmt.Fprintf(b.out, "  events persisted/s       %s\n", summary(ev, num))
	fmt.Fprintf(b.out, "  event_frames rows/s      %s\n", summary(fr, num))
	if statements {
		fmt.Fprintf(b.out, "  frame INSERT stmts/s     %s\n", summary(fi, num))
		fmt.Fprintf(b.out, "  all INSERT stmts/s       %s\n", summary(ins, num))
		fmt.Fprintf(b.out, "  transactions/s           %s\n", summary(com, num))
	} else {
		fmt.Fprintln(b.out, "  (pg_stat_statements is not preloaded: statement counts unavailable)")
	}
	return nil
}

func (b *bench) replay(ctx context.Context) error {
	a, err := b.start(ctx, nil)
	if err != nil {
		return err
	}
	defer a.kill()
	c := &http.Client{}
	defer c.CloseIdleConnections()
	made := time.Now()
	id, err := submit(ctx, c, a.base, fmt.Sprintf("stream %d", b.o.replayEvents), true)
	if err != nil {
		return err
	}
	fmt.Fprintf(b.out, "replay of a %d-delta run (written in %v), %d replays each:\n", b.o.replayEvents, time.Since(made).Round(time.Millisecond), b.o.runs)
	// On a replica that never held the run, the log comes from the store.
	cold, err := b.start(ctx, nil)
	if err != nil {
		return err
	}
	defer cold.kill()
	for _, rep := range []struct {
		name string
		r    *replica
	}{{"other replica (store)", cold}, {"replica that ran it", a}} {
		var fb, fe, end []time.Duration
		var n int
		for range b.o.runs {
			res, err := replay(ctx, c, rep.r.base, id)
			if err != nil {
				return err
			}
			fb, fe, end, n = append(fb, res.firstByte), append(fe, res.firstEvent), append(end, res.end), res.events
		}
		fmt.Fprintf(b.out, "  %s: %d events; first byte %s, first event %s, end %s\n",
			rep.name, n, summary(fb, ms), summary(fe, ms), summary(end, ms))
	}
	return nil
}

func (b *bench) delay(ctx context.Context) error {
	a, err := b.start(ctx, nil)
	if err != nil {
		return err
	}
	defer a.kill()
	other, err := b.start(ctx, nil)
	if err != nil {
		return err
	}
	defer other.kill()
	c := &http.Client{}
	defer c.CloseIdleConnections()
	fmt.Fprintf(b.out, "delivery delay, \"stream 200 every 10ms\" on A, %d runs each:\n", b.o.runs)
	for _, to := range []struct {
		name string
		r    *replica
	}{{"read on B (cross-replica)", other}, {"read on A (same replica)", a}} {
		var p50, p99, all []time.Duration
		for range b.o.runs {
			ds, err := delays(ctx, c, a.base, to.r.base, "stream 200 every 10ms")
			if err != nil {
				return err
			}
			slices.Sort(ds)
			p50, p99, all = append(p50, percentile(ds, 50)), append(p99, percentile(ds, 99)), append(all, ds...)
		}
		slices.Sort(all)
		fmt.Fprintf(b.out, "  %s: p50 %s, p99 %s (per run; all %d deltas: p50 %s, p99 %s, max %s)\n",
			to.name, summary(p50, ms), summary(p99, ms), len(all), ms(percentile(all, 50)), ms(percentile(all, 99)), ms(all[len(all)-1]))
	}
	return nil
}

func (b *bench) recovery(ctx context.Context) error {
	settings := map[string]any{"lease_ttl": b.o.lease.String()}
	watcher, err := b.start(ctx, settings)
	if err != nil {
		return err
	}
	defer watcher.kill()
	c := &http.Client{}
	defer c.CloseIdleConnections()
	var rec []time.Duration
	for i := range b.o.runs {
		victim, err := b.start(ctx, settings)
		if err != nil {
			return err
		}
		d, err := recovery(ctx, c, victim, watcher.base, 30+7*i)
		victim.kill()
		if err != nil {
			return err
		}
		rec = append(rec, d)
	}
	fmt.Fprintf(b.out, "recovery after SIGKILL, lease %v, %d kills: kill → run.start of attempt 2 on B %s\n",
		b.o.lease, b.o.runs, summary(rec, ms))
	return nil
}

func ms(d time.Duration) string { return fmt.Sprintf("%.1f ms", float64(d)/float64(time.Millisecond)) }
