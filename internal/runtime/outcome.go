package runtime

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"agentd/internal/agent"
	"agentd/internal/engine"
	"agentd/internal/errdefs"
	"agentd/internal/model"
	"agentd/internal/run"
	"agentd/internal/runlog"
	"agentd/internal/store"
)

// outcome is how an attempt ended, as the task will record it.
type outcome struct {
	state  run.TaskState
	err    *run.TaskError
	status *model.Message
	prompt *engine.UserPrompt
	keep   bool // persist the attempt's new transcript messages
	said   bool // status is a message of the transcript already
}

func (x *execution) classify(res *agent.Result, runErr error) outcome {
	x.mu.Lock()
	cause, note := x.cancelCause, x.cancelNote
	x.mu.Unlock()
	if runErr != nil {
		return x.failure(runErr)
	}
	switch res.Status {
	case agent.StatusCompleted:
		if cause == engine.CauseUserCancel && engine.CapabilitiesOf(x.agent.Engine).HandlesParkedInterrupts {
			return handledCancel(res, note)
		}
		return outcome{state: run.StateCompleted, keep: res.Committed}
	case agent.StatusInterrupted:
		if p := x.host.pendingPrompt(); p != nil && (cause == "" || cause == engine.CausePause) {
			msg := model.Message{Role: model.RoleAssistant, Parts: p.Parts, Name: x.agent.ID}
			state := run.StateInputRequired
			if p.Auth {
				state = run.StateAuthRequired
			}
			return outcome{state: state, status: &msg, prompt: p, keep: true}
		}
	}
	switch cause {
	case engine.CausePause:
		if o, ok := x.pausedOutcome(res); ok {
			return o
		}
	case engine.CauseHostShutdown:
		// Not an end: the run stays working and resumes from its checkpoint.
		return outcome{state: run.StateWorking, keep: false}
	case engine.CauseUserCancel, engine.CauseUserInput:
		reason := "canceled by the user"
		if note != "" {
			reason = note
		}
		msg := model.NewText(model.RoleAssistant, reason)
		return outcome{state: run.StateCanceled, status: &msg, keep: res.Committed}
	}
	if res.Err != nil {
		o := x.failure(res.Err)
		o.keep = res.Committed
		return o
	}
	return x.failure(errdefs.Internalf("engine ended with status %q and no error", res.Status))
}

// failure is the outcome of an attempt that failed with err. The task
// keeps err's message, which its readers see — unless err says only that
// something the agent needed was unreachable (class NotAvailable, not
// marked public): its cause names hosts and drivers, so it goes to the log
// and the task says what a client can act on.
func (x *execution) failure(err error) outcome {
	class := errdefs.ClassOf(err)
	text := err.Error()
	if class == errdefs.ClassNotAvailable && !errdefs.IsPublic(err) {
		x.r.log.WarnContext(x.logContext(), "run failed: a service it needs is unavailable", "run_id", x.runID, "err", err)
		text = "a service this agent needs (its model endpoint, a tool or the store) is unavailable; retry later"
	}
	state := run.StateFailed
	if class == errdefs.ClassValidation {
		state = run.StateRejected
	}
	if errors.Is(err, context.Canceled) {
		state = run.StateCanceled
	}
	msg := model.NewText(model.RoleAssistant, text)
	return outcome{state: state, err: &run.TaskError{Class: string(class), Message: text}, status: &msg}
}

