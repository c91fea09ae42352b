package store

import (
	"context"
	"time"

	"agentd/internal/engine"
	"agentd/internal/errdefs"
	"agentd/internal/run"
)

// Store is everything the runtime persists. Implementations are safe for
// concurrent use.
type Store interface {
	// Apply writes one logical change atomically.
	Apply(ctx context.Context, c Change) error

	GetTask(ctx context.Context, id string) (run.Task, error)
	ListTasks(ctx context.Context, q run.TaskQuery) (run.TaskPage, error)
	// ListTasksOfAllTenants is ListTasks across every tenant, each task
	// with its Tenant, ignoring the context's tenant. It serves the
	// server's own sweeps (expired prompts and approvals), never a
	// caller. q.ContextID must be empty (contexts are per tenant) and
	// Total is not counted.
	ListTasksOfAllTenants(ctx context.Context, q run.TaskQuery) (run.TaskPage, error)

	ListMessages(ctx context.Context, q run.MessageQuery) (run.MessagePage, error)

	// ReadEvents returns up to limit events of run with seq > after, in seq
	// order, and the log's bounds.
	ReadEvents(ctx context.Context, runID string, after int64, limit int) (run.EventPage, error)
	// PruneEvents deletes the events of run with seq <= through. Later reads
	// that start before through+1 learn it from EventPage.PrunedThrough.
	PruneEvents(ctx context.Context, runID string, through int64) error

	Checkpoints
	PushConfigs
	Leases
	UsageCounters

	// Ping reports whether the store is reachable (for /readyz).
	Ping(ctx context.Context) error
	// Close releases the store's resources.
	Close() error
}

// IdempotencyKey identifies a client submission: a messageId within a
// context.
type IdempotencyKey struct {
	ContextID string
	MessageID string
}

// Change is one atomic write. Every non-empty part is applied, or none.
type Change struct {
	// Idempotency, when set, records the key for TaskID. If the key is
	// already recorded the change fails with a *DuplicateError naming the
	// task that owns it (classified Conflict) and nothing is written.
	Idempotency *IdempotencyKey
	// TaskID is the task the idempotency key and the messages belong to.
	TaskID string
	// CreateTask creates a task; the stored version is Version+1, as an
	// update's would be: 1 for a task created as it starts (Version 0),
	// more for a create folded together with the task's later updates
	// (a run's deferred create written with its final commit).
	// A task with the same id is a Conflict.
	CreateTask *run.Task
	// UpdateTask replaces a task if its Version equals the stored version;
	// on success the stored version is Version+1. Otherwise Conflict.
	UpdateTask *run.Task
	// Stored, when set with UpdateTask or CreateTask, receives on success
	// the task as the store now holds it — its version and the store's
	// time stamps, what GetTask would return — so that a writer answering
	// with the task needs no read after its write.
	Stored *run.Task
	// Messages are appended to the transcript of their ContextID in order;
	// the store assigns their positions.
	Messages []run.Message
	// Events are appended to the log of their RunID; their seqs must
	// continue the log densely.
	Events []run.Event
	// EventsValid promises that every event's Data is one valid JSON value
	// (the run log, internal/runlog, frames event data itself), so the store
	// need not scan it again. A store may check anyway; without the promise
	// it must. It is the one flag in agentd's contracts by which a layer
	// skips another's check, kept because the check is a scan of every
	// token delta: on memstore it costs 13 % more server CPU per streamed
	// event (docs/benchmarks.md, "Issue 20: the JSON fast paths").
	EventsValid bool
	// Fences are leases the change depends on: it applies only while each
	// is still held as it says (owner and generation), else it fails with
	// Conflict and writes nothing. A replica that lost a run's lease (it
	// was cut off and another took the run over) can then no longer add
	// to the run's log.
	Fences []Lease
	// Checkpoints are saved as SaveCheckpoint saves them (one whose
	// attempt is older than the run's newest checkpoint is a Conflict),
	// in the same transaction as the rest: a checkpoint that covers some
	// of Events becomes durable exactly when they do, never before or
	// after. At most one per run.
	Checkpoints []engine.Checkpoint
	// Release, when set, gives the lease up in the same transaction, as
	// ReleaseLease would (a lease no longer held is left alone): a run's
	// final commit ends its claim without a write of its own.
	Release *Lease
	// Lease, when set, claims the lease on TaskID in the same transaction,
	// as AcquireLease would (Conflict if another owner holds it): a run
	// made runnable by this change is never committed without an owner
	// that will execute it or let it expire. On success the store fills in
	// Lease.Granted.
	Lease *LeaseClaim
}

// LeaseClaim is a lease a Change takes together with what it writes.
type LeaseClaim struct {
	Owner string
	TTL   time.Duration
	// Granted is the lease the store granted (set by Apply on success).
	Granted Lease
}

// DuplicateError reports an idempotency key that is already recorded.
type DuplicateError struct {
	Key    IdempotencyKey
	TaskID string
}

// Error names the message, its context and the task it started.
func (e *DuplicateError) Error() string {
	return "message " + e.Key.MessageID + " was already submitted in context " + e.Key.ContextID + " (task " + e.TaskID + ")"
}

// ErrorClass classifies a DuplicateError as a conflict.
func (e *DuplicateError) ErrorClass() errdefs.Class { return errdefs.ClassConflict }

