package runtime

import (
	"context"
	"slices"

	"github.com/google/uuid"

	"agentd/internal/engine"
	"agentd/internal/errdefs"
	"agentd/internal/model"
	"agentd/internal/run"
	"agentd/internal/store"
)

// Relayed signals: a pause or a feedback for a run another replica
// executes is recorded on the task (run.Task.Signals, a versioned
// update, like a cancel request) and answered at once; the owner reads
// the task's pending signals in its next lease renewal round (at most
// maxRenewEvery later) and acts on each as if it had been sent to it,
// logging its "signal" event then.
//
// A signal leaves the task only once its effect is durable, so that it
// reaches the run exactly once, whatever replica dies when:
//   - a feedback, once a checkpoint holds the message the engine took (the
//     message's id is the signal's, so a checkpoint written just before
//     the owner died is recognised by the next attempt, which skips it);
//     or with the attempt's final commit (the transcript, or a paused
//     run's status, holds it then);
//   - a pause, with the final commit of the attempt it paused (or ended
//     without a boundary).
//
// An attempt that takes a run over (or resumes it) takes the signals
// still pending on the task when it starts: the feedback its predecessor
// never handed to the engine, a pause it never delivered. Their signal
// events are logged again, under the same ids.

// recordSignal records pause or feedback s on working task t for the
// replica that executes it. A task that changed meanwhile is looked at
// again: the signal then goes the way its new state says, once.
func (r *Runtime) recordSignal(ctx context.Context, t run.Task, s Signal, again bool) (run.Task, error) {
	for range 5 {
		next := t
		next.Signals = append(slices.Clone(t.Signals), run.PendingSignal{ID: uuid.NewString(), Type: s.Type, Text: s.Text, At: storedNow()})
		err := r.st.Apply(ctx, store.Change{UpdateTask: &next})
		if err == nil {
			next.Version++
			return next, nil
		}
		if !errdefs.IsConflict(err) {
			return run.Task{}, err
		}
		if t, err = r.st.GetTask(ctx, t.ID); err != nil {
			return run.Task{}, err
		}
		if t.State != run.StateWorking || r.executing(t.ID) != nil {
			if again {
				break
			}
			return r.signalAgain(ctx, t, s)
		}
	}
	return run.Task{}, errdefs.Conflictf("task %s kept changing while taking a %s signal; try again", t.ID, s.Type)
}

// signalAgain applies pause or feedback s to task t, read again after it
// changed under recordSignal.
func (r *Runtime) signalAgain(ctx context.Context, t run.Task, s Signal) (run.Task, error) {
	if s.Type == SignalFeedback {
		return r.feedbackTo(ctx, t, s, true)
	}
	return r.pauseTo(ctx, t, s, true)
}

// withdrawPause removes the pauses pending on working task t that no
// replica delivered yet; ok is false when there is none.
func (r *Runtime) withdrawPause(ctx context.Context, t run.Task) (run.Task, bool, error) {
	return r.updateTask(ctx, t, "taking a resume signal", func(t run.Task) (run.Task, bool) {
		keep := slices.DeleteFunc(slices.Clone(t.Signals), func(p run.PendingSignal) bool { return p.Type == SignalPause })
		if len(keep) == len(t.Signals) || t.State != run.StateWorking {
			return t, false
		}
		t.Signals = keep
		return t, true
	})
}

// relayed is what an attempt knows of the signals stored on its task.
// Guarded by steering.mu.
type relayed struct {
	// feedback maps the id of each stored feedback this attempt handed on
	// (or found in the checkpoint it resumed from) to whether a checkpoint
	// holds it.
	feedback map[string]bool
	// pauseID is the stored pause the attempt is asked for ("" if none).
	pauseID string
	// gone are the ids of feedback messages that left the steering: to
	// the engine, or to the attempt's final commit.
	gone map[string]bool
}

// startSteering hands the attempt the signals pending on its task, once
// it knows which feedback the checkpoint it resumes from holds
// (skipCheckpointed): from then on the renewal rounds hand on what other
// replicas record. A round before that hands nothing — it could give the
// engine again a feedback its checkpoint holds — and the next round does.
func (x *execution) startSteering() {
	x.steer.mu.Lock()
	x.steer.ready = true
	x.steer.mu.Unlock()
	x.deliverStored(x.task.Signals) // pending since an earlier attempt
}

// deliverStored hands x the signals pending on its task that it has not
// taken yet, logging each one's event, and drops a stored pause that was
// withdrawn before it was delivered. Before startSteering it does nothing.
func (x *execution) deliverStored(pending []run.PendingSignal) {
	var fresh []run.PendingSignal
	st := &x.steer
	st.mu.Lock()
	if !st.ready {
		st.mu.Unlock()
		return
	}
	if st.relay.feedback == nil && len(pending) > 0 { // most runs have no signals
		st.relay.feedback, st.relay.gone = map[string]bool{}, map[string]bool{}
	}
	if id := st.relay.pauseID; id != "" && !slices.ContainsFunc(pending, func(p run.PendingSignal) bool { return p.ID == id }) {
		st.relay.pauseID = ""
		if !st.armed {
			st.pause = false
		}
	}
	for _, p := range pending {
		switch {
		case p.Type == SignalPause && st.relay.pauseID != p.ID && !st.pause:
			st.pause, st.pauseNote, st.relay.pauseID = true, p.Text, p.ID
		case p.Type == SignalFeedback:
			if _, seen := st.relay.feedback[p.ID]; seen {
				continue
			}
			st.relay.feedback[p.ID] = false
			m := feedbackMessage(p.Text)
			m.ID, m.CreatedAt = p.ID, store.StoredTime(p.At)
			st.feedback = append(st.feedback, m)
		default:
			continue
		}
		fresh = append(fresh, p)
	}
	st.mu.Unlock()
	for _, p := range fresh {
		x.logSignal(Signal{Type: p.Type, Text: p.Text})
	}
}

