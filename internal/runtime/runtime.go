package runtime

import (
	"agentd/internal/calltree"
	"context"
	"errors"
	"log/slog"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"

	"agentd/internal/agent"
	"agentd/internal/engine"
	"agentd/internal/errdefs"
	"agentd/internal/model"
	"agentd/internal/runlog"
	"agentd/internal/store"
)

// MultitaskPolicy says what a message to a context that already has a
// running task does.
type MultitaskPolicy string

// The multitask policies.
const (
	// MultitaskReject refuses the message with Conflict (the default).
	MultitaskReject MultitaskPolicy = "reject"
	// MultitaskEnqueue creates the task in submitted state and starts it when
	// the context's running task has ended.
	MultitaskEnqueue MultitaskPolicy = "enqueue"
	// MultitaskInterrupt interrupts the running task (cause user_input) and
	// starts the new one.
	MultitaskInterrupt MultitaskPolicy = "interrupt"
)

// Agent is a hosted agent: its identity and card, the engine that executes
// its runs, and the runtime policies that apply to them.
type Agent struct {
	agent.Agent
	// Engine executes the agent's runs.
	Engine engine.Engine
	// EngineKind names the engine in listings (loop, graph, flow, …).
	EngineKind string
	// Deps is passed to every run of the agent.
	Deps *engine.Dependencies
	// Multitask is the policy for a busy context ("" = reject).
	Multitask MultitaskPolicy
	// MaxTokensPerRun stops a run whose usage exceeds it (0 = no limit);
	// MaxInputTokensPerRun and MaxOutputTokensPerRun bound each direction.
	MaxTokensPerRun int64
	// MaxCostPerRun bounds the cost of a run's whole call tree (0 = no
	// limit), priced by Options.Prices (calltree.ChargeCost).
	MaxCostPerRun float64
	// ChildBudgetShare is the part (0 < f ≤ 1; 0 = 1) of what a run has
	// left that one child run may spend (budget_share.go).
	ChildBudgetShare      float64
	MaxInputTokensPerRun  int64
	MaxOutputTokensPerRun int64
	// MaxWallTime stops an attempt that runs longer, as a budget
	// (BudgetExceeded), where Timeout stops it as a timeout.
	MaxWallTime time.Duration
	// MaxTokensTotal stops runs once the agent's usage since the process
	// started exceeds it (0 = no limit).
	MaxTokensTotal int64
	// MaxTokensPerPeriod bounds the tokens the agent's runs use in each
	// BudgetPeriod, per tenant, counted in the store (budget.go): shared
	// by replicas and kept across restarts. 0 = no limit.
	MaxTokensPerPeriod int64
	BudgetPeriod       time.Duration
	// MaxRevise, when above 1, bounds the attempts of a run whose
	// Deciders ask for revisions (agent.WithMaxRevise); each revise
	// attempt sees the previous answer and the feedback (revise.go).
	MaxRevise int
	// HistoryLimit bounds how many transcript messages seed a run's board
	// (0 = DefaultHistoryLimit); see history.go.
	HistoryLimit int
	// Timeout bounds each attempt's wall time (0 = none): an attempt that
	// passes it fails the run with class timeout.
	Timeout time.Duration
	// Description and Streaming are shown in listings.
	Description string
	// Handoffs are the targets the agent's model may hand the
	// conversation to (handoff.go).
	Handoffs []Handoff
	// Configure builds the agent's engine with an assistant's overrides
	// (its context) applied, validated as strictly as the configuration
	// file: an error names the member at fault under field ("context.
	// temperature: …"). Nil for an agent whose assistants override nothing
	// (assistants.go).
	Configure func(field string, overrides map[string]any) (engine.Engine, error)
}

