package runtime

import (
	"context"
	"slices"

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

// deferrable says whether x's create may wait for the run's first write
// (runlog.Deferred): the caller awaits the run on this request (a
// blocking send, a stream), the task starts at once in a context this
// submission opened — so no other request can name the task, its context
// or its key before the caller hears of it — the user message reads back
// as it is (the attempt starts from it rather than from the transcript it
// is not yet in: history), and the store is durable (a volatile store writes in memory:
// nothing to save) and was not found unreachable within a lease period
// (recentStoreTrouble: the lease sweep looks every second): while it is
// down a send is refused with a 503 after submitPatience, as ever, rather
// than run with nowhere to be written.
func (x *execution) deferrable(await Await, start bool) bool {
	return await != AwaitNone && start && x.newContext && storedAsIs(x.user[0].Message) && !x.r.volatile && !x.r.recentStoreTrouble()
}

// deferCreate logs x's create and holds change c for the run's first
// write: its final commit when the run ends within the flusher's window,
// else whichever write comes first. Until then the run holds no lease (run
// takes none: the write that carries the create claims it, createLanded
// records it). A blocking send's run is quiet: nobody reads its events
// before it ends, so its first delta waits for the window like the rest.
func (x *execution) deferCreate(c store.Change, await Await, evs []stateEvent) error {
	task := x.task // the create's own copy: the run writes x.task in place
	c.CreateTask = &task
	x.durable = make(chan struct{})
	_, err := x.log.Defer(runlog.Deferred{
		Change: c, Merge: mergeCreate, Landed: x.createLanded, Quiet: await == AwaitEnd,
	}, entries(evs)...)
	if err != nil {
		x.durable = nil
	}
	return err
}

// mergeCreate folds a run's deferred create into next, the run's first
// write. A task update becomes the create of the updated task (at the
// update's version: the store stores it plus one, as the update would
// have); a run that stops executing here with it — it ended or asks for
// input — needs no lease, and its create claims none.
func mergeCreate(create, next store.Change) store.Change {
	m := next
	m.Idempotency, m.TaskID, m.CreateTask, m.Lease = create.Idempotency, create.TaskID, create.CreateTask, create.Lease
	if u := next.UpdateTask; u != nil {
		m.CreateTask, m.UpdateTask = u, nil
		if u.State.Terminal() || u.State.Interrupted() {
			m.Lease = nil
		}
	}
	m.Messages = append(slices.Clip(create.Messages), next.Messages...)
	return m
}

// createLanded records the lease the write that carried x's create
// claimed: renewed from now on, and fencing the run's later writes.
func (x *execution) createLanded(written store.Change) {
	if written.Lease != nil {
		x.holdLease(written.Lease.Granted)
	}
	close(x.durable)
}

// Durable waits until the submission's task is stored: at once for a
// task stored before Send returned, at the run's first write for a
// deferred create (a stream answers only then: a client may look the run
// up as soon as it is answered). It fails only when ctx ends.
func (s Submission) Durable(ctx context.Context) error {
	if s.durable == nil {
		return nil
	}
	select {
	case <-s.durable:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