// Checkpoints keeps every checkpoint of a run (history for time travel).
type Checkpoints interface {
	// SaveCheckpoint appends cp to its run's history. A checkpoint whose
	// attempt (Attributes[AttrAttempt]) is lower than that of the newest
	// stored checkpoint is a stale writer and fails with Conflict.
	SaveCheckpoint(ctx context.Context, cp engine.Checkpoint) error
	// LoadCheckpoint returns the newest checkpoint of run, or (nil, nil).
	LoadCheckpoint(ctx context.Context, runID string) (*engine.Checkpoint, error)
	// ListCheckpoints returns the run's checkpoints, oldest first.
	ListCheckpoints(ctx context.Context, runID string) ([]engine.Checkpoint, error)
	// DeleteCheckpoints deletes every checkpoint of run.
	DeleteCheckpoints(ctx context.Context, runID string) error
}

// AttrAttempt is the checkpoint attribute carrying the attempt number that
// wrote it (decimal).
const AttrAttempt = "agentd.attempt"

// PushConfigs stores push-notification configs per task, and the durable
// cursor of each one's delivery. Delivery is claimed per config, so that
// one replica at a time delivers a config's updates, in order, and a
// killed replica's deliveries resume elsewhere after its claims expire.
type PushConfigs interface {
	// PutPushConfig creates or replaces the config (TaskID, ID), with its
	// Delivered cursor as given and Done cleared. A replace ends any claim
	// on the config: its holder's next save is a Conflict.
	PutPushConfig(ctx context.Context, c run.PushConfig) error
	GetPushConfig(ctx context.Context, taskID, id string) (run.PushConfig, error)
	ListPushConfigs(ctx context.Context, taskID string) ([]run.PushConfig, error)
	DeletePushConfig(ctx context.Context, taskID, id string) error
	// ClaimPushDeliveries claims for owner, until now+ttl, up to limit
	// configs of any tenant that are not Done, not parked at their task's
	// current version, and whose claim is free or expired, and returns
	// them with their Tenant and Claim. Of concurrent claimants of a
	// config exactly one wins.
	ClaimPushDeliveries(ctx context.Context, owner string, ttl time.Duration, limit int) ([]run.PushConfig, error)
	// SavePushDelivery records c.Delivered, c.Done and c.ParkedVersion of
	// the config c (in the context's tenant) and extends c.Claim to
	// now+ttl — or releases it when c is done or parked — provided the
	// claim is still held as
	// c.Claim says (owner and generation). It returns the config with its
	// claim as extended; Conflict when the claim was lost, NotFound when
	// the config is gone. A ttl of 1ns hands the claim over at once.
	SavePushDelivery(ctx context.Context, c run.PushConfig, ttl time.Duration) (run.PushConfig, error)
	// SavePushDeliveries is SavePushDelivery for many configs, of any
	// tenants (each c.Tenant), each at most once, in one round trip: a
	// replica's deliveries share their cursor writes. saved[i] reports
	// whether cs[i] was saved; false means its claim was lost or the
	// config is gone.
	SavePushDeliveries(ctx context.Context, cs []run.PushConfig, ttl time.Duration) (saved []bool, err error)
}

// Lease is a replica's claim on a running run.
type Lease struct {
	RunID string
	// Tenant is the run's tenant, recorded from the context on acquire, so
	// that a replica recovering an expired lease can read the run.
	Tenant string
	Owner  string
	// Generation increases every time the lease changes hands; it fences
	// writes of a previous owner.
	Generation int64
	ExpiresAt  time.Time
}

// RenewedLease is a lease RenewLeases extended.
type RenewedLease struct {
	Lease
	// CancelRequested is the run's task's cancel request.
	CancelRequested bool
	// Signals are the run's task's pending signals (Task.Signals).
	Signals []run.PendingSignal
}

// Leases coordinates which replica executes which run. A store that can
// restart (PostgreSQL) refuses to hand another owner's expired lease over
// until it has been up for that lease's TTL: after an outage every lease
// has expired, and live owners must get the chance to renew first.
type Leases interface {
	// AcquireLease claims run for owner until now+ttl when it is unleased,
	// expired, or already owner's; otherwise Conflict. Of concurrent
	// claimants exactly one wins.
	AcquireLease(ctx context.Context, runID, owner string, ttl time.Duration) (Lease, error)
	// RenewLease extends a held lease; Conflict if it was lost.
	RenewLease(ctx context.Context, l Lease, ttl time.Duration) (Lease, error)
	// RenewLeases extends every lease of ls that is still held as it says
	// (owner and generation), in one round trip however many there are,
	// and returns those it extended, each with its run's cancel request
	// and pending signals (so that a cancel, pause or feedback recorded
	// elsewhere reaches the owner in the same round). A lease missing from
	// the answer was lost.
	RenewLeases(ctx context.Context, ls []Lease, ttl time.Duration) ([]RenewedLease, error)
	// ReleaseLease gives the lease up; releasing a lost lease is a no-op.
	ReleaseLease(ctx context.Context, l Lease) error
	// ExpiredLeases lists up to limit leases that expired before now.
	ExpiredLeases(ctx context.Context, now time.Time, limit int) ([]Lease, error)
}