// Options configure a Runtime.
type Options struct {
	Store  store.Store
	Agents []*Agent
	// ReplicaID names this process in leases and logs (default: a UUID).
	ReplicaID string
	// CancelGrace is how long a cooperative cancel may take before the run's
	// context is canceled (default 5s).
	CancelGrace time.Duration
	// FlushWindow is the least time between two writes of live events: a
	// burst of deltas within it becomes one write. The first event after a
	// quiet spell is written at once. Zero writes as fast as the store
	// takes them (group commit); PostgreSQL deployments use ~25ms.
	FlushWindow time.Duration
	// LeaseTTL is how long a replica's claim on a running run lasts without
	// renewal (default 5s); a dead replica's runs resume elsewhere after it.
	LeaseTTL time.Duration
	// SweepEvery is how often expired leases are looked for (default 1s).
	SweepEvery time.Duration
	// OutageBound, Owners and MaxBacklog say how runs ride out an
	// unreachable store (outage.go; defaults DefaultOutageBound and
	// DefaultMaxBacklog). Without Owners an expired lease is taken over
	// without asking its owner (a store no other replica shares).
	OutageBound time.Duration
	Owners      OwnerProbe
	MaxBacklog  int
	// Logger receives operational logs (default slog.Default()).
	Logger *slog.Logger
	// Observer, when set, sees runs and their steps (traces, metrics).
	Observer Observer
	// Prices are the models' token prices by model name: trajectories
	// show what each model call and the run cost (nil: no costs).
	Prices map[string]Price
	// CallTree bounds the tree of runs one request starts (calltree.go);
	// its Server defaults to ReplicaID.
	CallTree calltree.Limits
}

// Runtime starts and owns runs. It is the only package that coordinates the
// store, the engines and the event logs.
type Runtime struct {
	st         store.Store
	configured configuredAgents // assistants' agents, by overrides (assistants.go)
	agents     map[string]*Agent
	order      []string
	replica    string
	grace      time.Duration
	log        *slog.Logger
	observer   Observer
	prices     map[string]Price
	calls      calltree.Limits
	logs       *runlog.Logs
	volatile   bool
	leaseTTL   time.Duration
	sweepEvery time.Duration
	outage     outagePolicy
	// agentUsed counts each agent's usage (made in New, read-only after).
	agentUsed map[string]*usageCounter
	// storeTrouble is when a lease renewal or sweep last found the store
	// unreachable (Unix nanoseconds; 0 never): see sweep.
	storeTrouble atomic.Int64

	// ctx is the runtime's lifetime: runs derive from it, not from requests
	// (invariant 5).
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
	// scheduleWake wakes the scheduler loop (schedules_fire.go).
	scheduleWake chan struct{}
	// handoff passes an execution to an idle worker (launch).
	handoff chan *execution
	// submitting counts submissions between the draining check and their
	// launch; Shutdown waits for them.
	submitting sync.WaitGroup

	mu       sync.Mutex
	runs     map[string]*execution
	contexts map[string]*contextQueue
	// canceling marks tasks whose cancel is in progress here, so that a
	// resume cannot start under it.
	canceling map[string]bool
	draining  bool
}

// New builds a runtime and starts its background work. Call Shutdown to
// stop it.
func New(opts Options) (*Runtime, error) {
	if opts.Store == nil {
		return nil, errors.New("runtime: no store")
	}
	r := &Runtime{
		st:        opts.Store,
		agents:    map[string]*Agent{},
		agentUsed: map[string]*usageCounter{},
		replica:   opts.ReplicaID,
		grace:     opts.CancelGrace,
		log:       opts.Logger,
		observer:  opts.Observer,
		prices:    opts.Prices,
		calls:     opts.CallTree,
		runs:      map[string]*execution{},
		contexts:  map[string]*contextQueue{},
		canceling: map[string]bool{},
		handoff:   make(chan *execution),

		scheduleWake: make(chan struct{}, 1),
	}
	r.defaults(opts)
	r.outage = newOutagePolicy(opts)
	if err := r.addAgents(opts.Agents); err != nil {
		return nil, err
	}
	r.ctx, r.cancel = context.WithCancel(context.Background())
	r.logs = runlog.New(runlog.Options{Store: r.st, Window: opts.FlushWindow,
		OnLost: r.lost, Stop: r.ctx.Done(), Logger: r.log})
	r.start()
	return r, nil
}