// finish records the attempt's outcome in one commit: the task's new state,
// the transcript messages the attempt produced, the status event and
// run.end — all durable before run.end becomes visible (invariant 6).
func (x *execution) finish(res *agent.Result, runErr error) error {
	o := x.classify(res, runErr)
	old, stored := x.task, false
	defer func() {
		if !stored {
			x.task = old // as last written
		}
	}()
	t := &x.task
	x.foldTotals(t)
	t.State, t.Error, t.StatusMessage = o.state, o.err, o.status
	if o.state.Terminal() {
		markOutcome(t, x.partialOutcome(o.state))
	}
	if !o.state.Terminal() || o.state == run.StateFailed {
		// The next attempt resumes from the latest checkpoint (a failed
		// run's, when retried): it is stored before the task says the
		// run can go on.
		if err := x.writeHeldCheckpoint(); err != nil {
			return err
		}
	}
	msgs, err := x.finalMessages(o, res, t)
	if err != nil {
		return err
	}
	evs := finishEvents(o, t)
	x.host.mu.Lock()
	x.host.ended = true
	x.host.mu.Unlock()
	release := x.leaseToGive(o.state)
	var settled []run.Message // msgs and the relayed feedback the commit stores
	settle := func(msgs []run.Message) []run.Message {
		settled = x.settleSignals(t, o, msgs)
		return settled
	}
	// The commit rides out an unreachable store up to the outage bound.
	ctx, cancel := x.finishContext()
	defer cancel()
	rebase := x.rebaseFinish(ctx, t, msgs, release, settle)
	change := store.Change{UpdateTask: t, Stored: &x.final, Messages: settle(msgs), Release: release}
	if _, err := x.r.commitRebasing(ctx, x.log, change, rebase, evs...); err != nil {
		x.keepLease(release)
		x.noteFinishLapsed(ctx)
		return err
	}
	stored = true
	t.Version++
	x.finished, x.stored = true, settled
	x.handover = o.state == run.StateWorking
	if o.state.Terminal() {
		x.log.End()
	}
	return nil
}

// foldTotals adds the attempt's usage and artifacts to t.
func (x *execution) foldTotals(t *run.Task) {
	x.mu.Lock()
	defer x.mu.Unlock()
	t.Usage = t.Usage.Add(x.usage)
	t.ModelUsage = mergeModelUsage(t.ModelUsage, x.modelUsage)
	if len(x.artifacts) > 0 {
		t.Artifacts = mergeArtifacts(t.Artifacts, x.artifacts)
	}
}

// finalMessages are the transcript messages the attempt's final commit
// stores: the engine's new messages when the outcome keeps them, feedback
// no turn consumed, and the status message (named, and set on t) when the
// run stops or parks with one.
func (x *execution) finalMessages(o outcome, res *agent.Result, t *run.Task) ([]run.Message, error) {
	var msgs []run.Message
	if o.keep && res != nil && res.LastBoard != nil {
		var err error
		if msgs, err = x.newMessages(res.LastBoard); err != nil {
			return nil, err
		}
	}
	msgs = append(msgs, x.leftoverFeedback(o)...)
	if o.status != nil && o.state != run.StateWorking {
		m := *o.status
		m.ID = messageID(t.ID, -t.Attempt)
		m.CreatedAt = storedNow()
		t.StatusMessage = &m
		if o.prompt != nil || o.err == nil && !o.said {
			msgs = append(msgs, run.Message{ContextID: t.ContextID, TaskID: t.ID, Message: m})
		}
	}
	return msgs, nil
}

// leaseToGive is the lease that a run which ends or parks in state gives up
// in its final commit (a handover lets it expire instead, see release). It
// is no longer renewed from here on: leaseMu waits for a renewal round in
// flight, and later rounds skip an execution without a lease. No lock is
// held across the commit, so a slow commit delays no other run's renewal.
func (x *execution) leaseToGive(state run.TaskState) *store.Lease {
	if state == run.StateWorking {
		return nil
	}
	x.leaseMu.Lock()
	defer x.leaseMu.Unlock()
	x.mu.Lock()
	defer x.mu.Unlock()
	l := x.leaseLocked()
	if l.RunID == "" {
		return nil
	}
	x.lease = store.Lease{}
	return &l
}

// keepLease takes back a lease whose release commit failed, so that release
// gives it up (or renewal keeps it) as before.
func (x *execution) keepLease(l *store.Lease) {
	if l == nil {
		return
	}
	x.mu.Lock()
	if x.lease.RunID == "" {
		x.lease = *l
	}
	x.mu.Unlock()
}

// finishEvents are the events that end attempt outcome o of task t: the
// prompt of a run that asks, the new status, and run.end.
func finishEvents(o outcome, t *run.Task) []runlog.Entry {
	evs := make([]runlog.Entry, 0, 3)
	if o.prompt != nil {
		evs = append(evs, inputEvent(InputData{Prompt: *t.StatusMessage, Schema: o.prompt.Schema, Source: o.prompt.Source}))
	}
	if o.state != run.StateWorking {
		evs = append(evs, statusEvent(StatusData{State: o.state, Message: t.StatusMessage, Error: o.err, Outcome: OutcomeOf(*t)}))
	}
	return append(evs, runEndEvent(RunEndData{State: o.state, Error: o.err, Usage: t.Usage, Outcome: OutcomeOf(*t)}))
}

