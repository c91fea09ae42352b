package a2a

import (
	"context"
	"encoding/json"
	"errors"
	"io"

	"agentd/internal/engine"
	"agentd/internal/run"
	"agentd/internal/runtime"
)

// The windows prime reads the log back in: the first is small (the answer
// boundary is usually a few events back), later ones double up to the
// last, so a long stretch costs few reads.
const (
	primeWindow    = 64
	primeWindowMax = 4096
)

// prime returns a translator in the state an unbroken stream's translator
// is in after the event at seq after: the answer open there, if any, under
// its id, and whether its next text replaces it (see translator). That
// state is fixed by the events since the last answer boundary (run.start,
// step.complete, step.error, run.end or a gap — but not an attempt cut
// short, its steps torn down with it, and the attempt resuming it: the
// answer it left open goes on), so
// prime reads the log backwards from after only to that boundary,
// classifying events by type (decoding only run.start and run.end), and
// then translates forwards from the boundary to after. The cost follows
// the distance to the boundary, never the length of the log.
//
// resumed says the client saw the stream up to after: the open answer is
// known to it (later chunks append), and a run.end at after that ended the
// stream ends it again. Otherwise the client joins now, and its first chunk
// of the open answer announces the artifact.
func (h *handler) prime(ctx context.Context, t run.Task, after int64, resumed bool) (*translator, error) {
	hi, w := after, int64(primeWindow)
	var since []run.Event // the events after the boundary, newest first
	for hi > 0 {
		lo := max(hi-w, 0)
		evs, err := h.readLog(ctx, t.ID, lo, hi)
		if err != nil {
			return nil, err
		}
		for i := len(evs) - 1; i >= 0; i-- {
			ev := evs[i]
			if ev.Seq > after {
				// Everything up to the cursor was pruned: the gap the
				// stream reads next closes whatever was open.
				return newTranslator(t), nil
			}
			if boundary(ev) {
				return replay(t, ev, since, after, resumed), nil
			}
			since = append(since, ev)
		}
		hi, w = lo, min(2*w, primeWindowMax)
	}
	return replay(t, run.Event{}, since, after, resumed), nil
}

// boundary reports whether ev closes every answer open before it.
func boundary(ev run.Event) bool {
	switch ev.Type {
	case runtime.EventStepComplete, runtime.EventGap:
		return true
	case runtime.EventStepError:
		return !cutStep(ev)
	case runtime.EventRunStart:
		var d runtime.RunStartData
		return json.Unmarshal(ev.Data, &d) != nil || d.Resumed != engine.SignalCrash
	case runtime.EventRunEnd:
		var d runtime.RunEndData
		return json.Unmarshal(ev.Data, &d) != nil || d.State != run.StateWorking
	}
	return false
}

// replay translates the boundary (Seq 0: none) and then since (newest
// first) into a fresh translator, discarding the updates, and sets what the
// client already holds.
func replay(t run.Task, bound run.Event, since []run.Event, after int64, resumed bool) *translator {
	x := newTranslator(t)
	if bound.Seq != 0 && (bound.Type != runtime.EventRunEnd || bound.Seq == after && resumed) {
		x.translate(bound)
	}
	for i := len(since) - 1; i >= 0; i-- {
		if !statusOnly(since[i].Type) {
			x.translate(since[i])
		}
	}
	if !resumed {
		x.sent, x.replace = false, false
	}
	return x
}

// readLog returns the run's events from seq lo+1 through hi, as a stream
// reads them (from memory or the store, a gap marker for pruned ones; the
// marker may lie beyond hi when everything up to hi was pruned).
func (h *handler) readLog(ctx context.Context, runID string, lo, hi int64) ([]run.Event, error) {
	st, err := h.s.rt.OpenStream(ctx, runID, lo)
	if err != nil {
		return nil, toA2AError(ctx, err)
	}
	defer st.Close()
	var out []run.Event
	for st.After() < hi {
		evs, err := st.Next(ctx, int(hi-st.After()), streamIdle)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, toA2AError(ctx, err)
		}
		for _, ev := range evs {
			if ev.Seq <= hi || ev.Type == runtime.EventGap {
				out = append(out, ev)
			}
		}
	}
	return out, nil
}