// defaults fills in what opts leaves unset.
func (r *Runtime) defaults(opts Options) {
	if r.replica == "" {
		r.replica = uuid.NewString()
	}
	if r.calls.Server == "" {
		r.calls.Server = r.replica
	}
	if r.grace <= 0 {
		r.grace = 5 * time.Second
	}
	if r.log == nil {
		r.log = slog.Default()
	}
	r.leaseTTL, r.sweepEvery, r.volatile = opts.LeaseTTL, opts.SweepEvery, store.IsVolatile(opts.Store)
	if r.leaseTTL <= 0 {
		r.leaseTTL = DefaultLeaseTTL
	}
	if r.sweepEvery <= 0 {
		r.sweepEvery = time.Second
	}
}

// start starts the runtime's long-lived goroutines (docs/architecture.md):
// the schedules, the run logs' flusher, lease renewal and the sweep.
func (r *Runtime) start() {
	r.wg.Add(4)
	go func() {
		defer r.wg.Done()
		r.schedule(r.ctx)
	}()
	go func() {
		defer r.wg.Done()
		r.logs.Run(r.ctx)
	}()
	go func() {
		defer r.wg.Done()
		r.keepLeases(r.ctx)
	}()
	go func() {
		defer r.wg.Done()
		r.sweep(r.ctx)
	}()
}

// addAgents checks and adds the hosted agents, in configuration order.
func (r *Runtime) addAgents(agents []*Agent) error {
	for i, a := range agents {
		if a == nil || a.ID == "" {
			return errdefs.Validationf("agents[%d]: empty id", i)
		}
		if a.Engine == nil {
			return errdefs.Validationf("agents[%d] (%s): no engine", i, a.ID)
		}
		if _, dup := r.agents[a.ID]; dup {
			return errdefs.Validationf("agents[%d]: duplicate id %q", i, a.ID)
		}
		switch a.Multitask {
		case "", MultitaskReject, MultitaskEnqueue, MultitaskInterrupt:
		default:
			return errdefs.Validationf("agents[%d] (%s): unknown multitask policy %q (want reject, enqueue or interrupt)", i, a.ID, a.Multitask)
		}
		r.agents[a.ID] = a
		r.agentUsed[a.ID] = &usageCounter{}
		r.order = append(r.order, a.ID)
	}
	return nil
}

// ReplicaID names this replica in the claims it holds (leases, push
// deliveries): another replica takes them over once they expire.
func (r *Runtime) ReplicaID() string { return r.replica }

// Agent returns the agent with id, or NotFound.
func (r *Runtime) Agent(id string) (*Agent, error) {
	a, ok := r.agents[id]
	if !ok {
		return nil, errdefs.NotFoundf("agent %q not found (agents: %v)", id, r.order)
	}
	return a, nil
}

// Agents lists the hosted agents in configuration order.
func (r *Runtime) Agents() []*Agent {
	out := make([]*Agent, len(r.order))
	for i, id := range r.order {
		out[i] = r.agents[id]
	}
	return out
}

// AgentIDs returns the agent ids, sorted.
func (r *Runtime) AgentIDs() []string {
	ids := append([]string(nil), r.order...)
	sort.Strings(ids)
	return ids
}

// lost stops a run whose log another writer took over.
func (r *Runtime) lost(runID string, err error) {
	r.mu.Lock()
	x := r.runs[runID]
	r.mu.Unlock()
	if x != nil {
		x.abandon(err)
	}
}

// newID mints a time-ordered id.
func newID() string { return model.NewID() }

// Wake tells readers of a run that executes elsewhere that its log grew
// (a wake-up from another replica, e.g. PostgreSQL NOTIFY); an empty runID
// wakes the readers of every such run (runlog.Logs.Wake).
func (r *Runtime) Wake(runID string) { r.logs.Wake(runID) }
