package runtime

import (
	"context"

	"agentd/internal/run"
	"agentd/internal/runlog"
	"agentd/internal/store"
)

// Await is how the caller of Send takes a new task's answer.
type Await int

const (
	// AwaitNone: the caller answers with the task at once (a
	// non-blocking send): it is stored before Send returns.
	AwaitNone Await = iota
	// AwaitEnd: the caller waits on this request for the run to end or
	// ask for input (a blocking send).
	AwaitEnd
	// AwaitStream: the caller streams the run's events on this request.
	// It answers only once the task is stored (Submission.Durable).
	AwaitStream
)

// create stores new task x — created working when it starts at once (its
// events still pass through submitted), submitted when queued — with its
// user message, idempotency key, first events and lease, in one change: a
// replica that dies right after it is written leaves a lease that expires,
// and another replica's sweep starts or resumes the run. The change is
// written now, or, when req's caller awaits the run, handed to the run's
// log to ride with the run's first write (deferCreate). x.task, x.user and
// x.key are the submission's until x.created is closed.
func (r *Runtime) create(ctx context.Context, x *execution, start bool, req SendRequest) error {
	evs := [3]runlog.Entry{
		runStartEvent(RunStartData{ContextID: x.contextID, AgentID: x.agent.ID, Attempt: 1}),
		statusEvent(StatusData{State: run.StateSubmitted}),
	}
	n := 2
	if start {
		x.task.State, x.task.Attempt = run.StateWorking, 1
		evs[n] = statusEvent(StatusData{State: run.StateWorking})
		n++
	}
	c := store.Change{
		Idempotency: &x.key,
		TaskID:      x.runID,
		CreateTask:  &x.task,
		Messages:    x.user[:],
		Lease:       r.leaseClaim(),
	}
	if x.deferrable(req, start) {
		return x.deferCreate(c, req.Await, evs[:n])
	}
	if _, err := r.submitCommit(ctx, x.log, c, evs[:n]...); err != nil {
		return err
	}
	x.task.Version = 1
	x.holdLease(c.Lease.Granted)
	return nil
}

// deferrable says whether x's create, asked for by req, may wait for the
// run's first write (deferCreate): the caller awaits the run on this
// request (a blocking send, a stream), the task starts at once, under an
// id the runtime chose, in a context this submission opened with a message
// the store holds as it is (x.freshContext) — so no other request can name
// the task, its context or its key before the caller hears of it (a
// client's id may be taken: its create is written now, and a taken one
// refused as a Conflict), and the attempt starts from the message rather
// than from the transcript it is not yet in — and the store is durable (a
// volatile store writes in memory: nothing to save) and was not found
// unreachable within a lease period (recentStoreTrouble: the lease sweep
// looks every second): while it is down a send is refused with a 503 after
// submitPatience, as ever, rather than run with nowhere to be written.
func (x *execution) deferrable(req SendRequest, start bool) bool {
	return req.Await != AwaitNone && req.RunID == "" && start && x.freshContext && !x.r.volatile && !x.r.recentStoreTrouble()
}

// deferCreate hands x's create to the run's log (runlog.Log.Defer), which
// owns it until a write of the run carries it: its final commit when the
// run ends within the flusher's window, else whichever write comes first.
// Until then the run holds no lease (run takes none: the write that
// carries the create claims it, and x takes it from the create, see
// leaseLocked). A blocking send's run is quiet: nobody reads its events
// before it ends, so its first delta waits for the window like the rest.
func (x *execution) deferCreate(c store.Change, await Await, evs []runlog.Entry) error {
	task := x.task // the create's own copy: the run writes x.task in place
	c.CreateTask = &task
	create, err := x.log.Defer(c, await == AwaitEnd, evs...)
	if err != nil {
		return err
	}
	x.mu.Lock()
	x.create = create // lease renewals look at it (leaseLocked)
	x.mu.Unlock()
	x.task.Version = 1 // as the write that carries it will store it
	return nil
}

// Durable waits until the submission's task is stored: at once for a
// task stored before Send returned, at the run's first write for a
// deferred create (a stream answers only then: a client may look the run
// up as soon as it is answered). It fails only when ctx ends.
func (s Submission) Durable(ctx context.Context) error {
	return s.create.Wait(ctx)
}
