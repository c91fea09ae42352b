// Command chaos checks agentd's durability promise end to end, for a
// bounded time, on this machine only: N server replicas on a throwaway
// PostgreSQL cluster (each reaching it through a faultproxy the command can
// partition), concurrent streaming runs over REST and A2A JSON-RPC, clients
// that cut their streams and resume on random replicas, replicas SIGKILLed
// and restarted, the database restarted and stopped for 5 s, and one
// replica at a time cut off from the database. Afterwards every run is
// checked against the store's log (check.go). It exits 1 if anything was
// lost, duplicated, reordered, stuck or skipped.
//
//	go run ./cmd/chaos -duration 3m
//	go run ./cmd/chaos -duration 30s -inject drop   # must report the fault
//
// It is not part of `make test`: see docs/reliability.md for its figures.
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"math/rand/v2"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"
)

type options struct {
	replicas   int
	duration   time.Duration
	concurrent int
	tokens     int
	every      time.Duration
	a2aShare   float64
	lease      time.Duration
	inject     string
	server     string
	faults     string
	tools      float64
}

func main() {
	var o options
	flag.IntVar(&o.replicas, "replicas", 3, "server replicas")
	flag.DurationVar(&o.duration, "duration", 3*time.Minute, "how long to start runs and strike (the check follows)")
	flag.IntVar(&o.concurrent, "runs", 30, "runs in flight at once")
	flag.IntVar(&o.tokens, "tokens", 300, "tokens each run streams")
	flag.DurationVar(&o.every, "every", 10*time.Millisecond, "pace of the tokens")
	flag.Float64Var(&o.a2aShare, "a2a", 0.25, "share of runs driven over A2A JSON-RPC")
	flag.DurationVar(&o.lease, "lease", 2*time.Second, "the replicas' lease TTL")
	flag.StringVar(&o.inject, "inject", "", `a deliberate fault to show the check counts it: "drop" (a client loses an event), "dup" (a client sees one twice) or "charge" (the tool service charges one key twice)`)
	flag.StringVar(&o.server, "server", "", "the server binary (default: built from ./cmd/server)")
	flag.StringVar(&o.faults, "faults", "all", `"all", or "db": only the database restart and stop (every resumed run is then one a database outage restarted)`)
	flag.Float64Var(&o.tools, "tools", 0.2, "share of REST runs whose agent calls an HTTP tool with effects (effects.go)")
	flag.Parse()
	if o.faults != "all" && o.faults != "db" {
		log.Fatalf("chaos: -faults %q: want all or db", o.faults)
	}
	if o.inject != "" && o.inject != "drop" && o.inject != "dup" && o.inject != "charge" {
		log.Fatalf("chaos: -inject %q: want drop, dup or charge", o.inject)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	rep, err := run(ctx, o)
	if err != nil {
		log.Fatalf("chaos: %v", err)
	}
	fmt.Print(rep)
	if !rep.clean() {
		os.Exit(1)
	}
}

func run(ctx context.Context, o options) (*report, error) {
	env, err := setUp(ctx, o)
	if err != nil {
		return nil, err
	}
	defer env.tearDown()
	rep := &report{}
	start := time.Now()
	deadline := start.Add(o.duration)

	var faults sync.WaitGroup
	strikeCtx, stopStriking := context.WithDeadline(ctx, deadline)
	defer stopStriking()
	faults.Go(func() { env.strike(strikeCtx, rep) })

	var (
		mu   sync.Mutex
		runs []*clientRun
		wg   sync.WaitGroup
	)
	injected := o.inject == "drop" || o.inject == "dup"
	for w := range o.concurrent {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(w), uint64(start.UnixNano())))
			for i := 0; time.Now().Before(deadline) && ctx.Err() == nil; i++ {
				cr := &clientRun{worker: w, a2a: rng.Float64() < o.a2aShare}
				cr.tool = !cr.a2a && rng.Float64() < o.tools
				mu.Lock()
				if injected && !cr.a2a && !cr.tool && len(runs) >= 5 {
					cr.inject, injected = o.inject, false
				}
				runs = append(runs, cr)
				mu.Unlock()
				env.drive(ctx, rng, cr, fmt.Sprintf("w%d-%d", w, i))
			}
		})
	}
	wg.Wait()
	faults.Wait()
	env.healAll(ctx)
	rep.elapsed = time.Since(start)
	return rep, env.check(ctx, runs, rep)
}
