package main

import (
	"context"
	"log"
	"math/rand/v2"
	"time"
)

// strike lays faults on the system until ctx ends, one at a time: a
// database restart a third of the way in, a 5 s database stop at two
// thirds, and between them every few seconds a SIGKILL (three times in
// four) or a 6 s partition of one replica from the database (none of
// these with -faults db).
func (e *env) strike(ctx context.Context, rep *report) {
	rng := rand.New(rand.NewPCG(7, uint64(time.Now().UnixNano())))
	start := time.Now()
	restartAt, stopAt := start.Add(e.o.duration/3), start.Add(2*e.o.duration/3)
	restarted, stopped := false, false
	for {
		select {
		case <-ctx.Done():
			return
		case <-time.After(time.Duration(2000+rng.IntN(3000)) * time.Millisecond):
		}
		switch now := time.Now(); {
		case !restarted && now.After(restartAt):
			restarted = true
			e.dbOutage(ctx, rep, 0)
		case !stopped && now.After(stopAt):
			stopped = true
			e.dbOutage(ctx, rep, 5*time.Second)
		case e.o.faults == "db":
		case rng.IntN(4) == 0:
			e.partition(ctx, rng, rep)
		default:
			e.killOne(ctx, rng, rep)
		}
	}
}

// killOne SIGKILLs a random replica and starts it again half a second
// later.
func (e *env) killOne(ctx context.Context, rng *rand.Rand, rep *report) {
	r := e.replicas[rng.IntN(len(e.replicas))]
	e.kill(r)
	rep.add(&rep.kills, 1)
	time.Sleep(500 * time.Millisecond)
	if err := e.start(ctx, r); err != nil && ctx.Err() == nil {
		log.Printf("chaos: restart replica %d: %v", r.i, err)
	}
}

// partition cuts a random replica off from the database for 6 s: its
// queries hang, its leases lapse, the others take its runs over.
func (e *env) partition(ctx context.Context, rng *rand.Rand, rep *report) {
	p := e.proxies[rng.IntN(len(e.proxies))]
	p.Partition(true)
	rep.add(&rep.partitions, 1)
	select {
	case <-ctx.Done():
	case <-time.After(6 * time.Second):
	}
	p.Partition(false)
}

// dbOutage restarts the database (down == 0) or stops it for down.
func (e *env) dbOutage(ctx context.Context, rep *report, down time.Duration) {
	if err := e.db.Stop(ctx); err != nil {
		log.Printf("chaos: stop the database: %v", err)
		return
	}
	if down > 0 {
		time.Sleep(down)
		rep.add(&rep.dbStops, 1)
	} else {
		rep.add(&rep.dbRestarts, 1)
	}
	// Start with a context of its own: the database must come back even
	// when the strike period has just ended.
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
	defer cancel()
	if err := e.db.Start(sctx); err != nil {
		log.Printf("chaos: start the database: %v", err)
	}
}
