package pgstore

import (
	"context"
	"strconv"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// notifier sends the wake-ups of committed Applies to the other replicas
// (Listen), outside the Applies' transactions and coalesced.
//
// Why not NOTIFY inside each Apply: PostgreSQL serialises the commits of
// notifying transactions — the first takes a database-wide lock and holds it
// across its commit's WAL flush — so with a NOTIFY in every Apply only one
// commit could flush at a time, and blocking sends queued on that lock
// (most backends waiting on "Lock: object", one in "IO: WALSync"). Here one
// transaction carries the wake-ups of every Apply that committed while the
// previous one was in flight, with synchronous_commit off: a wake-up needs
// no durability, so its commit holds the lock only briefly.
//
// A wake-up is sent after its Apply committed, so a listener that reads
// the log on it finds the events. One lost to a crash between the two is
// what Listen's readers poll for anyway (runlog.PollInterval).
type notifier struct {
	pool *pgxpool.Pool

	mu      sync.Mutex
	pending map[string]int64 // run id → last seq to announce
	busy    bool             // a sender goroutine runs
	sending sync.WaitGroup
}

func newNotifier(pool *pgxpool.Pool) *notifier {
	return &notifier{pool: pool, pending: map[string]int64{}}
}

// add queues a wake-up per run (the newest last seq wins) and starts a
// sender unless one runs.
//
// The run a change creates (created) is left out: a run is first written
// by the change that creates it, and no reader anywhere can wait for a run
// before that commit (its id is the server's, handed out after it), so a
// wake-up would cost a transaction and wake nobody. A blocking send whose
// run is written once then costs one transaction, not two.
func (n *notifier) add(runs []runAppend, created string) {
	if len(runs) == 0 || len(runs) == 1 && runs[0].runID == created {
		return
	}
	n.mu.Lock()
	for _, r := range runs {
		if r.runID != created {
			n.pending[r.runID] = max(n.pending[r.runID], r.to)
		}
	}
	start := !n.busy
	if start {
		n.busy = true
		n.sending.Add(1)
	}
	n.mu.Unlock()
	if start {
		go n.send()
	}
}

// notifyPace is the least time between two wake-up transactions: under
// load the wake-ups of a few milliseconds share one, so that they cost
// the database a transaction per pace rather than one per Apply; the
// first after a quiet spell goes at once.
const notifyPace = 2 * time.Millisecond

// send sends what is pending until nothing is, at most once per
// notifyPace.
func (n *notifier) send() {
	defer n.sending.Done()
	for first := true; ; first = false {
		if !first {
			time.Sleep(notifyPace)
		}
		n.mu.Lock()
		if len(n.pending) == 0 {
			n.busy = false
			n.mu.Unlock()
			return
		}
		payloads := make([]string, 0, len(n.pending))
		for run, seq := range n.pending {
			payloads = append(payloads, run+":"+strconv.FormatInt(seq, 10))
		}
		clear(n.pending)
		n.mu.Unlock()
		n.notify(payloads)
	}
}

// notify sends one notification per payload in one transaction. A failure
// is not retried: readers of those runs poll.
func (n *notifier) notify(payloads []string) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	b := &pgx.Batch{}
	b.Queue(`SELECT set_config('synchronous_commit', 'off', true)`)
	b.Queue(`SELECT pg_notify('`+notifyChannel+`', n) FROM unnest($1::text[]) AS n`, payloads)
	_ = n.pool.SendBatch(ctx, b).Close()
}

// wait returns once every queued wake-up has been sent (before the pool
// closes).
func (n *notifier) wait() { n.sending.Wait() }
