package memstore

import (
	"context"
	"fmt"
	"sync"
	"time"

	"agentd/internal/run"
	"agentd/internal/store"
)

// Store is an in-memory store.Store, safe for concurrent use. The zero
// value is not usable; call New.
type Store struct {
	mu      sync.RWMutex
	tenants map[string]*tenant
	// leases are global: recovery scans every tenant's expired leases.
	// They hold the held leases by run, released the generations of
	// released ones (leases.go).
	leases   map[string]store.Lease
	released map[string]int64
	// retain is the retention (WithRetention); finished[finishedHead:]
	// queues the finished runs, oldest first, for eviction.
	retain       int
	finished     []finishedRun
	finishedHead int
	// pushPending indexes the push configs whose delivery is not done, for
	// ClaimPushDeliveries (pushdelivery.go).
	pushPending map[pushKey]struct{}
	// replicas are the replicas recorded (replicas.go).
	replicas map[string]store.Replica
	// threads are the Agent Protocol's thread records (threads.go).
	threads threadTable
	// assistants are the versioned assistants (assistants.go).
	assistants assistantTable
	// memory holds the long-term memory items (memory.go).
	memory memoryTable
	// schedules are the cron schedules (schedules.go).
	schedules scheduleTable
}

// tenant holds one tenant's records.
type tenant struct {
	runs     map[string]*runEntry
	allTasks taskIndex
	contexts map[string]*contextRecords
	keys     map[store.IdempotencyKey]string
	// usage holds the tenant's per-period token counters (usage.go).
	usage map[usageKey]int64
}

// runEntry is everything a tenant keeps of one run, so that a finished run
// costs one map entry: its task record (taskrecord.go), if it has a task
// (the store lets events, checkpoints and push configs name any run), its
// event log, checkpoint history, push configs and the idempotency keys
// recorded for it.
type runEntry struct {
	task string
	// terminal says whether task is in a terminal state (setTask), so
	// that eviction need not read the record.
	terminal    bool
	log         eventLog
	checkpoints []storedCheckpoint
	push        map[string]run.PushConfig
	keys        []store.IdempotencyKey
	// Room for a run's first checkpoint and key, where checkpoints and
	// keys start (addCheckpoint, addKey): most runs have one of each, and
	// it then costs no allocation, nor an object for the collector.
	firstCheckpoint [1]storedCheckpoint
	firstKey        [1]store.IdempotencyKey
}

// setTask stores the task record rec, whose state is state.
func (r *runEntry) setTask(rec string, state run.TaskState) {
	r.task, r.terminal = rec, state.Terminal()
}

// addCheckpoint appends cp to the run's checkpoint history.
func (r *runEntry) addCheckpoint(cp storedCheckpoint) {
	if r.checkpoints == nil {
		r.checkpoints = r.firstCheckpoint[:0]
	}
	r.checkpoints = append(r.checkpoints, cp)
}

// deleteCheckpoints empties the run's checkpoint history.
func (r *runEntry) deleteCheckpoints() {
	r.checkpoints, r.firstCheckpoint = nil, [1]storedCheckpoint{}
}

// addKey records k for the run.
func (r *runEntry) addKey(k store.IdempotencyKey) {
	if r.keys == nil {
		r.keys = r.firstKey[:0]
	}
	r.keys = append(r.keys, k)
}

// contextRecords is what a tenant keeps of one context: its tasks, by
// creation, and its transcript.
type contextRecords struct {
	tasks      taskIndex
	transcript transcript
	// Room where tasks and the transcript's messages and spans start
	// (newContextRecords): a context's first turn — a task, the user's
	// message and the agent's reply — then costs one allocation, and one
	// object for the collector.
	firstTask [1]taskKey
	firstTurn [2]string
	firstSpan [1]taskSpan
}

// newContextRecords returns the records of a new context.
func newContextRecords() *contextRecords {
	c := &contextRecords{}
	c.tasks = c.firstTask[:0]
	c.transcript.msgs = c.firstTurn[:0]
	c.transcript.tasks = c.firstSpan[:0]
	return c
}