// rebaseFinish resolves a conflict of the final commit of t: someone else
// wrote the task meanwhile (a cancel request from another replica), so
// the outcome goes on top of their version, a few times at most.
// The signals pending on the task are settled again on its version (settle).
func (x *execution) rebaseFinish(ctx context.Context, t *run.Task, msgs []run.Message, release *store.Lease, settle func([]run.Message) []run.Message) runlog.Rebase {
	tries := 0
	return func(conflict error) (store.Change, error) {
		if tries++; tries > 5 {
			return store.Change{}, conflict
		}
		var fresh run.Task
		err := x.r.retry(ctx, "task read", t.ID, func() (err error) {
			fresh, err = x.r.st.GetTask(ctx, t.ID)
			return err
		})
		if err != nil {
			return store.Change{}, err
		}
		if fresh.State.Terminal() {
			return store.Change{}, fmt.Errorf("run %s ended elsewhere as %s: %w", t.ID, fresh.State, conflict)
		}
		t.Version, t.CancelRequested, t.Signals = fresh.Version, fresh.CancelRequested, fresh.Signals
		return store.Change{UpdateTask: t, Stored: &x.final, Messages: settle(msgs), Release: release}, nil
	}
}

// newMessages returns the main-channel messages of the final board that the
// transcript does not hold yet, named deterministically when unnamed, with
// their times as the store keeps them.
//
// A fresh attempt's board started from the transcript it read (history),
// and nobody else writes this task's messages while it executes, so the
// messages it seeded are the ones to leave out; a resumed attempt's board
// comes from a checkpoint, so the transcript is read again.
func (x *execution) newMessages(b *engine.Board) ([]run.Message, error) {
	known := x.seeded
	if x.resume != "" {
		var page run.MessagePage
		err := x.r.retry(x.bg, "transcript read", x.runID, func() (err error) {
			// The seeded messages are among the latest historyLimit, with
			// room for those of tasks queued behind this one.
			page, err = x.r.st.ListMessages(x.bg, run.MessageQuery{ContextID: x.contextID, Last: x.agent.historyLimit() + 1000})
			return err
		})
		if err != nil {
			return nil, err
		}
		known = make([]string, len(page.Messages))
		for i, m := range page.Messages {
			known[i] = m.ID
		}
	}
	var index map[string]bool // ids to leave out, for long transcripts; short ones are scanned
	if len(known) > 16 {
		index = make(map[string]bool, len(known))
		for _, id := range known {
			index[id] = true
		}
	}
	var out []run.Message
	now := storedNow()
	for i, m := range b.Channel(engine.MainChannel) {
		if isRevision(m) {
			continue
		}
		if m.ID == "" {
			m.ID = messageID(x.runID, i)
		}
		if index != nil {
			if index[m.ID] {
				continue
			}
			index[m.ID] = true
		} else if slices.Contains(known, m.ID) || containsID(out, m.ID) {
			continue
		}
		if m.CreatedAt.IsZero() {
			m.CreatedAt = now
		} else {
			m.CreatedAt = store.StoredTime(m.CreatedAt)
		}
		if m.Name == "" && m.Role == model.RoleAssistant {
			m.Name = x.agent.ID
		}
		out = append(out, run.Message{ContextID: x.contextID, TaskID: x.runID, Message: m})
	}
	return out, nil
}

// containsID reports whether msgs holds a message with id.
func containsID(msgs []run.Message, id string) bool {
	for i := range msgs {
		if msgs[i].ID == id {
			return true
		}
	}
	return false
}

func mergeArtifacts(old, cur []model.Artifact) []model.Artifact {
	out := append([]model.Artifact(nil), old...)
	for _, a := range cur {
		replaced := false
		for i := range out {
			if out[i].ID == a.ID {
				out[i], replaced = a, true
			}
		}
		if !replaced {
			out = append(out, a)
		}
	}
	return out
}