// skipCheckpointed marks the stored feedback that checkpoint cp, which x
// resumes from, holds already: the engine took it in an earlier attempt.
func (x *execution) skipCheckpointed(cp *engine.Checkpoint) {
	if cp == nil || cp.Board == nil || len(x.task.Signals) == 0 {
		return
	}
	st := &x.steer
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.relay.feedback == nil {
		st.relay.feedback, st.relay.gone = map[string]bool{}, map[string]bool{}
	}
	for _, m := range cp.Board.Channels[engine.MainChannel] {
		if slices.ContainsFunc(x.task.Signals, func(p run.PendingSignal) bool { return p.ID == m.ID }) {
			st.relay.feedback[m.ID] = true
			st.relay.gone[m.ID] = true
		}
	}
}

// markGone records that feedback messages msgs left the steering.
// Callers hold x.steer.mu.
func (x *execution) markGone(msgs []model.Message) {
	for _, m := range msgs {
		if _, ok := x.steer.relay.feedback[m.ID]; ok {
			x.steer.relay.gone[m.ID] = true
		}
	}
}

// consumeCheckpointed removes from the task the stored feedback that
// checkpoint cp now holds. It is best effort: what it leaves, the final
// commit removes, or the next attempt recognises in its checkpoint.
func (x *execution) consumeCheckpointed(ctx context.Context, cp engine.Checkpoint) {
	st := &x.steer
	st.mu.Lock()
	var ids []string
	for _, m := range cp.Board.Channels[engine.MainChannel] {
		if held, ok := st.relay.feedback[m.ID]; ok && !held {
			st.relay.feedback[m.ID] = true
			ids = append(ids, m.ID)
		}
	}
	st.mu.Unlock()
	if len(ids) == 0 {
		return
	}
	if err := x.removeSignals(ctx, ids); err != nil {
		x.r.log.WarnContext(ctx, "taken feedback stays recorded on the task until the run's next commit", "run_id", x.runID, "err", err)
	}
}

// holdsRelayedFeedback reports whether cp's board holds relayed feedback
// that no durable checkpoint held yet (consumeCheckpointed would remove it).
func (x *execution) holdsRelayedFeedback(cp engine.Checkpoint) bool {
	st := &x.steer
	st.mu.Lock()
	defer st.mu.Unlock()
	for _, m := range cp.Board.Channels[engine.MainChannel] {
		if held, ok := st.relay.feedback[m.ID]; ok && !held {
			return true
		}
	}
	return false
}

// removeSignals removes the signals ids from x's task, provided x still
// holds the run's lease.
func (x *execution) removeSignals(ctx context.Context, ids []string) error {
	x.mu.Lock()
	l := x.leaseLocked()
	x.mu.Unlock()
	if l.RunID == "" {
		return nil // the final commit settles them
	}
	for range 5 {
		t, err := x.r.st.GetTask(ctx, x.runID)
		if err != nil {
			return err
		}
		keep := slices.DeleteFunc(slices.Clone(t.Signals), func(p run.PendingSignal) bool { return slices.Contains(ids, p.ID) })
		if len(keep) == len(t.Signals) {
			return nil
		}
		t.Signals = keep
		err = x.r.st.Apply(ctx, store.Change{UpdateTask: &t, Fences: []store.Lease{l}})
		if !errdefs.IsConflict(err) {
			return err
		}
	}
	return errdefs.Conflictf("task %s kept changing", x.runID)
}

// settleSignals decides, for the final commit of outcome o on task t, what
// becomes of the signals t holds: a run that goes on elsewhere (a
// handover) keeps those not taken for good; otherwise a pause ends here,
// and a feedback the attempt never handed on goes where the attempt's
// own untaken feedback goes — kept for the resumed attempt of a paused
// run, or into the transcript (after msgs) of a run that ends or asks.
func (x *execution) settleSignals(t *run.Task, o outcome, msgs []run.Message) []run.Message {
	if len(t.Signals) == 0 {
		return msgs
	}
	st := &x.steer
	st.mu.Lock()
	defer st.mu.Unlock()
	paused := o.state == run.StateInputRequired && o.prompt == nil
	var keep []run.PendingSignal
	for _, p := range t.Signals {
		switch {
		case o.state == run.StateWorking:
			if !st.relay.feedback[p.ID] { // not in a checkpoint yet
				keep = append(keep, p)
			}
		case p.Type != SignalFeedback || st.relay.gone[p.ID]:
		case paused:
			keep = append(keep, p)
		case !containsID(msgs, p.ID):
			msgs = slices.Clip(msgs) // the caller's msgs stay as they are
			m := feedbackMessage(p.Text)
			m.ID, m.CreatedAt = p.ID, store.StoredTime(p.At)
			msgs = append(msgs, run.Message{ContextID: x.contextID, TaskID: x.runID, Message: m})
		}
	}
	t.Signals = keep
	return msgs
}
