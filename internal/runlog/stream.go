package runlog

import (
	"context"
	"errors"
	"io"
	"time"

	"agentd/internal/errdefs"
	"agentd/internal/run"
)

// Stream reads one run's events after a seq: first what was missed (from
// memory or the store), then live events as they happen, each exactly once
// and in order (invariant 3). A Stream belongs to one reader goroutine.
type Stream struct {
	ls    *Logs
	runID string
	after int64
	log   *Log
	done  bool
	timer *time.Timer
}

// PollInterval bounds how long a reader of a run that executes elsewhere
// (another replica, or not at all right now) waits before looking at the
// store again; wake-ups make it shorter in practice.
const PollInterval = time.Second

// Open starts reading run's events after seq `after` (0 = from the
// beginning). It fails with NotFound for an unknown run and with Validation
// when after is negative or lies beyond the end of the log. Close the
// stream when done.
func (ls *Logs) Open(ctx context.Context, runID string, after int64) (*Stream, error) {
	if after < 0 {
		return nil, errdefs.Validationf("event cursor %d is negative", after)
	}
	l, err := ls.Acquire(ctx, runID)
	if err != nil {
		return nil, err
	}
	l.mu.Lock()
	last := l.last()
	l.mu.Unlock()
	if after > last {
		page, err := ls.st.ReadEvents(ctx, runID, after, 1)
		if err == nil && page.LastSeq > last {
			last = page.LastSeq
		}
		if after > last {
			ls.Release(l)
			return nil, errdefs.Validationf("event cursor %d is beyond the end of run %s (last seq %d)", after, runID, last)
		}
	}
	return &Stream{ls: ls, runID: runID, after: after, log: l}, nil
}

// After returns the seq of the last event read.
func (s *Stream) After() int64 { return s.after }

// Read returns up to max events after the cursor and advances it. When none
// are available it returns a channel that is closed when it is worth calling
// Read again (and ErrPoll when the store must be polled as well). It returns io.EOF once the run is terminal and
// its final run.end was read.
func (s *Stream) Read(ctx context.Context, max int) ([]run.Event, <-chan struct{}, error) {
	if s.done {
		return nil, nil, io.EOF
	}
	if max <= 0 {
		max = 256
	}
	res := s.log.read(s.after, max)
	if res.terminal > 0 && s.after >= res.terminal {
		s.done = true
		return nil, nil, io.EOF
	}
	if len(res.events) > 0 {
		s.after = res.events[len(res.events)-1].Seq
		return res.events, nil, nil
	}
	if res.fromStore || !res.active {
		evs, err := s.readStore(ctx, max, res)
		if err != nil || len(evs) > 0 {
			return evs, nil, err
		}
		if res.fromStore {
			return nil, nil, errdefs.Internalf("run %s: the store holds no events after seq %d although memory starts at %d", s.runID, s.after, res.storeThrough)
		}
		if done, err := s.finished(ctx); err != nil || done {
			if done {
				s.done = true
				err = io.EOF
			}
			return nil, nil, err
		}
		return nil, res.wait, ErrPoll
	}
	return nil, res.wait, nil
}

// ErrPoll is Read's word that the run executes elsewhere: look at the
// store again after PollInterval even if nothing wakes the reader (Next
// does).
var ErrPoll = errors.New("poll")

// Next blocks until at least one event is available, the run ended (io.EOF),
// ctx is done, or idle passed without events — then it returns (nil, nil) so
// the caller can send a keep-alive.
func (s *Stream) Next(ctx context.Context, max int, idle time.Duration) ([]run.Event, error) {
	deadline := time.Now().Add(idle)
	for {
		evs, wait, err := s.Read(ctx, max)
		poll := err == ErrPoll
		if poll {
			err = nil
		}
		if err != nil || len(evs) > 0 {
			return evs, err
		}
		d := time.Until(deadline)
		if d <= 0 {
			return nil, nil
		}
		if poll && d > PollInterval {
			d = PollInterval
		}
		if s.timer == nil {
			s.timer = time.NewTimer(d)
		} else {
			s.timer.Reset(d)
		}
		select {
		case <-ctx.Done():
			s.timer.Stop()
			return nil, ctx.Err()
		case <-wait:
			s.timer.Stop()
		case <-s.timer.C:
		}
	}
}

// EventDelta is the type of a run's output increments (tokens, tool calls
// and results): the first of an attempt is written at once (Log.Append).
const EventDelta = "delta"

// EventGap is the type of the event a reader gets in place of events that
// retention removed: they cannot be replayed.
const EventGap = "gap"

// GapData is the body of a gap event: events up to PrunedThrough were
// removed by retention.
type GapData struct {
	PrunedThrough int64 `json:"pruned_through"`
}

// readStore reads events the memory log does not hold: older than its base,
// or written by another replica.
func (s *Stream) readStore(ctx context.Context, max int, res readResult) ([]run.Event, error) {
	limit := max
	if res.fromStore && res.storeThrough-s.after < int64(limit) {
		limit = int(res.storeThrough - s.after)
	}
	page, err := s.ls.st.ReadEvents(ctx, s.runID, s.after, limit)
	if err != nil {
		return nil, err
	}
	var out []run.Event
	if page.PrunedThrough > s.after {
		now := time.Now()
		gap, _ := Encode(GapData{PrunedThrough: page.PrunedThrough}) // two ints always encode
		out = append(out, run.Event{RunID: s.runID, Seq: page.PrunedThrough, Type: EventGap, Time: now,
			Data: frame(s.runID, page.PrunedThrough, EventGap, now, gap)})
		s.after = page.PrunedThrough
	}
	for _, ev := range page.Events {
		if ev.Seq == s.after+1 {
			out = append(out, ev)
			s.after = ev.Seq
		}
	}
	return out, nil
}

// finished reports whether a run that is not executing here has reached its
// end: its task is terminal and the cursor is at its last event.
func (s *Stream) finished(ctx context.Context) (bool, error) {
	t, err := s.ls.st.GetTask(ctx, s.runID)
	if err != nil {
		return false, err
	}
	if !t.State.Terminal() {
		return false, nil
	}
	page, err := s.ls.st.ReadEvents(ctx, s.runID, s.after, 1)
	if err != nil {
		return false, err
	}
	return len(page.Events) == 0, nil
}

// Close releases the stream.
func (s *Stream) Close() {
	if s.log != nil {
		s.ls.Release(s.log)
		s.log = nil
	}
}

// Memory says where the stream's run log stands on this replica: base is
// the seq before the first event held in memory (older ones are read from
// the store), and active whether an attempt executes here.
func (s *Stream) Memory() (base int64, active bool) {
	s.log.mu.Lock()
	defer s.log.mu.Unlock()
	return s.log.base, s.log.active
}