var _ store.Store = (*Store)(nil)

// New returns an empty store that keeps DefaultRetention finished runs,
// or as the options say.
func New(opts ...Option) *Store {
	s := &Store{tenants: map[string]*tenant{}, leases: map[string]store.Lease{}, released: map[string]int64{}, retain: DefaultRetention}
	for _, o := range opts {
		o(s)
	}
	return s
}

// Ping reports whether the store is usable; an in-memory store always is,
// unless ctx is done.
func (s *Store) Ping(ctx context.Context) error { return live(ctx) }

// Volatile declares the store volatile (store.Volatile): its data lives in
// this process's memory, and no other process can reach it.
func (s *Store) Volatile() bool { return true }

// Close releases nothing: the store holds no external resources. It is
// idempotent, and the store stays usable after it.
func (s *Store) Close() error { return nil }

// readTenant returns the tenant of ctx for reading, or nil if it has never
// written anything. Callers hold s.mu.
func (s *Store) readTenant(ctx context.Context) *tenant {
	return s.tenants[run.TenantFrom(ctx)]
}

// writeTenant returns the tenant of ctx, creating it. Callers hold s.mu for
// writing.
func (s *Store) writeTenant(ctx context.Context) *tenant {
	return s.tenant(run.TenantFrom(ctx))
}

// tenant returns the tenant called name, creating it. Callers hold s.mu
// for writing.
func (s *Store) tenant(name string) *tenant {
	t := s.tenants[name]
	if t == nil {
		t = &tenant{
			runs:     map[string]*runEntry{},
			contexts: map[string]*contextRecords{},
			keys:     map[store.IdempotencyKey]string{},
		}
		s.tenants[name] = t
	}
	return t
}

// run returns the records of runID, creating them. Callers hold s.mu for
// writing.
func (t *tenant) run(runID string) *runEntry {
	r := t.runs[runID]
	if r == nil {
		r = t.newRun(runID)
	}
	return r
}

// newRun creates the records of runID, which has none. Callers hold s.mu
// for writing.
func (t *tenant) newRun(runID string) *runEntry {
	r := &runEntry{log: eventLog{runID: runID}}
	t.runs[runID] = r
	return r
}

// lookups remembers the run and context a change looked up last: a
// change mostly names one run and one context, several times over, and
// then looks each up once.
type lookups struct {
	runID     string
	run       *runEntry
	runFound  bool
	contextID string
	context   *contextRecords
}

// findRun returns the records of runID, or nil, through m.
func (t *tenant) findRun(m *lookups, runID string) *runEntry {
	if !m.runFound || m.runID != runID {
		m.runID, m.run, m.runFound = runID, t.runs[runID], true
	}
	return m.run
}

// runOf returns the records of runID through m, creating them. Callers
// hold s.mu for writing.
func (t *tenant) runOf(m *lookups, runID string) *runEntry {
	r := t.findRun(m, runID)
	if r == nil {
		r = t.newRun(runID)
		m.run = r
	}
	return r
}

// contextOf returns the records of contextID through m, creating them.
// Callers hold s.mu for writing.
func (t *tenant) contextOf(m *lookups, contextID string) *contextRecords {
	if m.context == nil || m.contextID != contextID {
		m.contextID, m.context = contextID, t.context(contextID)
	}
	return m.context
}

// task returns the record of task id, or "".
func (t *tenant) task(id string) string {
	if r := t.runs[id]; r != nil {
		return r.task
	}
	return ""
}

// context returns the records of contextID, creating them. Callers hold
// s.mu for writing.
func (t *tenant) context(contextID string) *contextRecords {
	c := t.contexts[contextID]
	if c == nil {
		c = newContextRecords()
		t.contexts[contextID] = c
	}
	return c
}

// now is the store's clock at PostgreSQL's precision.
func now() time.Time { return store.StoredTime(time.Now()) }

// live fails once ctx is done, as a database call would.
func live(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("memstore: %w", err)
	}
	return nil
}
