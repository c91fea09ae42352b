package a2a

import (
	"context"
	"encoding/json"
	"errors"
	"io"

	"agentd/internal/runtime"
	"agentd/internal/store"
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
// its id. That state is fixed by the events since the last answer boundary
// (run.start, step.complete, step.error, run.end or a gap), so prime reads
// the log backwards from after only to that boundary, classifying events by
// type alone, and then decodes deltas forwards from the first one after it
// only until the first text delta, which opened the answer. The cost
// follows the distance to the boundary, never the length of the log.
//
// resumed says the client saw the stream up to after: the open answer is
// known to it (later chunks append), and a run.end at after that ended the
// stream ends it again. Otherwise the client joins now, and its first chunk
// of the open answer announces the artifact.
func (h *handler) prime(ctx context.Context, t store.Task, after int64, resumed bool) (*translator, error) {
	x := newTranslator(t)
	hi, w := after, int64(primeWindow)
	var firstDelta int64 // the earliest delta after the boundary seen so far
	for hi > 0 {
		lo := max(hi-w, 0)
		evs, err := h.readLog(ctx, t.ID, lo, hi)
		if err != nil {
			return nil, err
		}
		for i := len(evs) - 1; i >= 0; i-- {
			ev := evs[i]
			switch ev.Type {
			case runtime.EventDelta:
				firstDelta = ev.Seq
				continue
			case runtime.EventRunStart, runtime.EventStepComplete, runtime.EventStepError, runtime.EventGap:
			case runtime.EventRunEnd:
				if ev.Seq == after && resumed {
					x.translate(ev)
				}
			default:
				continue
			}
			if ev.Seq > after {
				// Everything up to the cursor was pruned: the gap the
				// stream reads next closes whatever was open.
				return x, nil
			}
			return x, h.openAnswer(ctx, x, t.ID, firstDelta, after, resumed)
		}
		hi, w = lo, min(2*w, primeWindowMax)
	}
	return x, h.openAnswer(ctx, x, t.ID, firstDelta, after, resumed)
}

// openAnswer opens x's answer at the first text delta of the log from seq
// from through after (a stretch without answer boundaries), if there is one.
func (h *handler) openAnswer(ctx context.Context, x *translator, runID string, from, after int64, resumed bool) error {
	if from == 0 {
		return nil
	}
	var body struct {
		Text string `json:"text"`
	}
	for lo := from - 1; lo < after; {
		hi := min(lo+primeWindow, after)
		evs, err := h.readLog(ctx, runID, lo, hi)
		if err != nil {
			return err
		}
		for _, ev := range evs {
			if ev.Type != runtime.EventDelta || ev.Seq > after {
				continue
			}
			body.Text = ""
			if json.Unmarshal(ev.Data, &body) == nil && body.Text != "" {
				x.answer, x.sent = x.answerID(ev.Seq), resumed
				return nil
			}
		}
		lo = hi
	}
	return nil
}

// readLog returns the run's events from seq lo+1 through hi, as a stream
// reads them (from memory or the store, a gap marker for pruned ones; the
// marker may lie beyond hi when everything up to hi was pruned).
func (h *handler) readLog(ctx context.Context, runID string, lo, hi int64) ([]store.Event, error) {
	st, err := h.s.rt.OpenStream(ctx, runID, lo)
	if err != nil {
		return nil, toA2AError(err)
	}
	defer st.Close()
	var out []store.Event
	for st.After() < hi {
		evs, err := st.Next(ctx, int(hi-st.After()), streamIdle)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, toA2AError(err)
		}
		for _, ev := range evs {
			if ev.Seq <= hi || ev.Type == runtime.EventGap {
				out = append(out, ev)
			}
		}
	}
	return out, nil
}
